"""Tests of gpuperf.kernels.matmul: the tiled Triton matmul against a float64 reference.

The bound on each element follows from the formats: fp16/bf16 products are exact in fp32 and summed in fp32
(error <= k u32 sum|a||b| with some slack for the tensor cores' accumulation), tf32 rounds each input once
more (u = 2**-11), and the result is rounded once to the storage dtype (u_D |c|). Outputs are poisoned with NaN
first, so an element never written fails. Under the interpreter (no GPU): fp32 and fp16 on small shapes;
bf16, the TMA kernel and autotuning only on a GPU. Speed is never asserted here.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from gpuperf.kernels import matmul as mm  # noqa: E402

HAS_CUDA = torch.cuda.is_available()
gpu_only = [pytest.mark.gpu, pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")]

U = {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}
U_TF32 = 2.0**-11
U_FP32 = 2.0**-24

# Around the interpreter's 32-wide tile: 1, a prime, one past a tile, a skinny decode-like row.
SHAPES_CPU = [(1, 1, 1), (97, 33, 65), (32, 32, 32), (1, 70, 129), (33, 1, 31), (65, 97, 40)]
# On a GPU: around the autotuned tiles (64-256) and TMA's 16-byte rows, plus larger awkward shapes.
SHAPES_GPU = SHAPES_CPU + [(1025, 2047, 97), (256, 512, 4096), (4097, 129, 1025), (16, 4096, 4096),
                           (2304, 1544, 512)]
SHAPES = SHAPES_GPU if HAS_CUDA else SHAPES_CPU
#: On a GPU the many-shape test fixes one tile (one compile per dtype instead of an autotuning sweep per shape);
#: the autotuned and TMA paths are tested on fewer shapes below.
FIXED = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 4} if HAS_CUDA else None
DTYPES = [torch.float32, torch.float16, pytest.param(torch.bfloat16, marks=gpu_only, id="torch.bfloat16")]


def _inputs(m, n, k, dtype, device, gen):
    a = torch.randn(m, k, generator=gen, device=device).to(dtype)
    b = torch.randn(k, n, generator=gen, device=device).to(dtype)
    return a, b


def _check(c, a, b, input_precision, gen):
    a64, b64 = a.double().cpu(), b.double().cpu()
    ref = a64 @ b64
    k = a.shape[1]
    u_in = U_TF32 if (a.dtype == torch.float32 and input_precision == "tf32") else 0.0
    scale = a64.abs() @ b64.abs()
    bound = (2 * u_in + 2 * k * U_FP32) * scale + U[a.dtype] * ref.abs() + 1e-300
    c64 = c.double().cpu()
    assert not torch.isnan(c64).any(), f"unwritten elements (seed {gen.initial_seed()})"
    err = (c64 - ref).abs()
    bad = err > bound
    if bad.any():
        i, j = (int(v) for v in bad.nonzero()[0])
        pytest.fail(f"seed {gen.initial_seed()}: C[{i},{j}] = {c64[i, j].item()!r}, expected "
                    f"{ref[i, j].item()!r}; error {err[i, j].item():.3g} > bound {bound[i, j].item():.3g}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_matmul_within_rounding_bound(m, n, k, dtype, device, gen):
    a, b = _inputs(m, n, k, dtype, device, gen)
    precision = "ieee" if dtype == torch.float32 else None
    out = torch.full((m, n), float("nan"), dtype=dtype, device=device)
    c = mm.matmul(a, b, out, input_precision=precision, config=FIXED)
    assert c is out
    _check(c, a, b, precision, gen)


@pytest.mark.parametrize("m,n,k", [(97, 33, 65)] + ([(1025, 2047, 97)] if HAS_CUDA else []))
def test_matmul_autotuned_portable(m, n, k, device, gen):
    a, b = _inputs(m, n, k, torch.float16, device, gen)
    out = torch.full((m, n), float("nan"), dtype=torch.float16, device=device)
    _check(mm.matmul(a, b, out, backend="portable"), a, b, None, gen)


@pytest.mark.parametrize("m,n,k", [(97, 33, 65), (1, 70, 129)] + ([(1025, 2047, 1025)] if HAS_CUDA else []))
def test_matmul_fp32_tf32_within_tf32_bound(m, n, k, device, gen):
    a, b = _inputs(m, n, k, torch.float32, device, gen)
    _check(mm.matmul(a, b, input_precision="tf32", config=FIXED), a, b, "tf32", gen)


def test_matmul_fixed_config_and_partial_k_step(device, gen):
    # k = 3 * 16 + 5: three full steps and a masked partial one, with a 16 x 32 tile.
    a, b = _inputs(50, 45, 53, torch.float16, device, gen)
    cfg = {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": 2}
    _check(mm.matmul(a, b, config=cfg), a, b, None, gen)


def test_matmul_k_zero_gives_zeros(device):
    a = torch.empty(3, 0, device=device)
    b = torch.empty(0, 4, device=device)
    out = torch.full((3, 4), float("nan"), device=device)
    assert torch.equal(mm.matmul(a, b, out, input_precision="ieee"), torch.zeros(3, 4, device=device))


@pytest.mark.parametrize("dtype", [pytest.param(torch.float16, marks=gpu_only),
                                   pytest.param(torch.bfloat16, marks=gpu_only)])
@pytest.mark.parametrize("m,n,k", [(1, 8, 8), (97, 40, 72), (1025, 2056, 1032), (4096, 4096, 4096)])
def test_matmul_tma_backends(m, n, k, dtype, device, gen):
    if not mm.tma_supported(torch.empty(1, 8, device=device, dtype=dtype),
                            torch.empty(8, 8, device=device, dtype=dtype)):
        pytest.skip("needs a Hopper-or-later GPU")
    a, b = _inputs(m, n, k, dtype, device, gen)
    out = torch.full((m, n), float("nan"), dtype=dtype, device=device)
    for backend in ("tma", "tma_ws", "auto"):
        out.fill_(float("nan"))
        _check(mm.matmul(a, b, out, backend=backend), a, b, None, gen)


def test_auto_takes_warp_specialisation_only_where_triton_specialises(monkeypatch):
    assert mm.auto_tma_kind(9) == "tma"  # Hopper: the flag compiles to the same kernel (bench/NOTES.md)
    assert mm.auto_tma_kind(10) == "tma_ws" and mm.auto_tma_kind(12) == "tma_ws"
    monkeypatch.setattr(mm, "_warp_specialize_failed", True)
    assert mm.auto_tma_kind(10) == "tma"
    for bad in (8, 9.0, True):
        with pytest.raises(ValueError, match="major"):
            mm.auto_tma_kind(bad)


def test_counts():
    assert mm.matmul_flop(2, 3, 4) == 48
    assert mm.matmul_min_bytes_moved(2, 3, 4, 2) == 2 * (8 + 12 + 6)


def test_bad_inputs_raise_value_error(device):
    a = torch.randn(4, 5, device=device)
    b = torch.randn(5, 3, device=device)
    with pytest.raises(ValueError, match="input_precision"):
        mm.matmul(a, b)
    with pytest.raises(ValueError, match="input_precision"):
        mm.matmul(a, b, input_precision="fp32")
    with pytest.raises(ValueError, match="input_precision"):
        mm.matmul(a.half(), b.half(), input_precision="ieee")
    with pytest.raises(ValueError, match=r"b.shape\[0\]"):
        mm.matmul(a, torch.randn(4, 3, device=device), input_precision="ieee")
    with pytest.raises(ValueError, match="2-D"):
        mm.matmul(a[0], b, input_precision="ieee")
    with pytest.raises(ValueError, match="contiguous"):
        mm.matmul(a, torch.randn(3, 5, device=device).t(), input_precision="ieee")
    with pytest.raises(ValueError, match="b.dtype"):
        mm.matmul(a, b.half(), input_precision="ieee")
    with pytest.raises(ValueError, match="a.dtype"):
        mm.matmul(a.double(), b.double())
    with pytest.raises(ValueError, match="backend"):
        mm.matmul(a, b, input_precision="ieee", backend="cublas")
    with pytest.raises(ValueError, match="config fixes"):
        mm.matmul(a.half(), b.half(), backend="tma", config=mm.INTERPRETER_CONFIG)
    with pytest.raises(ValueError, match="out.shape"):
        mm.matmul(a, b, torch.empty(4, 4, device=device), input_precision="ieee")
    with pytest.raises(ValueError, match="overlap"):
        buf = torch.randn(40, device=device)
        mm.matmul(buf[:20].view(4, 5), b, buf[8:20].view(4, 3), input_precision="ieee")
    with pytest.raises(ValueError, match="config"):
        mm.matmul(a, b, input_precision="ieee", config={"BLOCK_M": 24, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 1})
    with pytest.raises(ValueError, match="a must be a torch.Tensor"):
        mm.matmul([[1.0]], b, input_precision="ieee")


@pytest.mark.skipif(HAS_CUDA, reason="checks the interpreter path")
def test_interpreter_refuses_bf16_and_cuda_style_misuse():
    a = torch.randn(4, 4).bfloat16()
    with pytest.raises(ValueError, match="bfloat16"):
        mm.matmul(a, a)
    with pytest.raises(ValueError, match="tma"):
        mm.matmul(a.half(), a.half(), backend="tma")
