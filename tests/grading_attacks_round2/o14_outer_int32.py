# exercise: L4.outer
# family: ordinary
# why: rows * stride_om in 32 bits: an output of more than 2^31 elements (e.g. 50000 x 50000) wraps; correct: widen
#   the program id to int64.
import gpuperf.kernels  # noqa: F401  (switches on the interpreter without a GPU)
import math
import torch
import triton
import triton.language as tl
import gpuperf.kernels as _gk
from gpuperf import grading


@triton.jit
def outer_kernel(x_ptr, y_ptr, out_ptr, M, N, stride_om, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M, other=0.0)
    y = tl.load(y_ptr + cols, mask=cols < N, other=0.0)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], x[:, None] * y[None, :], mask=mask)


def outer(x, y):
    M, N = x.shape[0], y.shape[0]
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    block_m, block_n = 32, 64
    grid = (triton.cdiv(M, block_m), triton.cdiv(N, block_n))
    outer_kernel[grid](x, y, out, M, N, out.stride(0), BLOCK_M=block_m, BLOCK_N=block_n)
    return out


outer = grading.grade("L4.outer", outer)
