"""FlashAttention forward (Triton) and the tiled PyTorch version against float64 and SDPA."""

import math

import pytest
import torch

from gpuperf.kernels import flash_attention as fa

GPU = torch.cuda.is_available()
DTYPES = [torch.float32, torch.float16] + ([torch.bfloat16] if GPU else [])
# Error bound on O relative to max |V|: the rounding of P (and of O) in the storage dtype dominates.
TOL_O = {torch.float32: 2e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}  # about 4 u
TOL_LSE = {torch.float32: 2e-5, torch.float16: 2e-3, torch.bfloat16: 2e-2}


def _inputs(gen, device, dtype, b, h, n_q, n_k, d):
    mk = lambda n: torch.randn(b, h, n, d, generator=gen, device=device).to(dtype)  # noqa: E731
    return mk(n_q), mk(n_k), mk(n_k)


def _check(o, lse, q, k, v, causal, scale, seed, tol_scale=1.0):
    ref_o, ref_lse = fa.attention_reference(q, k, v, causal, scale)
    assert o.shape == q.shape and o.dtype == q.dtype
    assert lse.shape == q.shape[:3] and lse.dtype == torch.float32
    assert not torch.isnan(o).any() and not torch.isnan(lse).any(), f"NaN (seed {seed})"
    err_o = (o.double().cpu() - ref_o).abs().max().item()
    err_l = (lse.double().cpu() - ref_lse).abs().max().item()
    tol_o = TOL_O[q.dtype] * tol_scale * max(1.0, v.abs().max().item())
    assert err_o <= tol_o, f"O error {err_o} > {tol_o} (seed {seed})"
    assert err_l <= TOL_LSE[q.dtype] * tol_scale * max(1.0, ref_lse.abs().max().item()), \
        f"lse error {err_l} (seed {seed})"


SHAPES_CPU = [(1, 1, 1, 1, 16), (2, 3, 97, 97, 64), (1, 2, 65, 130, 32), (1, 1, 130, 65, 128),
              (1, 1, 64, 64, 64)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", SHAPES_CPU)
def test_forward_matches_float64(device, gen, dtype, causal, shape):
    b, h, n_q, n_k, d = shape
    q, k, v = _inputs(gen, device, dtype, b, h, n_q, n_k, d)
    o, lse = fa.flash_attention_forward(q, k, v, causal)
    _check(o, lse, q, k, v, causal, None, gen.initial_seed())


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_forward_long_awkward_sequence(device, gen, dtype, causal):
    # N = 1025: one key past a multiple of every block size, the masked tail block on its own.
    q, k, v = _inputs(gen, device, dtype, 1, 1, 1025, 1025, 16)
    o, lse = fa.flash_attention_forward(q, k, v, causal)
    _check(o, lse, q, k, v, causal, None, gen.initial_seed())


@pytest.mark.parametrize("causal", [False, True])
def test_forward_matches_sdpa_and_scale(device, gen, causal):
    q, k, v = _inputs(gen, device, torch.float32, 2, 2, 70, 70, 32)
    o, _ = fa.flash_attention_forward(q, k, v, causal, softmax_scale=0.3)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=0.3)
    assert torch.allclose(o, ref, atol=1e-5, rtol=1e-4), f"seed {gen.initial_seed()}"


def test_forward_small_blocks_many_iterations(device, gen):
    # 16 x 16 tiles: many unmasked and masked key blocks per program, N_q != N_k, both masks.
    q, k, v = _inputs(gen, device, torch.float32, 1, 2, 50, 83, 16)
    for causal in (False, True):
        o, lse = fa.flash_attention_forward(q, k, v, causal, config=(16, 16, 4, 1))
        _check(o, lse, q, k, v, causal, None, gen.initial_seed())


def test_forward_large_scores_stay_finite(device):
    # Scores of +-1e4 overflow exp() without the running max.
    q = torch.zeros(1, 1, 40, 16, device=device)
    q[..., 0] = 100.0
    k = torch.randn(1, 1, 40, 16, device=device, generator=torch.Generator(device).manual_seed(1)) * 100
    v = torch.randn_like(k)
    o, lse = fa.flash_attention_forward(q, k, v, softmax_scale=1.0)
    _check(o, lse, q, k, v, False, 1.0, 1)


