"""Flash-Decoding (gpuperf.kernels.decode) against its float64 reference and SDPA; the bottom-right
causal mask of the forward kernel (chunked prefill) against float64 and SDPA's ``causal_lower_right``.

On the CPU the kernels run through Triton's interpreter at small sizes; on a GPU the same tests run
compiled, plus the full-size ones marked ``gpu``."""

import pytest
import torch

from gpuperf import decoding
from gpuperf.kernels import decode as dk
from gpuperf.kernels import flash_attention as fa

GPU = torch.cuda.is_available()
DTYPES = [torch.float16] + ([torch.bfloat16] if GPU else [])
#: Error bound on O relative to max |V| (P and O rounded in the storage dtype), and on the log-sum-exp.
TOL_O = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2}
TOL_LSE = 1e-4


def _make(gen, device, dtype, lens, n_q, h_q, h_kv, d, page_size=None, layout="bnhd", spare=3):
    """q, k_cache, v_cache, cache_seqlens, block_table (None for a contiguous cache). Paged: pages
    shuffled, each sequence with a spare page past its length, the pool with spare pages never used;
    contiguous: ``spare`` rows past the longest length."""
    b = len(lens)
    rnd = lambda *s: torch.randn(*s, generator=gen, device=device).to(dtype)  # noqa: E731
    q = rnd(b, n_q, h_q, d)
    n_max = max(lens)
    if page_size:
        max_pages = -(-n_max // page_size) + 1
        num_pages = b * max_pages + spare
        k, v = rnd(num_pages, page_size, h_kv, d), rnd(num_pages, page_size, h_kv, d)
        perm = torch.randperm(num_pages, generator=torch.Generator().manual_seed(gen.initial_seed() % 2**31))
        table = perm[:b * max_pages].reshape(b, max_pages).to(device=device, dtype=torch.int32)
    else:
        shape = (b, n_max + spare, h_kv, d) if layout == "bnhd" else (b, h_kv, n_max + spare, d)
        k, v, table = rnd(*shape), rnd(*shape), None
    return q, k, v, torch.tensor(lens, dtype=torch.int32, device=device), table


def _check(gen, q, k, v, lens, table, layout="bnhd", causal=False, n_splits=None):
    o, lse = dk.decode_attention(q, k, v, lens, block_table=table, layout=layout, causal=causal,
                                 n_splits=n_splits, return_lse=True)
    ref_o, ref_lse = dk.decode_reference(q, k, v, lens, block_table=table, layout=layout, causal=causal)
    seed = gen.initial_seed()
    assert o.shape == q.shape and o.dtype == q.dtype and lse.shape == q.shape[:3]
    assert torch.isfinite(o).all() and torch.isfinite(lse).all(), f"non-finite (seed {seed})"
    err_o = (o.double().cpu() - ref_o).abs().max().item()
    err_l = (lse.double().cpu() - ref_lse).abs().max().item()
    assert err_o <= TOL_O[q.dtype] * max(1.0, v.abs().max().item()), f"O error {err_o} (seed {seed})"
    assert err_l <= TOL_LSE * max(1.0, ref_lse.abs().max().item()), f"lse error {err_l} (seed {seed})"


# (lengths, N_q, H_q, H_kv, d, page size or None, layout, causal, n_splits): awkward lengths (1, 17, 4097),
# ragged batches, pages partly filled, tiles spanning pages (page 16 < the tile), GQA 1/4/8, 1/4/16 rows.
CASES = [
    ([1], 1, 1, 1, 64, None, "bnhd", False, None),
    ([17], 1, 4, 1, 64, None, "bnhd", False, 1),
    ([17, 4, 40], 4, 8, 2, 64, None, "bhnd", True, 2),
    ([4097], 1, 8, 1, 64, None, "bnhd", False, 7),
    ([100, 33], 16, 2, 2, 32, None, "bnhd", True, 3),
    ([1, 17, 64, 65], 1, 4, 1, 64, 16, "bnhd", False, 5),
    ([70, 33], 4, 8, 2, 64, 64, "bnhd", True, 2),
    ([129, 16], 16, 8, 1, 128, 32, "bnhd", True, None),
    ([300], 1, 2, 2, 128, 128, "bnhd", False, 64),
    ([47, 200, 1], 1, 16, 2, 64, 16, "bnhd", False, None),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-nq{c[1]}-g{c[2] // c[3]}-p{c[5]}-{c[6]}-S{c[8]}")
def test_decode_matches_float64(device, gen, case):
    lens, n_q, h_q, h_kv, d, page, layout, causal, n_splits = case
    q, k, v, sl, table = _make(gen, device, torch.float16, lens, n_q, h_q, h_kv, d, page, layout)
    _check(gen, q, k, v, sl, table, layout, causal, n_splits)


@pytest.mark.parametrize("merge", dk.MERGES)
def test_decode_split_counts_agree(device, gen, merge):
    # every split count, empty splits included (S > tiles), gives the same answer as no split, with the
    # merge fused into the last program or in its own kernel
    q, k, v, sl, table = _make(gen, device, torch.float16, [50, 97], 4, 8, 2, 64, 16)
    want, want_lse = dk.decode_attention(q, k, v, sl, block_table=table, n_splits=1, return_lse=True)
    for s in (2, 3, 5, 16):
        for _ in range(2):  # twice: the fused merge's counters must be back at zero
            got, lse = dk.decode_attention(q, k, v, sl, block_table=table, n_splits=s, merge=merge,
                                           return_lse=True)
            assert (got.double() - want.double()).abs().max().item() < 2e-3, f"n_splits={s} ({gen.initial_seed()})"
            assert (lse - want_lse).abs().max().item() < 1e-4


def test_decode_views_and_int_lengths(device, gen):
    # a cache that is a view into a wider buffer (strided), q a transposed SDPA-layout tensor, int lengths
    q, k, v, _, _ = _make(gen, device, torch.float16, [40, 40], 1, 4, 4, 64, None, "bhnd")
    wide = torch.cat([k, v], dim=1)  # (B, 2 H_kv, N, d): k_cache and v_cache are strided views
    q_sdpa = q.transpose(1, 2).contiguous()  # (B, H, N_q, d)
    o = dk.decode_attention(q_sdpa.transpose(1, 2), wide[:, :4], wide[:, 4:], 40, layout="bhnd", n_splits=2)
    ref = torch.nn.functional.scaled_dot_product_attention(
        q_sdpa.float(), k[:, :, :40].float(), v[:, :, :40].float())
    assert (o.transpose(1, 2).float() - ref).abs().max().item() < 2e-3


def test_decode_errors(device, gen):
    q, k, v, sl, table = _make(gen, device, torch.float16, [20, 30], 1, 4, 2, 64, 16)
    call = lambda **kw: dk.decode_attention(**{"q": q, "k_cache": k, "v_cache": v,  # noqa: E731
                                               "cache_seqlens": sl, "block_table": table, **kw})
    bad_table = table.clone()
    bad_table[1, 0] = k.shape[0]
    with pytest.raises(ValueError, match="block_table must hold page indices"):
        call(block_table=bad_table)
    with pytest.raises(ValueError, match="capacity"):
        call(cache_seqlens=torch.tensor([20, 16 * table.shape[1] + 1], dtype=torch.int32, device=device))
    with pytest.raises(ValueError, match="cache_seqlens must be >= 1"):
        call(cache_seqlens=torch.tensor([0, 3], dtype=torch.int32, device=device))
    with pytest.raises(ValueError, match="multiple of"):
        call(q=q[:, :, :3])
    with pytest.raises(ValueError, match="v_cache.dtype"):
        call(v_cache=v.float())
    with pytest.raises(ValueError, match="v_cache.shape"):
        call(v_cache=v[:-1])
    with pytest.raises(ValueError, match="head_dim"):
        call(q=q[..., :32])
    with pytest.raises(ValueError, match="block_table must be an int32"):
        call(block_table=table.long())
    with pytest.raises(ValueError, match="cache_seqlens must be an int"):
        call(cache_seqlens=sl.long())
    with pytest.raises(ValueError, match="n_splits"):
        call(n_splits=0)
    with pytest.raises(ValueError, match="merge"):
        call(merge="tree", n_splits=2)
    with pytest.raises(ValueError, match="layout"):
        call(block_table=None, layout="nhd")
    with pytest.raises(ValueError, match="query rows"):
        call(q=q.expand(2, 17, 4, 64))
    if dk.INTERPRETED:  # the interpreter refuses bf16 and names what the CPU takes: fp16, never fp32 here
        with pytest.raises(ValueError, match="use fp16 on the CPU"):
            call(q=q.bfloat16(), k_cache=k.bfloat16(), v_cache=v.bfloat16())


def test_choose_splits_follows_the_machine():
    # few (sequence, head) pairs: split until enough programs stream at once; many: no split at all
    few = dk.choose_splits(1, 8, 1, 65536, sm_count=132)
    full = dk.choose_splits(33, 12, 1, 65536, sm_count=132)  # 396 = 132 SMs x 3 programs
    assert few > 8 and full == 1
    kw = dict(sm_count=132, hbm_bytes_per_s=4.8e12, program_bytes_per_s=25e9)
    plans = [decoding.split_waves_time(8, 65536, s, **kw) for s in (1, few)]
    assert plans[1].time_s < plans[0].time_s / 8
    # Little's law: 8 programs at 25 GB/s each, against the bandwidth shared by 8 x few programs
    assert plans[0].time_s == pytest.approx(1e-6 + 1024 * 32768 / 25e9)
    assert plans[1].programs == 8 * few and plans[1].waves == 1


# ---- the forward kernel's bottom-right causal mask (chunked prefill) ----


@pytest.mark.parametrize("n_q,n_k", [(1, 1), (17, 80), (33, 33), (40, 97)])
def test_forward_bottom_right_causal(device, gen, n_q, n_k):
    mk = lambda n: torch.randn(1, 2, n, 64, generator=gen, device=device).half()  # noqa: E731
    q, k, v = mk(n_q), mk(n_k), mk(n_k)
    o, lse = fa.flash_attention_forward(q, k, v, True, causal_alignment="bottom_right")
    ref_o, ref_lse = fa.attention_reference(q, k, v, True, causal_alignment="bottom_right")
    assert (o.double().cpu() - ref_o).abs().max().item() < 2e-3 * max(1.0, v.abs().max().item())
    assert (lse.double().cpu() - ref_lse).abs().max().item() < 2e-3 * max(1.0, ref_lse.abs().max().item())
    from torch.nn.attention.bias import causal_lower_right

    sdpa = torch.nn.functional.scaled_dot_product_attention(
        q.double().cpu(), k.double().cpu(), v.double().cpu(), attn_mask=causal_lower_right(n_q, n_k))
    assert (ref_o - sdpa).abs().max().item() < 1e-12  # the reference means what SDPA means
    with pytest.raises(ValueError, match="N_q <= N_k"):
        fa.flash_attention_forward(mk(n_k + 1), k, v, True, causal_alignment="bottom_right")
    with pytest.raises(ValueError, match="causal_alignment"):
        fa.flash_attention_forward(q, k, v, True, causal_alignment="lower_right")


# ---- full size, GPU only ----


@pytest.mark.gpu
@pytest.mark.skipif(not GPU, reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("page", [None, 16, 256])
def test_decode_full_size_gpu(gen, dtype, page):
    lens = [131072, 8191, 1, 65537]
    q, k, v, sl, table = _make(gen, "cuda", dtype, lens, 1, 32, 8, 128, page)
    _check(gen, q, k, v, sl, table)
    o = dk.decode_attention(q, k, v, sl, block_table=table, merge="kernel")
    assert (o.float() - dk.decode_attention(q, k, v, sl, block_table=table).float()).abs().max().item() < 2e-3


@pytest.mark.gpu
@pytest.mark.skipif(not GPU, reason="needs a CUDA GPU")
@pytest.mark.parametrize("n_q,h_q,h_kv,d", [(4, 32, 4, 128), (16, 8, 8, 64), (1, 64, 8, 64)])
def test_decode_rows_and_groups_gpu(gen, n_q, h_q, h_kv, d):
    q, k, v, sl, table = _make(gen, "cuda", torch.bfloat16, [4097, 300, 20000], n_q, h_q, h_kv, d, 64)
    _check(gen, q, k, v, sl, table, causal=True)
    q, k, v, sl, _ = _make(gen, "cuda", torch.float16, [8192] * 2, n_q, h_q, h_kv, d, None, "bhnd")
    _check(gen, q, k, v, sl, None, layout="bhnd")


def test_decode_plan_reuses_launch_not_data(device, gen):
    # a second call with the same shapes takes the planned launch; fresh data must still give fresh results
    q, k, v, sl, table = _make(gen, device, torch.float16, [33, 64], 1, 4, 2, 64, 16)
    first = dk.decode_attention(q, k, v, sl, block_table=table, n_splits=3, check_indices=False)
    k2 = torch.randn_like(k.float()).to(k.dtype)
    second = dk.decode_attention(q, k2, v, sl, block_table=table, n_splits=3, check_indices=False)
    ref, _ = dk.decode_reference(q, k2, v, sl, block_table=table)
    assert (second.double().cpu() - ref).abs().max().item() < 2e-3 * max(1.0, v.abs().max().item())
    assert not torch.equal(first, second)
    o = dk.decode_attention(q, k, v, 64, block_table=None if table is None else table, n_splits=1,
                            check_indices=False)
    assert o.shape == q.shape


def test_rows_that_see_no_key_agree_across_merges(device, gen):
    # causal, N_q = 4 rows against 2 keys, unchecked: rows 0 and 1 see no key; every path gives 0, lse -inf
    q, k, v, sl, _ = _make(gen, device, torch.float16, [2], 4, 2, 2, 32)
    outs = [dk.decode_attention(q, k, v, sl, causal=True, n_splits=s, merge=m, return_lse=True,
                                check_indices=False) for s, m in ((1, "fused"), (2, "fused"), (2, "kernel"))]
    for o, lse in outs:
        assert not torch.isnan(o).any()
        assert (o[:, :2] == 0).all() and torch.isinf(lse[:, :2]).all()
        assert torch.equal(o[:, 2:], outs[0][0][:, 2:]) or (o[:, 2:] - outs[0][0][:, 2:]).abs().max() < 2e-3


def test_too_many_sequences_and_heads_for_the_grid(device):
    q = torch.zeros(65536, 1, 1, 32, device=device, dtype=torch.float16)
    k = torch.zeros(65536, 1, 1, 32, device=device, dtype=torch.float16)
    with pytest.raises(ValueError, match="65535"):
        dk.decode_attention(q, k, k, 1)
