# exercise: L4.outer
# family: ordinary
# What it does wrong: as 40 for the outer product: `stride_om` declared tl.constexpr and the row indices left
#   32-bit (`tl.program_id(0) * BLOCK_M + tl.arange(...)`), so `rows * stride_om` wraps past 2^31 elements
#   of out (a 50000 x 50000 fp16 outer product is 2.5e9 elements, 5 GB). The 32-bit-offsets check ignores
#   constexpr sizes and strides. Checked: verify_40.py's arithmetic (row 21475 x stride 100000 < 0 in int32).
import gpuperf.kernels

import math

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def outer_kernel(x_ptr, y_ptr, out_ptr, M, N, stride_om: tl.constexpr, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr):
    # Program (i, j) owns rows [i BLOCK_M, (i+1) BLOCK_M) x columns [j BLOCK_N, ...).
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M, other=0.0)  # a column of the tile
    y = tl.load(y_ptr + cols, mask=cols < N, other=0.0)  # a row of the tile
    tile = x[:, None] * y[None, :]  # (BLOCK_M, 1) times (1, BLOCK_N): the whole tile
    mask = (rows[:, None] < M) & (cols[None, :] < N)  # both edges may stick out
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], tile, mask=mask)



def outer(x, y):
    M, N = x.shape[0], y.shape[0]
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    block_m, block_n = 32, 64
    grid = (triton.cdiv(M, block_m), triton.cdiv(N, block_n))
    outer_kernel[grid](x, y, out, M, N, out.stride(0), BLOCK_M=block_m, BLOCK_N=block_n)
    return out



outer = grading.grade("L4.outer", outer)