# Small tiles under the interpreter; on a GPU launches of the H200 sweeps (64 or 128 rows, a register cap).
HOST_CONFIGS = ([fa.HopperConfig(32, 16, 4, 1), fa.HopperConfig(32, 32, 4, 1), fa.HopperConfig(16, 16, 4, 1)]
                if not GPU else
                [fa.HopperConfig(128, 64, 8, 2, maxnreg=128), fa.HopperConfig(128, 128, 8, 3),
                 fa.HopperConfig(64, 64, 4, 3), fa.HopperConfig(128, 64, 4, 3, maxnreg=168),
                 fa.HopperConfig(64, 128, 4, 2)])


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("cfg", HOST_CONFIGS, ids=lambda c: "-".join(map(str, c)))
def test_host_descriptor_kernel_matches_float64(device, gen, causal, cfg):
    # The Hopper kernel's logic (descriptors over all heads' rows, the masked ragged end of K/V that reads
    # the next head's rows, the causal diagonal, longest rows first); under the interpreter on a CPU.
    if device == "cuda" and torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the host-descriptor kernel needs compute capability 9.x")
    r, d = (4, 64) if GPU else (1, 16)  # bigger shapes on a GPU, for its bigger tiles
    for b, h, n_q, n_k in ((2, 3, 64, 64), (1, 2, 96, 50), (2, 1, 32, 1), (1, 2, 32, 77)):
        n_q = -(-n_q * r // cfg.block_m) * cfg.block_m
        q, k, v = _inputs(gen, device, torch.float16, b, h, n_q, n_k * r if n_k > 1 else 1, d)
        o, lse = fa.flash_attention_forward(q, k, v, causal, variant="tma_host", hopper=cfg)
        _check(o, lse, q, k, v, causal, None, gen.initial_seed())


@pytest.mark.parametrize("causal", [False, True])
def test_host_descriptor_kernel_ragged_queries_match_float64(device, gen, causal):
    # N_q not a multiple of BLOCK_M: Q and O through per-head 3-D descriptors, whose bounds TMA checks, so
    # the last block's rows past N_q neither read the next head's queries into the output nor overwrite
    # the next head's rows (several heads; every row compared with the float64 reference).
    if device == "cuda" and torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the host-descriptor kernel needs compute capability 9.x")
    cfg, d = (fa.HopperConfig(128, 64, 4, 3), 64) if GPU else (fa.HopperConfig(32, 16, 4, 1), 16)
    m = cfg.block_m
    for b, h, n_q, n_k in ((2, 3, m + 7, m + 7), (1, 2, 1, 50), (2, 2, 3 * m - 1, 2 * m + 3),
                           (1, 3, m // 2 + 1, 1)):
        q, k, v = _inputs(gen, device, torch.float16, b, h, n_q, n_k, d)
        o, lse = fa.flash_attention_forward(q, k, v, causal, variant="tma_host", hopper=cfg)
        _check(o, lse, q, k, v, causal, None, gen.initial_seed())


def test_host_descriptor_kernel_checks(device):
    q = torch.randn(1, 2, 40, 16, device=device).half()
    with pytest.raises(ValueError, match="fp16 or bf16"):
        fa.flash_attention_forward(q.float(), q.float(), q.float(), variant="tma_host")
    with pytest.raises(ValueError, match="variant"):
        fa.flash_attention_forward(q, q, q, variant="tma")
    with pytest.raises(ValueError, match="hopper"):
        fa.flash_attention_forward(q, q, q, hopper=(128, 64, 8, 3))
    with pytest.raises(ValueError, match="use_tma"):
        fa.flash_attention_forward(q, q, q, use_tma=1)
    # a launch override for a kernel that does not run is an error, not silently ignored
    with pytest.raises(ValueError, match="hopper"):
        fa.flash_attention_forward(q, q, q, variant="pointer", hopper=fa.HopperConfig(32, 16, 4, 1))
    with pytest.raises(ValueError, match="config"):
        fa.flash_attention_forward(q, q, q, variant="tma_host", hopper=fa.HopperConfig(8, 16, 4, 1),
                                   config=(32, 16, 4, 1))
    if fa.INTERPRETED:
        with pytest.raises(ValueError, match="tma_device"):
            fa.flash_attention_forward(q, q, q, variant="tma_device")


def test_descriptor_variants_need_aligned_inputs(device, gen):
    # A contiguous view that starts 2 bytes into its buffer: TMA cannot read it (16-byte aligned bases only).
    # The default path takes the pointer kernel; a forced descriptor variant raises instead of crashing.
    b, h, n, d = 1, 2, 64, 16
    buf = torch.randn(3 * b * h * n * d + 1, generator=gen, device=device).half()
    q, k, v = (buf[1 + i * b * h * n * d:1 + (i + 1) * b * h * n * d].view(b, h, n, d) for i in range(3))
    assert q.is_contiguous() and q.data_ptr() % 16 == 2 and not fa._tma_aligned(q, k, v)
    with pytest.raises(ValueError, match="16-byte"):
        fa.flash_attention_forward(q, k, v, variant="tma_host", hopper=fa.HopperConfig(32, 16, 4, 1))
    with pytest.raises(ValueError, match="use_tma"):
        fa.flash_attention_forward(q, k, v, use_tma=True)
    for causal in (False, True):
        o, lse = fa.flash_attention_forward(q, k, v, causal)
        _check(o, lse, q, k, v, causal, None, gen.initial_seed())


def test_variant_choice_on_hopper(monkeypatch):
    # The dispatch logic of the default path, as it runs on a compute capability 9.x GPU (the availability
    # probes patched), on the CPU: every branch of _choose_variant and every entry of HOPPER_CONFIGS.
    # The inputs are CPU tensors on a GPU machine too: let the input checks take them as the interpreter does.
    monkeypatch.setattr(fa, "INTERPRETED", True)
    monkeypatch.setattr(fa, "_tma_available", lambda device: True)
    monkeypatch.setattr(fa, "_host_descriptors_available", lambda device: True)
    cpu, f16, b16, f32 = torch.device("cpu"), torch.float16, torch.bfloat16, torch.float32
    cfg = fa.HopperConfig(128, 64, 4, 3)
    choose = fa._choose_variant
    assert choose(cpu, f16, 256, 300, cfg) == choose(cpu, b16, 256, 1, cfg) == "tma_host"
    # N_q not a multiple of the query block: the same kernel, with per-head Q and O descriptors
    assert choose(cpu, f16, 300, 300, cfg) == choose(cpu, f16, 300, fa.TMA_MIN_KEYS, cfg) == "tma_host"
    assert choose(cpu, f16, 300, 300, cfg, use_tma=True) == "tma_host"
    assert choose(cpu, f32, 256, 300, cfg) == "pointer" and choose(cpu, f32, 256, 9000, cfg) == "tma_device"
    assert choose(cpu, f16, 256, 9000, cfg, use_tma=True, aligned=False) == "pointer"
    # a config= launch belongs to the pointer and device-descriptor kernels: the choice stays with them
    assert choose(cpu, f16, 256, 300, cfg, host_ok=False) == "pointer"
    assert choose(cpu, f16, 256, 300, cfg, use_tma=True, host_ok=False) == "tma_device"
    monkeypatch.setattr(fa, "_host_descriptors_available", lambda device: False)  # a Triton without them
    assert choose(cpu, f16, 256, 9000, cfg) == "tma_device" and choose(cpu, f16, 256, 300, cfg) == "pointer"
    monkeypatch.setattr(fa, "_host_descriptors_available", lambda device: True)
    # default_launch reports the table's launch for every (d, mask) and each side of every N_k threshold
    for (d, causal), entries in fa.HOPPER_CONFIGS.items():
        for n_k in sorted({1, 16384} | {n + e for n, _ in entries if n is not None for e in (0, 1)}):
            q = torch.zeros(1, 2, 256, d, dtype=f16)
            k = torch.zeros(1, 2, n_k, d, dtype=f16)
            assert fa.default_launch(q, k, causal) == ("tma_host", list(fa.hopper_config(d, causal, n_k)))
        q = torch.zeros(1, 2, 100, d, dtype=f16)  # 100 rows: no tile divides them (per-head descriptors)
        assert fa.default_launch(q, q, causal)[0] == "tma_host"
        assert fa.default_launch(q.float(), q.float(), causal)[0] == "pointer"


def test_hopper_table_covers_every_head_dim():
    for d in fa.SUPPORTED_HEAD_DIMS:
        for causal in (False, True):
            entries = fa.HOPPER_CONFIGS[(d, causal)]
            assert entries[-1][0] is None  # every N_k has a launch
            limits = [n for n, _ in entries[:-1]]
            assert limits == sorted(limits)
            for n_k in (1, 1024, 1025, 2048, 2049, 4096, 4097, 16384):
                cfg = fa.hopper_config(d, causal, n_k)
                assert cfg.block_m % 16 == 0 and cfg.block_n % 16 == 0 and cfg.num_warps in (4, 8)
    assert fa.hopper_config(64, False, 1024).maxnreg == 168 and fa.hopper_config(64, False, 1025).maxnreg is None


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("block", [(16, 16), (64, 32), (7, 5)])
def test_tiled_torch_matches_float64(causal, block):
    gen = torch.Generator().manual_seed(7)  # a CPU generator: this test runs on the CPU on every machine
    q, k, v = _inputs(gen, "cpu", torch.float64, 2, 2, 97, 61, 24)
    o, lse = fa.attention_tiled_torch(q, k, v, causal, block_rows=block[0], block_cols=block[1])
    ref_o, ref_lse = fa.attention_reference(q, k, v, causal)
    assert torch.allclose(o, ref_o, atol=1e-12) and torch.allclose(lse, ref_lse, atol=1e-12)


def test_reference_agrees_with_sdpa():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 2, 33, 8, generator=g, dtype=torch.float64) for _ in range(3))
    for causal in (False, True):
        o, lse = fa.attention_reference(q, k, v, causal)
        assert torch.allclose(o, torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal))
    # lse of one row by hand
    s = (q[0, 0, 5] @ k[0, 0].T) / math.sqrt(8)
    assert math.isclose(fa.attention_reference(q, k, v)[1][0, 0, 5].item(), torch.logsumexp(s, 0).item())


