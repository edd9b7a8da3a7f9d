"""Triton softmax kernels against a float64 reference (interpreter on the CPU, compiled on a GPU)."""

import pytest
import torch

from gpuperf.kernels import softmax as sm

DTYPES = [torch.float32, torch.float16] + ([torch.bfloat16] if torch.cuda.is_available() else [])
# Unit roundoff of the storage dtype: the output is rounded once from an fp32 value within a few fp32 ulps.
TOL = {torch.float32: 1e-6, torch.float16: 2 ** -11 * 2, torch.bfloat16: 2 ** -8 * 2}


def _check(y, x, seed):
    ref = sm.softmax_reference(x)
    assert not torch.isnan(y).any(), f"NaN left in output (seed {seed})"
    rel = ((y.double().cpu() - ref).abs() / ref.clamp_min(1e-30)).max().item()
    err = (y.double().cpu() - ref).abs().max().item()
    tol = TOL[x.dtype]
    assert err <= tol * ref.max().item() + 1e-7 or rel <= tol, f"max error {err}, tol {tol} (seed {seed})"
    assert torch.allclose(y.double().cpu().sum(-1), torch.ones(x.shape[0], dtype=torch.float64),
                          atol=tol * 2 * x.shape[1] ** 0.5 + 1e-6), f"rows do not sum to 1 (seed {seed})"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("method", ["fused", "online", "three_pass", "auto"])
@pytest.mark.parametrize("shape", [(1, 1), (3, 97), (2, 1025), (5, 64), (2, 2048), (1, 3000)])
def test_softmax_matches_float64(device, gen, dtype, method, shape):
    x = (torch.randn(shape, generator=gen, device=device) * 4).to(dtype)
    y = torch.full_like(x, float("nan"))
    kwargs = {"block_cols": 256} if method in ("online", "three_pass") else {}
    sm.softmax(x, out=y, method=method, **kwargs)
    _check(y, x, gen.initial_seed())


@pytest.mark.parametrize("method", ["fused", "online", "three_pass"])
def test_softmax_is_safe_for_large_logits(device, method):
    # exp(1000) overflows fp32: only a kernel that subtracts the max gets this right.
    x = torch.tensor([[1000.0, 999.0, -1000.0] + [0.0] * 97], device=device)
    y = sm.softmax(x, method=method, **({"block_cols": 32} if method != "fused" else {}))
    ref = sm.softmax_reference(x)
    assert torch.allclose(y.double().cpu(), ref, atol=1e-6)


def test_online_merges_blocks_whose_max_grows(device):
    # The maximum sits in the last block: earlier partial sums must be rescaled.
    x = torch.arange(300, dtype=torch.float32, device=device)[None, :] / 10
    y = sm.softmax(x, method="online", block_cols=16)
    assert torch.allclose(y.double().cpu(), sm.softmax_reference(x), atol=1e-7)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 65536), (2, 65537), (2, 4096), (7, 131075)])
def test_softmax_long_rows_gpu(gen, dtype, shape):
    x = torch.randn(shape, generator=gen, device="cuda").to(dtype)
    for method in ("auto", "online") + (("fused",) if shape[1] <= sm.FUSED_MAX_COLS else ()):
        y = torch.full_like(x, float("nan"))
        sm.softmax(x, out=y, method=method)
        _check(y, x, gen.initial_seed())


def test_softmax_bytes_moved():
    assert sm.softmax_bytes_moved(32768, 4096, 2, "fused") == 2 * 32768 * 4096 * 2
    assert sm.softmax_bytes_moved(4, 8, 4, "online") == 3 * 4 * 8 * 4
    assert sm.softmax_bytes_moved(4, 8, 4, "three_pass") == 4 * 4 * 8 * 4
    with pytest.raises(ValueError, match="method"):
        sm.softmax_bytes_moved(4, 8, 4, "magic")


def test_softmax_validation(device):
    x = torch.randn(4, 8, device=device)
    with pytest.raises(ValueError, match="x must be 2-D"):
        sm.softmax(x[None])
    with pytest.raises(ValueError, match="x.dtype"):
        sm.softmax(x.double())
    with pytest.raises(ValueError, match="contiguous"):
        sm.softmax(x.t())
    with pytest.raises(ValueError, match="method"):
        sm.softmax(x, method="fast")
    with pytest.raises(ValueError, match="block_cols"):
        sm.softmax(x, method="online", block_cols=100)
    with pytest.raises(ValueError, match="out must"):
        sm.softmax(x, out=torch.empty(4, 9, device=device))
    with pytest.raises(ValueError, match="overlap"):
        sm.softmax(x, out=x)
    with pytest.raises(ValueError, match="x.shape\\[1\\]"):
        sm.softmax(torch.empty(1, sm.FUSED_MAX_COLS + 1, device=device), method="fused")
    if sm.INTERPRETED:
        with pytest.raises(ValueError, match="bfloat16"):
            sm.softmax(x.bfloat16())


def test_softmax_empty(device):
    x = torch.empty(0, 5, device=device)
    assert sm.softmax(x).shape == (0, 5)


@pytest.mark.parametrize("method", ["fused", "online", "three_pass"])
def test_softmax_masked_logits(device, method):
    # -inf at the same position of every block (a mask): that lane never sees a finite value.
    x = torch.randn(3, 200, device=device)
    x[:, ::32] = float("-inf")
    y = sm.softmax(x, method=method, **({"block_cols": 32} if method != "fused" else {}))
    ref = sm.softmax_reference(x)
    assert not torch.isnan(y).any()
    assert torch.allclose(y.double().cpu(), ref, atol=1e-7)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("stages", [1, 3])
def test_online_persistent_grid_loops_over_rows_gpu(gen, stages):
    # 1 program per SM: each program handles several rows; a row length that is not a multiple of the block.
    x = torch.randn(1000, 70001, generator=gen, device="cuda").to(torch.float16)
    y = torch.full_like(x, float("nan"))
    sm.softmax(x, out=y, method="online", programs_per_sm=1, num_stages=stages)
    _check(y, x, gen.initial_seed())


def test_online_launch_validation(device):
    x = torch.randn(2, 100, device=device)
    with pytest.raises(ValueError, match="num_stages"):
        sm.softmax(x, method="online", num_stages=0)
    with pytest.raises(ValueError, match="programs_per_sm"):
        sm.softmax(x, method="online", programs_per_sm=True)
