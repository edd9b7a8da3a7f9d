# exercise: L4.matmul
# family: algorithm
# What it does wrong: launched on the right grid (one program per tile of C), but program 0 computes every tile
# one after another and the other programs return at once: one multiprocessor does the whole matmul. No decoy
# launch: the programs check counts the programs of the launch that stores C, not the programs that store.
import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                  stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    tiles_n = tl.cdiv(N, BLOCK_N)
    ks = tl.arange(0, BLOCK_K).to(tl.int64)
    if tl.program_id(0) == 0:  # program 0 computes every tile; the others are idle
        for t in range(0, tl.cdiv(M, BLOCK_M) * tiles_n):
            rows = ((t // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
            cols = ((t % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k0 in range(0, K, BLOCK_K):
                k_ok = k0 + ks < K
                a = tl.load(a_ptr + rows[:, None] * stride_am + (k0 + ks)[None, :] * stride_ak,
                            mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
                b = tl.load(b_ptr + (k0 + ks)[:, None] * stride_bk + cols[None, :] * stride_bn,
                            mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
                acc = tl.dot(a, b, acc, input_precision=PRECISION)
            tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
                     mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(M, 32) * triton.cdiv(N, 32),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, PRECISION=precision)
    return c


matmul = grading.grade("L4.matmul", matmul)