def test_attention_flop():
    assert fa.attention_flop(1, 1, 4096, 4096, 64, False) == 4 * 4096 * 4096 * 64
    assert fa.attention_flop(2, 3, 10, 20, 16, True) == 2 * 2 * 3 * 10 * 20 * 16


def test_validation(device):
    q = torch.randn(1, 2, 8, 64, device=device)
    with pytest.raises(ValueError, match="head_dim"):
        fa.flash_attention_forward(q[..., :48].contiguous(), q[..., :48].contiguous(), q[..., :48].contiguous())
    with pytest.raises(ValueError, match="k.dtype"):
        fa.flash_attention_forward(q, q.half(), q)
    with pytest.raises(ValueError, match="k.shape"):
        fa.flash_attention_forward(q, torch.randn(1, 3, 8, 64, device=device), q)
    with pytest.raises(ValueError, match="v.shape"):
        fa.flash_attention_forward(q, q, torch.randn(1, 2, 9, 64, device=device))
    with pytest.raises(ValueError, match="q must have 4 dims"):
        fa.flash_attention_forward(q[0], q, q)
    with pytest.raises(ValueError, match="contiguous"):
        fa.flash_attention_forward(q.transpose(1, 2), q, q)
    with pytest.raises(ValueError, match="q.dtype"):
        fa.flash_attention_forward(q.double(), q.double(), q.double())
    with pytest.raises(ValueError, match="fp32_precision"):
        fa.flash_attention_forward(q, q, q, fp32_precision="tf16")
    with pytest.raises(ValueError, match="softmax_scale"):
        fa.flash_attention_forward(q, q, q, softmax_scale=-1.0)
    with pytest.raises(ValueError, match="causal"):
        fa.flash_attention_forward(q, q, q, causal=1)
    with pytest.raises(ValueError, match="N_k"):
        fa.flash_attention_forward(q, q[:, :, :0], q[:, :, :0])
    with pytest.raises(ValueError, match="block_rows"):
        fa.attention_tiled_torch(q, q, q, block_rows=0)
    if fa.INTERPRETED:
        with pytest.raises(ValueError, match="bfloat16"):
            fa.flash_attention_forward(q.bfloat16(), q.bfloat16(), q.bfloat16())
        with pytest.raises(ValueError, match="use_tma"):
            fa.flash_attention_forward(q, q, q, use_tma=True)


