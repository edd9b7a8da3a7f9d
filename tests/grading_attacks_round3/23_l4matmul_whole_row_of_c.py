# exercise: L4.matmul
# family: algorithm
# What is wrong: C is not tiled in N. Each program owns BLOCK_M rows and ALL N columns of C
# (BLOCK_N = next_power_of_2(N): 2048 for the 1 x ~1500 case), walking K in blocks of 32 with tl.dot.
# On a GPU the accumulator (BLOCK_M x 2048 fp32) does not fit in registers or shared memory, and there are
# only M / BLOCK_M programs. The numbers are right (fp32 accumulation, ieee precision, strides).
import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def matmul_rows_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       PRECISION: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N).to(tl.int64)  # every column of C in one program
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + ks
        a = tl.load(a_ptr + rows[:, None] * sam + kk[None, :] * sak,
                    mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None].to(tl.int64) * sbk + cols[None, :] * sbn,
                    mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    matmul_rows_kernel[(triton.cdiv(M, 16),)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                                              b.stride(1), c.stride(0), c.stride(1), BLOCK_M=16,
                                              BLOCK_N=max(16, triton.next_power_of_2(N)), BLOCK_K=32,
                                              PRECISION=precision)
    return c


matmul = grading.grade("L4.matmul", matmul)
