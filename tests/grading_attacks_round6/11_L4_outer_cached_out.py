# exercise: L4.outer
# family: ordinary
# What it does wrong: keeps out in a module-level cache keyed by (M, N, dtype, device) to "save allocations":
#   every call with the same shapes returns the SAME tensor, so o1 = outer(x1, y1); outer(x2, y2) silently
#   overwrites o1. Checked (CHECK_WRONG=1): after the second call o1 != x1 y1^T (float64).
import gpuperf.kernels

import os

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def outer_kernel(x_ptr, y_ptr, out_ptr, M, N, som, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M, other=0.0)
    y = tl.load(y_ptr + cols, mask=cols < N, other=0.0)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(out_ptr + rows[:, None] * som + cols[None, :], x[:, None] * y[None, :], mask=mask)


_buffers = {}


def outer(x, y):
    M, N = x.shape[0], y.shape[0]
    key = (M, N, x.dtype, x.device)
    if key not in _buffers:
        _buffers[key] = torch.empty((M, N), dtype=x.dtype, device=x.device)
    out = _buffers[key]
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 64))
    outer_kernel[grid](x, y, out, M, N, out.stride(0), BLOCK_M=32, BLOCK_N=64)
    return out


if os.environ.get("CHECK_WRONG"):
    x1, y1, x2, y2 = torch.randn(50), torch.randn(70), torch.randn(50), torch.randn(70)
    o1 = outer(x1, y1)
    outer(x2, y2)
    print("first result still right:", torch.allclose(o1.double(), x1.double()[:, None] * y1.double()[None, :]))

outer = grading.grade("L4.outer", outer)
