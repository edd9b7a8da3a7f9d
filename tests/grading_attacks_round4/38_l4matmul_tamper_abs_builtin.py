# exercise: L4.matmul
# family: tamper
# What it does wrong: the kernel leaves tl.dot at its default TF32 precision for fp32 inputs (a mistake the
# grader rejects), and BEFORE gpuperf.grading is imported the cell swaps torch.Tensor.abs for another
# built-in method (zero_). The grader's baseline of torch is taken at its import, with the swap in it, and a
# built-in has no code file to betray it; every |x| in the tolerances and in the error then reads 0.
import gpuperf.kernels  # first: without a GPU it switches Triton to its CPU interpreter
import torch

torch.Tensor.abs = torch.Tensor.zero_  # before the grader is imported

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from gpuperf import grading  # noqa: E402


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    ks = tl.arange(0, BLOCK_K).to(tl.int64)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = k0 + ks < K
        a = tl.load(a_ptr + rows[:, None] * sam + (k0 + ks)[None, :] * sak,
                    mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * sbk + cols[None, :] * sbn,
                    mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)  # default precision: TF32 products for fp32 inputs
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    return c


matmul = grading.grade("L4.matmul", matmul)
