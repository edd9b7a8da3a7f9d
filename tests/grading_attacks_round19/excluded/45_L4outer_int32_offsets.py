"""WRONG: 32-bit row offsets: rows = pid_m * BM + arange (int32) times out's row stride wraps past 2^31
elements."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def k(x_ptr, y_ptr, out_ptr, M, N, som, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rows, mask=rows < M, other=0.0)
    y = tl.load(y_ptr + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + rows[:, None] * som + cols[None, :], x[:, None] * y[None, :],
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def outer(x, y):
    M, N = x.shape[0], y.shape[0]
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    k[(triton.cdiv(M, 32), triton.cdiv(N, 32))](x, y, out, M, N, out.stride(0), BM=32, BN=32)
    return out


result = grading.grade("L4.outer", outer)
