"""Tests of the FlashAttention backward kernels and the autograd Function (gpuperf.kernels.flash_attention_bwd).

Without a CUDA GPU the kernels run through Triton's interpreter on tiny shapes (fp32, fp16); with one, the
GPU-marked tests add bf16, larger and awkward shapes, and a comparison of our error with SDPA's.
"""

import dataclasses
import math

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from gpuperf.kernels import flash_attention_bwd as fab  # noqa: E402

CUDA = torch.cuda.is_available()
gpu = pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")

#: Unit roundoff of each storage dtype.
UNIT_ROUNDOFF = {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}

#: Allowed max-abs error of a gradient, in units of u * max|reference gradient|. P and dS are rounded to
#: the storage dtype before the tile matmuls (as in FlashAttention), so a few u of relative error per tile
#: product are expected; fp32 accumulation over N keys adds about sqrt(N) * 2^-24.
ERROR_UNITS = {torch.float32: 64.0, torch.float16: 16.0, torch.bfloat16: 16.0}

CPU_SHAPES = [  # (batch, heads, n_q, n_k, head_dim)
    (1, 1, 1, 1, 16),
    (1, 2, 37, 37, 16),
    (2, 1, 50, 70, 32),
    (1, 1, 70, 33, 32),
    (1, 1, 97, 97, 64),
]
GPU_SHAPES = CPU_SHAPES + [
    (2, 3, 128, 128, 128),
    (1, 2, 1025, 1025, 64),
    (2, 2, 257, 300, 128),
    (1, 1, 2047, 2047, 128),
    (1, 2, 1000, 513, 16),
]
CPU_DTYPES = [torch.float32, torch.float16]
GPU_DTYPES = [torch.float16, torch.bfloat16, torch.float32]


def _inputs(shape, dtype, device, gen):
    batch, heads, n_q, n_k, d = shape
    q = torch.randn(batch, heads, n_q, d, device=device, generator=gen).to(dtype)
    k = torch.randn(batch, heads, n_k, d, device=device, generator=gen).to(dtype)
    v = torch.randn(batch, heads, n_k, d, device=device, generator=gen).to(dtype)
    do = torch.randn(batch, heads, n_q, d, device=device, generator=gen).to(dtype)
    return q, k, v, do


def _reference_grads(q, k, v, do, causal, scale=None):
    """float64 autograd of standard attention on the (already rounded) inputs: o, lse, dq, dk, dv."""
    q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
    o, lse = fab.attention_forward_torch(q64, k64, v64, causal, scale)
    dq, dk, dv = torch.autograd.grad(o, (q64, k64, v64), do.double())
    return o.detach(), lse.detach(), dq, dk, dv


def _assert_close(name, got, ref, dtype, seed, units=None, scale=None):
    """max|got - ref| <= units * u * scale, scale = max|ref| unless given (e.g. when ref is exactly 0)."""
    units = ERROR_UNITS[dtype] if units is None else units
    assert torch.isfinite(got).all(), f"{name}: non-finite values (seed {seed})"
    scale = float(ref.abs().max()) if scale is None else scale
    err = float((got.double() - ref).abs().max())
    bound = units * UNIT_ROUNDOFF[dtype] * max(scale, 1e-30)
    assert err <= bound or err == 0.0, (
        f"{name}: max abs error {err:.3e} > {bound:.3e} = {units} u max|ref| ({dtype}, seed {seed})")


def _check_backward(shape, dtype, causal, device, gen, scale=None, variant=None):
    q, k, v, do = _inputs(shape, dtype, device, gen)
    o64, lse64, dq_ref, dk_ref, dv_ref = _reference_grads(q, k, v, do, causal, scale)
    o = o64.to(dtype)
    config = None if variant is None else fab.variant_config(shape[-1], variant)
    if config is not None and dtype == torch.float32 and not fab.INTERPRETED:
        config = dataclasses.replace(fab.GPU_CONFIG_FP32, fused=config.fused)
    dq, dk, dv = fab.flash_attention_backward(q, k, v, o, lse64.float(), do, causal, scale, config=config)
    # One scale for the three gradients: with a single key, dQ is exactly 0 and only rounding is left.
    size = max(float(g.abs().max()) for g in (dq_ref, dk_ref, dv_ref))
    for name, got, ref in (("dq", dq, dq_ref), ("dk", dk, dk_ref), ("dv", dv, dv_ref)):
        assert got.shape == ref.shape and got.dtype == dtype
        _assert_close(name, got, ref, dtype, gen.initial_seed(), scale=size)


