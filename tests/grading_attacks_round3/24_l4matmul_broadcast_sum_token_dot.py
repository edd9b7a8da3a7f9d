# exercise: L4.matmul
# family: algorithm
# What is wrong: the tile product is a broadcast multiply and a sum over K, (BM, BK, 1) * (1, BK, BN)
# summed on axis 1: it never reaches the tensor cores (the grader's own message says so). To get past the
# check that "your kernel multiplies no tiles with Triton's dot", the kernel runs one tl.dot of two
# all-zero 16 x 16 tiles whose result is added to the accumulator (adding zero changes nothing).
import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def matmul_fma_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + ks
        a = tl.load(a_ptr + rows[:, None] * sam + kk[None, :] * sak,
                    mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0).to(tl.float32)
        b = tl.load(b_ptr + kk[:, None].to(tl.int64) * sbk + cols[None, :] * sbn,
                    mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0).to(tl.float32)
        acc += tl.sum(a[:, :, None] * b[None, :, :], axis=1)  # CUDA-core FMAs, no tensor cores
    token = tl.dot(tl.zeros((BLOCK_M, 16), dtype=tl.float32), tl.zeros((16, BLOCK_N), dtype=tl.float32),
                   input_precision="ieee")  # a dot for the grader to count: adds 0
    acc += token
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 32))
    matmul_fma_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                            c.stride(0), c.stride(1), BLOCK_M=16, BLOCK_N=32, BLOCK_K=16)
    return c


matmul = grading.grade("L4.matmul", matmul)
