# exercise: L4.outer
# family: escape
# What it does wrong: one program computes every tile of the outer product, one after another (the exercise: a
# 2-D grid with a program per tile). A decoy kernel that zeroes out is launched first on the full 2-D grid, and
# the programs check reads the most programs any launch ran.
import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def zero_kernel(out_ptr, M, N, stride_om, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], tl.zeros((BLOCK_M, BLOCK_N), dtype=out_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def outer_kernel(x_ptr, y_ptr, out_ptr, M, N, stride_om, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    for i in range(0, tl.cdiv(M, BLOCK_M)):
        rows = (i * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
        x = tl.load(x_ptr + rows, mask=rows < M, other=0.0)
        for j in range(0, tl.cdiv(N, BLOCK_N)):
            cols = (j * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
            y = tl.load(y_ptr + cols, mask=cols < N, other=0.0)
            tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], x[:, None] * y[None, :],
                     mask=(rows[:, None] < M) & (cols[None, :] < N))


def outer(x, y):
    M, N = x.shape[0], y.shape[0]
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    block_m, block_n = 32, 64
    zero_kernel[(triton.cdiv(M, block_m), triton.cdiv(N, block_n))](out, M, N, out.stride(0), BLOCK_M=block_m,
                                                                     BLOCK_N=block_n)
    outer_kernel[(1,)](x, y, out, M, N, out.stride(0), BLOCK_M=block_m, BLOCK_N=block_n)
    return out


outer = grading.grade("L4.outer", outer)
