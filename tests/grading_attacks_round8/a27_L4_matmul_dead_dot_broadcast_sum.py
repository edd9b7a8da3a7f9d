# exercise: L4.matmul
# family: escape
# What it does wrong: the tile product is a broadcast multiply and a sum (CUDA cores, no tensor cores: the lab
# refuses it, "a broadcast multiply and a sum never reaches the tensor cores"); a full-size tl.dot is computed
# beside it into an accumulator nothing reads, so the interpreter counts m n k multiply-adds of tl.dot; C itself
# comes from the broadcast product (the dot's result is thrown away; a compiler may drop it as dead code).
import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                  stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_ptrs = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    seen = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)  # a dot's result nothing reads: dead code on a GPU
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(rows[:, None] < M) & (k0 + ks[None, :] < K), other=0.0)
        b = tl.load(b_ptrs, mask=(k0 + ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        seen = tl.dot(a, b, seen, input_precision=PRECISION)  # counted by the interpreter, never used
        acc += tl.sum(a.to(tl.float32)[:, :, None] * b.to(tl.float32)[None, :, :], axis=1)  # the real product
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    bm, bn, bk = 32, 32, 16
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, PRECISION=precision)
    return c


matmul = grading.grade("L4.matmul", matmul)