def test_empty_queries(device):
    q = torch.randn(1, 2, 0, 32, device=device)
    k = torch.randn(1, 2, 5, 32, device=device)
    o, lse = fa.flash_attention_forward(q, k, k)
    assert o.shape == (1, 2, 0, 32) and lse.shape == (1, 2, 0)


# ---- GPU only: every dtype and head dim, awkward lengths, both kernel variants, TF32 vs IEEE ----

gpu = pytest.mark.skipif(not GPU, reason="needs a CUDA GPU")


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("d", [16, 32, 64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("use_tma", [False, True])
def test_forward_gpu_all(gen, dtype, d, causal, use_tma):
    if use_tma and torch.cuda.get_device_capability()[0] != 9:
        pytest.skip("the TMA variant needs compute capability 9.x")
    for b, h, n_q, n_k in ((2, 3, 1, 1), (1, 2, 97, 97), (2, 2, 1025, 1025), (1, 3, 128, 300),
                           (1, 2, 300, 128), (1, 1, 2049, 2049)):
        q, k, v = _inputs(gen, "cuda", dtype, b, h, n_q, n_k, d)
        o, lse = fa.flash_attention_forward(q, k, v, causal, use_tma=use_tma)
        _check(o, lse, q, k, v, causal, None, gen.initial_seed())
        if dtype != torch.float32 and n_q == n_k:
            ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
            assert (o.float() - ref.float()).abs().max().item() <= 2 * TOL_O[dtype] * v.abs().max().item()


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_forward_gpu_default_path_tile_multiples(gen, dtype, d, causal):
    # N_q a multiple of 128: the default path takes the host-descriptor kernel on Hopper (its table entry,
    # e.g. a register cap); ragged N_k, one key, and several heads whose rows abut. N_k = 1100, 2100 and
    # 4200 reach every entry of HOPPER_CONFIGS (past 1024 and 2048 at d = 64, past 2048 at d = 128 full,
    # past 4096 at d = 128 causal).
    for b, h, n_q, n_k in ((2, 3, 256, 256), (1, 2, 384, 300), (2, 2, 128, 1), (1, 3, 1024, 1100),
                           (1, 2, 2304, 2100), (1, 1, 4352, 4200)):
        q, k, v = _inputs(gen, "cuda", dtype, b, h, n_q, n_k, d)
        o, lse = fa.flash_attention_forward(q, k, v, causal)
        _check(o, lse, q, k, v, causal, None, gen.initial_seed())


@pytest.mark.gpu
@gpu
def test_fp32_precision_choice_gpu(gen):
    q, k, v = _inputs(gen, "cuda", torch.float32, 1, 2, 512, 512, 64)
    ref_o, _ = fa.attention_reference(q, k, v)
    err = {p: (fa.flash_attention_forward(q, k, v, fp32_precision=p)[0].double().cpu() - ref_o).abs().max().item()
           for p in fa.FP32_PRECISIONS}
    assert err["ieee"] < 1e-5 < err["tf32"] < 1e-2, err


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("causal", [False, True])
def test_default_path_long_keys_gpu(gen, causal):
    # N_k >= TMA_MIN_KEYS: the default path takes the TMA variant on Hopper; an odd length tests the tails.
    q, k, v = _inputs(gen, "cuda", torch.float16, 1, 2, 300, fa.TMA_MIN_KEYS + 77, 64)
    o, lse = fa.flash_attention_forward(q, k, v, causal)
    _check(o, lse, q, k, v, causal, None, gen.initial_seed())


def test_benchmark_ratio_helpers():
    from gpuperf.benchmark.family import attention as fam
    from gpuperf.results import attention as ra

    rows = [{"kernel": k, "dtype": "fp16", "head_dim": d, "mask": "full", "n_seq": n, "flop_per_s": rate}
            for k, d, n, rate in (("triton", 64, 1024, 9.0), ("sdpa-cudnn", 64, 1024, 10.0),
                                  ("triton", 64, 2048, 12.0), ("sdpa-cudnn", 64, 2048, 10.0),
                                  ("triton", 128, 1024, 5.0), ("sdpa-flash", 128, 1024, 4.0))]
    ratios = ra.speed_ratios(rows)
    assert ratios == {("fp16", 64, "full", 1024): 0.9, ("fp16", 64, "full", 2048): 1.2}
    assert ra.speed_ratios(rows, reference="sdpa-flash") == {("fp16", 128, "full", 1024): 1.25}
    (row,) = ra.ratio_table_rows(ratios)
    assert row == {"case": "fp16, d = 64, full", "target": 1.0, "N1024": 0.9, "N2048": 1.2, "worst": 0.9}
    with pytest.raises(ValueError, match="dtypes"):  # checked before any GPU work
        list(fam.cases(dtypes=("fp32",)))
