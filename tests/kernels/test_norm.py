"""Tests of gpuperf.kernels.norm: the fused residual-add + RMSNorm against a float64 reference.

The updated residual h must equal x + residual rounded once to the storage dtype (exactly, bit for bit);
y must lie within a bound from the storage dtype's unit roundoff u: the final rounding (u |y|) plus the fp32
statistics (a few u32 relative, times |y|). Outputs are poisoned with NaN first. Under the interpreter:
fp32 and fp16; bf16 on a GPU only.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from gpuperf.kernels import norm as nm  # noqa: E402

HAS_CUDA = torch.cuda.is_available()
gpu_only = [pytest.mark.gpu, pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")]

U = {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}
U_FP32 = 2.0**-24
DTYPES = [torch.float32, torch.float16, pytest.param(torch.bfloat16, marks=gpu_only, id="torch.bfloat16")]
SHAPES = [(1, 1), (3, 97), (2, 1024), (5, 1025), (2, 2047), (1, 2048), (3, 4096)]
if HAS_CUDA:
    SHAPES += [(257, 4097), (1000, 8192), (7, 65536), (32768, 64)]


def _inputs(rows, n, dtype, device, gen):
    x = torch.randn(rows, n, generator=gen, device=device).to(dtype)
    r = (3 * torch.randn(rows, n, generator=gen, device=device)).to(dtype)
    w = (1 + 0.1 * torch.randn(n, generator=gen, device=device)).to(dtype)
    return x, r, w


def _check(y, h, x, r, w, eps, gen):
    y_ref, h_ref = nm.add_rms_norm_reference_fp64(x, r, w, eps)
    y64, h64 = y.double().cpu(), h.double().cpu()
    assert not torch.isnan(y64).any() and not torch.isnan(h64).any(), f"unwritten (seed {gen.initial_seed()})"
    assert torch.equal(h64, h_ref), f"residual differs from round(x + r) (seed {gen.initial_seed()})"
    n = x.shape[1]
    bound = (U[x.dtype] + (n + 8) * U_FP32) * y_ref.abs() + 8 * U_FP32 * w.double().cpu().abs()
    err = (y64 - y_ref).abs()
    bad = err > bound
    if bad.any():
        i, j = (int(v) for v in bad.nonzero()[0])
        pytest.fail(f"seed {gen.initial_seed()}: y[{i},{j}] = {y64[i, j].item()!r}, expected "
                    f"{y_ref[i, j].item()!r}; error {err[i, j].item():.3g} > bound {bound[i, j].item():.3g}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,n", SHAPES)
def test_add_rms_norm_matches_fp64(rows, n, dtype, device, gen):
    x, r, w = _inputs(rows, n, dtype, device, gen)
    y_out = torch.full_like(x, float("nan"))
    h_out = torch.full_like(x, float("nan"))
    y, h = nm.add_rms_norm(x, r, w, 1e-6, out=y_out, residual_out=h_out)
    assert y is y_out and h is h_out
    _check(y, h, x, r, w, 1e-6, gen)


@pytest.mark.parametrize("dtype", DTYPES)
def test_add_rms_norm_in_place_and_eager_reference_agree(dtype, device, gen):
    x, r, w = _inputs(9, 1000, dtype, device, gen)
    y_eager, h_eager = nm.add_rms_norm_reference(x, r, w, 1e-5)
    x0, r0 = x.clone(), r.clone()
    y, h = nm.add_rms_norm(x, r, w, 1e-5, out=x, residual_out=r)  # in place
    assert y.data_ptr() == x.data_ptr() and h.data_ptr() == r.data_ptr()
    _check(y, h, x0, r0, w, 1e-5, gen)
    assert torch.equal(h, h_eager)
    # eager rounds the same h, then normalises in fp32: within two roundings of the kernel
    tol = 4 * U[dtype] + 2 * 1000 * U_FP32
    assert torch.allclose(y.double(), y_eager.double(), rtol=tol, atol=tol)


def test_zero_row_is_zero_and_eps_matters(device):
    x = torch.zeros(2, 8, device=device)
    w = torch.ones(8, device=device)
    y, h = nm.add_rms_norm(x, x.clone(), w, 1e-6)
    assert torch.equal(y, torch.zeros_like(y)) and torch.equal(h, torch.zeros_like(h))


def test_bytes_moved():
    assert nm.add_rms_norm_bytes_moved(32768, 4096, 2) == 2 * (4 * 32768 * 4096 + 4096)


def test_bad_inputs_raise_value_error(device):
    x = torch.randn(4, 8, device=device)
    w = torch.ones(8, device=device)
    with pytest.raises(ValueError, match="x must be 2-D"):
        nm.add_rms_norm(x[0], x[0], w)
    with pytest.raises(ValueError, match="residual.shape"):
        nm.add_rms_norm(x, x[:2], w)
    with pytest.raises(ValueError, match="weight.shape"):
        nm.add_rms_norm(x, x, w[:4])
    with pytest.raises(ValueError, match="weight must have"):
        nm.add_rms_norm(x, x, w.half())
    with pytest.raises(ValueError, match="eps"):
        nm.add_rms_norm(x, x, w, eps=0.0)
    with pytest.raises(ValueError, match="eps"):
        nm.add_rms_norm(x, x, w, eps=float("nan"))
    with pytest.raises(ValueError, match="contiguous"):
        nm.add_rms_norm(torch.randn(8, 4, device=device).t(), x, w)
    with pytest.raises(ValueError, match="n\\) must be in"):
        big = torch.randn(1, nm.MAX_COLS + 1, device=device)
        nm.add_rms_norm(big, big, torch.ones(nm.MAX_COLS + 1, device=device))
    buf = torch.randn(64, device=device)
    with pytest.raises(ValueError, match="out must be x itself or not overlap"):
        nm.add_rms_norm(buf[:32].view(4, 8), x, w, out=buf[8:40].view(4, 8))
    with pytest.raises(ValueError, match="different tensors"):
        o = torch.empty_like(x)
        nm.add_rms_norm(x, x.clone(), w, out=o, residual_out=o)
    with pytest.raises(ValueError, match="x.dtype"):
        nm.add_rms_norm(x.int(), x.int(), w)
