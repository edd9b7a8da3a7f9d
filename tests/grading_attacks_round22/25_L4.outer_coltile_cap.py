import torch, triton, triton.language as tl
from gpuperf import grading

# mistake: the column tiles capped at 256 on axis 1 (the learner's idea of a grid limit), no loop: columns
# past 256 * 64 = 16,384 are never written
@triton.jit
def outer_kernel(x_ptr, y_ptr, out_ptr, M, N, stride_om, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M, other=0.0)
    y = tl.load(y_ptr + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], x[:, None] * y[None, :],
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def outer(x, y):
    M, N = x.shape[0], y.shape[0]
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(M, 32), min(triton.cdiv(N, 64), 256))
    outer_kernel[grid](x, y, out, M, N, out.stride(0), BLOCK_M=32, BLOCK_N=64)
    return out
result = grading.grade("L4.outer", outer)
