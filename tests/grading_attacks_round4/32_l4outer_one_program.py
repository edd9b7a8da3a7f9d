# exercise: L4.outer
# family: algorithm
# What it does wrong: one program writes the whole outer product: grid = (1,), and it loops over every
# (BLOCK_M, BLOCK_N) tile of out. The 2-D tiles are real, so the grader's tile count is satisfied, but the
# work is serial: the exercise is a 2-D grid of programs, one tile each.
import gpuperf.kernels  # first: without a GPU it switches Triton to its CPU interpreter
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def outer_kernel(x_ptr, y_ptr, out_ptr, M, N, stride_om, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    for m0 in range(0, M, BLOCK_M):
        rows = (m0 + tl.arange(0, BLOCK_M)).to(tl.int64)
        x = tl.load(x_ptr + rows, mask=rows < M, other=0.0)
        for n0 in range(0, N, BLOCK_N):
            cols = (n0 + tl.arange(0, BLOCK_N)).to(tl.int64)
            y = tl.load(y_ptr + cols, mask=cols < N, other=0.0)
            tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], x[:, None] * y[None, :],
                     mask=(rows[:, None] < M) & (cols[None, :] < N))


def outer(x, y):
    M, N = x.shape[0], y.shape[0]
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    outer_kernel[(1,)](x, y, out, M, N, out.stride(0), BLOCK_M=32, BLOCK_N=64)
    return out


outer = grading.grade("L4.outer", outer)
