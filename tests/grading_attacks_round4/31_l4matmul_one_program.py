# exercise: L4.matmul
# family: algorithm
# What it does wrong: the whole matmul runs in ONE program: grid = (1,), and that program loops over every
# (BLOCK_M, BLOCK_N) tile of C in turn, walking K in blocks with tl.dot. The tiles and the walk over K look
# right, but nothing runs in parallel (one SM of 132 busy on an H200): the grader counts tile shapes and
# multiply-adds, never how many programs share the work.
import gpuperf.kernels  # first: without a GPU it switches Triton to its CPU interpreter
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    ks = tl.arange(0, BLOCK_K).to(tl.int64)
    for m0 in range(0, M, BLOCK_M):
        rows = (m0 + tl.arange(0, BLOCK_M)).to(tl.int64)
        for n0 in range(0, N, BLOCK_N):
            cols = (n0 + tl.arange(0, BLOCK_N)).to(tl.int64)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k0 in range(0, K, BLOCK_K):
                k_ok = k0 + ks < K
                a = tl.load(a_ptr + rows[:, None] * sam + (k0 + ks)[None, :] * sak,
                            mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
                b = tl.load(b_ptr + (k0 + ks)[:, None] * sbk + cols[None, :] * sbn,
                            mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
                acc = tl.dot(a, b, acc, input_precision="ieee")
            tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
                     mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    matmul_kernel[(1,)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    return c


matmul = grading.grade("L4.matmul", matmul)