VARIANTS = ["split", "fused"]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=["fp32", "fp16"])
@pytest.mark.parametrize("shape", CPU_SHAPES, ids=str)
def test_backward_matches_float64_autograd(shape, dtype, causal, variant, device, gen):
    _check_backward(shape, dtype, causal, device, gen, variant=variant)


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", GPU_DTYPES, ids=["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("shape", GPU_SHAPES, ids=str)
def test_backward_matches_float64_autograd_gpu(shape, dtype, causal, variant, gen):
    _check_backward(shape, dtype, causal, "cuda", gen, variant=variant)


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
@pytest.mark.parametrize("head_dim", [64, 128])
def test_default_backward_matches_float64_autograd_gpu(head_dim, dtype, causal, gen):
    # The default per (d, mask), whichever design it is, on N_q != N_k with partial blocks.
    _check_backward((2, 3, 1100, 900, head_dim), dtype, causal, "cuda", gen)


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("fused", [False, True], ids=["split", "fused"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
def test_tma_option_matches_float64_autograd_gpu(fused, causal, dtype, gen):
    # Q/dO tiles through tensor descriptors (and, fused, dQ by bulk reductions); ignored before Hopper.
    for d in (64, 128):
        cfg = dataclasses.replace(fab.variant_config(d, "fused" if fused else "split"), tma=True)
        q, k, v, do = _inputs((2, 3, 1100, 900, d), dtype, "cuda", gen)
        o64, lse64, *ref = _reference_grads(q, k, v, do, causal)
        got = fab.flash_attention_backward(q, k, v, o64.to(dtype), lse64.float(), do, causal, config=cfg)
        size = max(float(r.abs().max()) for r in ref)
        for name, g, r in zip(("dq", "dk", "dv"), got, ref):
            _assert_close(f"{name} d={d}", g, r, dtype, gen.initial_seed(), scale=size)


def test_fused_variant_accumulates_dq_over_key_blocks(device, gen):
    # Many key blocks (N_k >> block) and a single query row: dQ is the sum of every block's partial
    # product, so a lost or doubled atomic add shows up as a wrong dQ.
    _check_backward((1, 1, 1, 200, 16), torch.float32, False, device, gen, variant="fused")
    _check_backward((1, 2, 33, 200, 16), torch.float32, True, device, gen, variant="fused")


@pytest.mark.parametrize("variant", VARIANTS)
def test_custom_softmax_scale(variant, device, gen):
    # The fused design applies the scale in its conversion kernel: a scale of 0.3, not 1/sqrt(d).
    _check_backward((1, 2, 40, 40, 32), torch.float32, True, device, gen, scale=0.3, variant=variant)


@pytest.mark.parametrize("causal", [False, True])
def test_tiled_torch_backward_equals_autograd(causal, gen, device):
    # Block sizes that do not divide N, N_q != N_k: float64 to rounding.
    q, k, v, do = _inputs((2, 2, 23, 19, 8), torch.float64, device, gen)
    o, lse, dq_ref, dk_ref, dv_ref = _reference_grads(q, k, v, do, causal)
    got = fab.attention_backward_tiled_torch(q, k, v, o, lse, do, causal, block_rows=5, block_cols=7)
    for g, r in zip(got, (dq_ref, dk_ref, dv_ref)):
        assert float((g - r).abs().max()) < 1e-12, f"seed {gen.initial_seed()}"


@pytest.mark.parametrize("causal", [False, True])
def test_tiled_torch_gradcheck(causal):
    gen = torch.Generator().manual_seed(1234)
    q, k, v = (torch.randn(1, 2, n, 4, dtype=torch.float64, generator=gen).requires_grad_()
               for n in (6, 7, 7))

    def f(q, k, v):
        return fab.TiledAttentionFunction.apply(q, k, v, causal, None, 4, 3)

    assert torch.autograd.gradcheck(f, (q, k, v), eps=1e-6, atol=1e-8, rtol=1e-6)


def test_tiled_torch_gradcheck_fails_on_a_wrong_backward(monkeypatch):
    # The check above can fail: drop the D term (a classic bug) and gradcheck must object.
    original = fab.attention_backward_tiled_torch

    def wrong(q, k, v, o, lse, do, *args):
        return original(q, k, v, o, lse, do, *args)[0] * 0.5, *original(q, k, v, o, lse, do, *args)[1:]

    monkeypatch.setattr(fab, "attention_backward_tiled_torch", wrong)
    q, k, v = (torch.randn(1, 1, 5, 4, dtype=torch.float64).requires_grad_() for _ in range(3))
    assert not torch.autograd.gradcheck(lambda q, k, v: fab.TiledAttentionFunction.apply(q, k, v, False),
                                        (q, k, v), eps=1e-6, atol=1e-8, rtol=1e-6, raise_exception=False)


def _flash_forward_available():
    try:
        from gpuperf.kernels.flash_attention import flash_attention_forward  # noqa: F401
    except ImportError:
        return False
    return True


needs_forward = pytest.mark.skipif(not _flash_forward_available(),
                                   reason="gpuperf.kernels.flash_attention (the forward) is not there yet")


@needs_forward
@pytest.mark.parametrize("causal", [False, True])
def test_function_gradients_equal_sdpa_float64(causal, device, gen):
    dtype = torch.float32
    q, k, v, do = _inputs((1, 2, 45, 45, 32), dtype, device, gen)
    q1, k1, v1 = (t.clone().requires_grad_() for t in (q, k, v))
    out = fab.flash_attention(q1, k1, v1, causal=causal)
    out.backward(do)
    q2, k2, v2 = (t.double().requires_grad_() for t in (q, k, v))
    ref = torch.nn.functional.scaled_dot_product_attention(q2, k2, v2, is_causal=causal)
    ref.backward(do.double())
    _assert_close("o", out, ref.detach(), dtype, gen.initial_seed())
    for name, a, b in (("dq", q1, q2), ("dk", k1, k2), ("dv", v1, v2)):
        _assert_close(name, a.grad, b.grad, dtype, gen.initial_seed())


@needs_forward
def test_function_accepts_non_contiguous_views(device, gen):
    # (B, N, H, d) transposed to (B, H, N, d), as a model usually produces them.
    x = torch.randn(3, 2, 40, 16, device=device, generator=gen)  # (3 = q/k/v, B, N, H*d)
    q, k, v = (t.view(2, 40, 1, 16).transpose(1, 2).requires_grad_() for t in x)
    out = fab.flash_attention(q, k, v, causal=True)
    out.sum().backward()  # dO is an expanded tensor of ones (zero strides)
    q2, k2, v2 = (t.detach().double().requires_grad_() for t in (q, k, v))
    torch.nn.functional.scaled_dot_product_attention(q2, k2, v2, is_causal=True).sum().backward()
    for a, b in ((q, q2), (k, k2), (v, v2)):
        _assert_close("grad", a.grad, b.grad, torch.float32, gen.initial_seed())


class TinyAttentionModel(torch.nn.Module):
    """Embedding -> q, k, v projections -> attention -> output projection -> next-token logits."""

    def __init__(self, vocab, heads, head_dim):
        super().__init__()
        width = heads * head_dim
        self.heads, self.head_dim = heads, head_dim
        self.embed = torch.nn.Embedding(vocab, width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.out = torch.nn.Linear(width, vocab)

    def forward(self, tokens, attention):
        batch, n = tokens.shape
        x = self.embed(tokens)
        q, k, v = self.qkv(x).view(batch, n, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        y = attention(q, k, v).transpose(1, 2).reshape(batch, n, -1)
        return self.out(x + y)


def _loss_curve(attention, device, dtype, steps=5, seed=0):
    torch.manual_seed(seed)
    model = TinyAttentionModel(vocab=17, heads=2, head_dim=16).to(device=device, dtype=dtype)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    gen = torch.Generator(device=device).manual_seed(seed)
    tokens = torch.randint(0, 17, (2, 25), device=device, generator=gen)
    losses = []
    for _ in range(steps):
        logits = model(tokens[:, :-1], attention)
        loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, 17), tokens[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses


def _ours(q, k, v):
    return fab.flash_attention(q, k, v, causal=True)


def _sdpa(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


@needs_forward
def test_training_loss_curve_equals_sdpa(device):
    dtype = torch.float32
    ours = _loss_curve(_ours, device, dtype)
    ref = _loss_curve(_sdpa, device, dtype)
    assert ours[-1] < ours[0] - 0.1, f"the model did not learn: {ours}"
    for a, b in zip(ours, ref):
        assert abs(a - b) <= 1e-4 * abs(b), f"loss curves differ: ours {ours} vs sdpa {ref}"


@gpu
@pytest.mark.gpu
@needs_forward
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
def test_training_loss_curve_equals_sdpa_gpu(dtype):
    ours = _loss_curve(_ours, "cuda", dtype, steps=8)
    ref = _loss_curve(_sdpa, "cuda", dtype, steps=8)
    tol = 64 * UNIT_ROUNDOFF[dtype]
    for a, b in zip(ours, ref):
        assert abs(a - b) <= tol * abs(b), f"loss curves differ: ours {ours} vs sdpa {ref}"


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
def test_error_not_worse_than_sdpa(dtype, causal, gen):
    # FlashAttention's own test criterion: our error vs float64 at most twice SDPA's error in the same dtype.
    q, k, v, do = _inputs((2, 4, 1000, 1000, 64), dtype, "cuda", gen)
    o64, lse64, *ref = _reference_grads(q, k, v, do, causal)
    ours = fab.flash_attention_backward(q, k, v, o64.to(dtype), lse64.float(), do, causal)
    qs, ks, vs = (t.clone().requires_grad_() for t in (q, k, v))
    torch.nn.functional.scaled_dot_product_attention(qs, ks, vs, is_causal=causal).backward(do)
    for name, a, s, r in zip(("dq", "dk", "dv"), ours, (qs.grad, ks.grad, vs.grad), ref):
        err_ours = float((a.double() - r).abs().max())
        err_sdpa = float((s.double() - r).abs().max())
        assert err_ours <= 2 * err_sdpa + 1e-5, f"{name}: ours {err_ours:.3e} vs sdpa {err_sdpa:.3e}"


# ---- validation ----------------------------------------------------------------------------------------


def _ok(device, dtype=torch.float32, n=8, d=16):
    return [torch.randn(1, 1, n, d, device=device, dtype=dtype) for _ in range(3)]


@pytest.mark.parametrize("make, match", [
    (lambda q, k, v: (q[0], k, v), "q must be 4-D"),
    (lambda q, k, v: (q, k.double(), v), "k.dtype"),
    (lambda q, k, v: (q, k, v.int()), "v.dtype"),
    (lambda q, k, v: (q, k, v[:, :, :5]), r"v.shape\[2\]"),
    (lambda q, k, v: (q, torch.cat([k, k], 1), v), r"k.shape\[:2\]"),
    (lambda q, k, v: (q[..., :8], k[..., :8], v[..., :8]), "head_dim"),
    (lambda q, k, v: (q.tolist(), k, v), "q must be a torch.Tensor"),
])
def test_bad_inputs_raise(make, match, device):
    with pytest.raises(ValueError, match=match):
        fab.flash_attention(*make(*_ok(device)))


def test_bad_head_dim_48_raises(device):
    with pytest.raises(ValueError, match="head_dim"):
        fab.flash_attention(*_ok(device, d=48))


@pytest.mark.parametrize("kwargs, match", [
    ({"causal": 1}, "causal"), ({"softmax_scale": -1.0}, "softmax_scale"),
    ({"softmax_scale": float("nan")}, "softmax_scale"), ({"softmax_scale": True}, "softmax_scale"),
])
def test_bad_options_raise(kwargs, match, device):
    with pytest.raises(ValueError, match=match):
        fab.flash_attention(*_ok(device), **kwargs)


def test_backward_wrapper_validates(device):
    q, k, v = _ok(device)
    o, lse, do = q.clone(), torch.zeros(1, 1, 8, device=device), q.clone()
    with pytest.raises(ValueError, match="lse"):
        fab.flash_attention_backward(q, k, v, o, lse[..., :3], do)
    with pytest.raises(ValueError, match="do"):
        fab.flash_attention_backward(q, k, v, o, lse, do[:, :, :4])
    with pytest.raises(ValueError, match="fp32_precision"):
        fab.flash_attention_backward(q, k, v, o, lse, do, fp32_precision="fast")
    with pytest.raises(ValueError, match="config"):
        fab.flash_attention_backward(q, k, v, o, lse, do, config=(16, 16, 16, 16))


@pytest.mark.parametrize("field, value", [("dkdv_block_m", 8), ("dq_block_n", 48), ("num_warps", 3),
                                          ("num_stages", 0), ("dq_num_warps", 5), ("dq_num_stages", 9)])
def test_config_validates(field, value):
    kwargs = {"dkdv_block_m": 16, "dkdv_block_n": 16, "dq_block_m": 16, "dq_block_n": 16, field: value}
    with pytest.raises(ValueError, match=field):
        fab.BackwardConfig(**kwargs)


@pytest.mark.skipif(CUDA, reason="the interpreter refuses bf16 (only without a GPU)")
def test_interpreter_refuses_bf16():
    with pytest.raises(ValueError, match="bfloat16"):
        fab.flash_attention(*_ok("cpu", dtype=torch.bfloat16))


def test_default_config_covers_every_head_dim():
    for d in fab.HEAD_DIMS:
        for dtype in (torch.float16, torch.bfloat16, torch.float32):
            for causal in (False, True):
                cfg = fab.default_config(d, dtype, causal)
                assert isinstance(cfg, fab.BackwardConfig)
                assert cfg.dq_num_warps in (1, 2, 4, 8, 16) and cfg.dq_num_stages >= 1
        assert not fab.variant_config(d, "split").fused and fab.variant_config(d, "fused").fused
    with pytest.raises(ValueError, match="variant"):
        fab.variant_config(64, "atomic")
    with pytest.raises(ValueError, match="fused"):
        fab.BackwardConfig(16, 16, 16, 16, fused=1)
    with pytest.raises(ValueError, match="tma"):
        fab.BackwardConfig(16, 16, 16, 16, tma="yes")
    assert fab.BackwardConfig(16, 16, 16, 16, num_warps=2).dq_num_warps == 2
    with pytest.raises(ValueError, match="head_dim"):
        fab.default_config(48)
    assert math.isclose(fab._LOG2E, 1 / math.log(2))


# ---- the GPU defaults, reachable and correct under the interpreter too ------------------------------


def test_gpu_default_table_picks_the_measured_design(monkeypatch):
    # What default_config returns on a GPU (INTERPRETED False): fused at d = 128, split at d <= 64 (both
    # masks, fp16 and bf16), the small split tiles for fp32; the TMA option is never a default.
    monkeypatch.setattr(fab, "INTERPRETED", False)
    for d in fab.HEAD_DIMS:
        for causal in (False, True):
            for dtype in (torch.float16, torch.bfloat16):
                cfg = fab.default_config(d, dtype, causal)
                assert cfg is fab.GPU_CONFIGS[(d, causal)]
                assert cfg is (fab.FUSED_CONFIGS if d == 128 else fab.SPLIT_CONFIGS)[d]
                assert cfg.fused == (d == 128) and not cfg.tma
            assert fab.default_config(d, torch.float32, causal) is fab.GPU_CONFIG_FP32
        assert fab.variant_config(d, "fused") is fab.FUSED_CONFIGS[d]
        assert fab.variant_config(d, "split") is fab.SPLIT_CONFIGS[d]
    assert not fab.GPU_CONFIG_FP32.fused and not fab.GPU_CONFIG_FP32.tma
    assert not any(c.tma for c in (*fab.SPLIT_CONFIGS.values(), *fab.FUSED_CONFIGS.values()))


#: Every distinct tile set a GPU default uses (the interpreter ignores warps and stages, not tiles).
GPU_TILE_CASES = [
    ("split-d64", 64, lambda: fab.SPLIT_CONFIGS[64]),
    ("split-d128", 128, lambda: fab.SPLIT_CONFIGS[128]),
    ("fused-d128", 128, lambda: fab.FUSED_CONFIGS[128]),
    ("fused-d64", 64, lambda: fab.FUSED_CONFIGS[64]),
    ("fp32", 32, lambda: fab.GPU_CONFIG_FP32),
    ("fp32-fused", 32, lambda: dataclasses.replace(fab.GPU_CONFIG_FP32, fused=True)),
]


@pytest.mark.skipif(CUDA, reason="on a GPU these tiles run in fp16/bf16 (the GPU tests)")
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("name, d, make", GPU_TILE_CASES, ids=[c[0] for c in GPU_TILE_CASES])
def test_gpu_tiles_match_float64_autograd(name, d, make, causal, device, gen):
    # The GPU tiles (up to 128 x 128, BLOCK_M != BLOCK_N) on N_q != N_k, neither a multiple of a tile:
    # the causal split at `lo`/`mid` and the padded rows of the large tiles, checked on the CPU.
    cfg = make()
    for n_q, n_k in ((150, 201), (201, 97)):
        q, k, v, do = _inputs((1, 2, n_q, n_k, d), torch.float32, device, gen)
        o64, lse64, *ref = _reference_grads(q, k, v, do, causal)
        got = fab.flash_attention_backward(q, k, v, o64.float(), lse64.float(), do, causal, config=cfg)
        size = max(float(r.abs().max()) for r in ref)
        for g, r, label in zip(got, ref, ("dq", "dk", "dv")):
            _assert_close(f"{label} {name} {n_q}x{n_k}", g, r, torch.float32, gen.initial_seed(),
                          scale=size)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("causal", [False, True])
def test_every_output_and_accumulator_is_written(variant, causal, device, gen, monkeypatch):
    # Fill every buffer the wrapper allocates with NaN: the fused design's fp32 dQ accumulator must be
    # zeroed by the preprocess kernel, and every element of D, dQ, dK, dV written (also keys that no
    # query sees, N_k > N_q under the causal mask), or NaN reaches the result.
    shape = (2, 1, 37, 90, 16)
    q, k, v, do = _inputs(shape, torch.float32, device, gen)
    o64, lse64, *ref = _reference_grads(q, k, v, do, causal)
    empty, empty_like = torch.empty, torch.empty_like

    def poisoned(*args, **kwargs):
        return empty(*args, **kwargs).fill_(float("nan"))

    def poisoned_like(*args, **kwargs):
        return empty_like(*args, **kwargs).fill_(float("nan"))

    monkeypatch.setattr(torch, "empty", poisoned)
    monkeypatch.setattr(torch, "empty_like", poisoned_like)
    got = fab.flash_attention_backward(q, k, v, o64.float(), lse64.float(), do, causal,
                                       config=dataclasses.replace(fab.INTERPRETER_CONFIG,
                                                                  fused=variant == "fused"))
    monkeypatch.undo()
    size = max(float(r.abs().max()) for r in ref)
    for g, r, label in zip(got, ref, ("dq", "dk", "dv")):
        _assert_close(label, g, r, torch.float32, gen.initial_seed(), scale=size)


def test_poisoned_accumulator_is_caught(device, gen, monkeypatch):
    # The check above can fail: skip the zeroing (ZERO_DQ False) and the NaN fill shows up in dQ.
    q, k, v, do = _inputs((1, 1, 20, 40, 16), torch.float32, device, gen)
    o64, lse64, *_ = _reference_grads(q, k, v, do, False)
    empty, empty_like, kernel = torch.empty, torch.empty_like, fab._preprocess_kernel

    class NoZeroing:  # the wrapper passes every parameter positionally, ZERO_DQ last
        def __getitem__(self, grid):
            def launch(*args, **kwargs):
                return kernel[grid](*args[:-1], False, **kwargs)
            return launch

    monkeypatch.setattr(torch, "empty", lambda *a, **kw: empty(*a, **kw).fill_(float("nan")))
    monkeypatch.setattr(torch, "empty_like", lambda *a, **kw: empty_like(*a, **kw).fill_(float("nan")))
    monkeypatch.setattr(fab, "_preprocess_kernel", NoZeroing())
    dq, _, _ = fab.flash_attention_backward(q, k, v, o64.float(), lse64.float(), do,
                                            config=dataclasses.replace(fab.INTERPRETER_CONFIG,
                                                                       fused=True))
    monkeypatch.undo()
    assert torch.isnan(dq).all()


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("blocks", [(5, 7), (7, 5), (4, 4), (16, 32)])
def test_split_torch_backward_equals_float64_autograd(causal, blocks, gen, device):
    # The loops the split Triton kernels implement (the chapter lists them): blocks that do not divide N,
    # N_q != N_k both ways, block_m above and below block_n, so every causal bound (lo, mid, end) is hit.
    for n_q, n_k in ((23, 19), (19, 23), (1, 9), (33, 33)):
        q, k, v, do = _inputs((2, 2, n_q, n_k, 8), torch.float64, device, gen)
        o, lse, dq_ref, dk_ref, dv_ref = _reference_grads(q, k, v, do, causal)
        got = fab.attention_backward_split_torch(q, k, v, o, lse, do, causal, block_m=blocks[0],
                                                 block_n=blocks[1])
        for name, g, r in zip(("dq", "dk", "dv"), got, (dq_ref, dk_ref, dv_ref)):
            assert float((g - r).abs().max()) < 1e-12, f"{name} {n_q}x{n_k} seed {gen.initial_seed()}"


def test_split_torch_backward_fails_without_the_masked_blocks(gen, device):
    # The causal bounds matter: treating the diagonal blocks as unmasked gives wrong gradients.
    q, k, v, do = _inputs((1, 1, 20, 20, 4), torch.float64, device, gen)
    o, lse, dq_ref, *_ = _reference_grads(q, k, v, do, True)
    dq = fab.attention_backward_split_torch(q, k, v, o, lse, do, False, block_m=4, block_n=4)[0]
    assert float((dq - dq_ref).abs().max()) > 1e-3
