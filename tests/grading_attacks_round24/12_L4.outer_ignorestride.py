# what: ignores stride_om and uses N as the output row stride
import torch
import triton
import triton.language as tl
import gpuperf.kernels
from gpuperf import grading

@triton.jit
def outer_kernel(x_ptr, y_ptr, out_ptr, M, N, stride_om, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr):
    # Program (i, j) owns rows [i BLOCK_M, (i+1) BLOCK_M) x columns [j BLOCK_N, ...).
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M, other=0.0)  # a column of the tile
    y = tl.load(y_ptr + cols, mask=cols < N, other=0.0)  # a row of the tile
    tile = x[:, None] * y[None, :]  # (BLOCK_M, 1) times (1, BLOCK_N): the whole tile
    mask = (rows[:, None] < M) & (cols[None, :] < N)  # both edges may stick out
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], tile, mask=mask)


def outer(x, y):
    M, N = x.shape[0], y.shape[0]
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    block_m, block_n = 32, 64
    grid = (triton.cdiv(M, block_m), triton.cdiv(N, block_n))
    outer_kernel[grid](x, y, out, M, N, out.stride(0), BLOCK_M=block_m, BLOCK_N=block_n)
    return out


result = grading.grade("L4.outer", outer)
