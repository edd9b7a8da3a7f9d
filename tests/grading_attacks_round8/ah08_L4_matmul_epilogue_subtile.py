# exercise: L4.matmul
# family: honest
# What it does: a correct tiled matmul (2-D grid, 32 x 32 tiles of C, BLOCK_K = 32, fp32 accumulator) whose
# epilogue stores each tile in two halves of 32 x 16 (the EPILOGUE_SUBTILE idiom of Triton's persistent-matmul
# tutorial: reshape, permute, tl.split, two stores). One program per 32 x 32 tile.
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
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(rows[:, None] < M) & (k0 + ks[None, :] < K), other=0.0)
        b = tl.load(b_ptrs, mask=(k0 + ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision=PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    # epilogue subtiling (Triton's persistent-matmul tutorial, EPILOGUE_SUBTILE): the tile is stored in two
    # halves of BLOCK_N / 2 columns, which halves the registers the store's conversion needs
    halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
    left, right = tl.split(halves)
    cols_l = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N // 2)
    cols_r = cols_l + BLOCK_N // 2
    tl.store(c_ptr + rows[:, None] * stride_cm + cols_l[None, :] * stride_cn, left.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols_l[None, :] < N))
    tl.store(c_ptr + rows[:, None] * stride_cm + cols_r[None, :] * stride_cn, right.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols_r[None, :] < N))


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    bm, bn, bk = 32, 32, 32
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, PRECISION=precision)
    return c


matmul = grading.grade("L4.matmul", matmul)
