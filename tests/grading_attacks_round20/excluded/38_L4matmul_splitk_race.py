# WRONG (race): split-K matmul: program (tile, split) computes a partial sum over its slice of K
# and adds it to C with a plain load + store (C zeroed first): programs of the same tile race on a GPU (lost
# updates); an interpreter running programs one by one gets the right sum.
import math
import torch, triton, triton.language as tl
import gpuperf, gpuperf.kernels
from gpuperf import grading

@triton.jit
def zero_kernel(c_ptr, M, N, stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn,
             tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32), mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  K_PER_SPLIT, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    split = tl.program_id(1)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    height = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % height
    pid_n = (pid % per_group) // height
    rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K).to(tl.int64)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    k_lo = split * K_PER_SPLIT
    k_hi = tl.minimum(K, k_lo + K_PER_SPLIT)
    for k0 in range(k_lo, k_hi, BLOCK_K):
        kk = k0 + ks
        a = tl.load(a_ptr + rows[:, None] * stride_am + kk[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & (kk[None, :] < k_hi), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=(kk[:, None] < k_hi) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    c = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    old = tl.load(c, mask=mask, other=0.0)
    tl.store(c, old + acc, mask=mask)


@triton.jit
def cast_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n).to(dst_ptr.dtype.element_ty), mask=offs < n)


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c32 = torch.empty((M, N), dtype=torch.float32, device=a.device)
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    block_m, block_n, block_k = block_m or 32, block_n or 32, block_k or 32
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    splits = 4 if K >= 4 * block_k else 1
    k_per_split = triton.cdiv(triton.cdiv(K, splits), block_k) * block_k
    zero_kernel[(triton.cdiv(M, block_m), triton.cdiv(N, block_n))](c32, M, N, c32.stride(0), c32.stride(1),
                                                                  BLOCK_M=block_m, BLOCK_N=block_n)
    grid = (triton.cdiv(M, block_m) * triton.cdiv(N, block_n), splits)
    matmul_kernel[grid](a, b, c32, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c32.stride(0),
                        c32.stride(1), k_per_split, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
                        GROUP_M=group_m, PRECISION=precision)
    cast_kernel[(triton.cdiv(M * N, 1024),)](c32, c, M * N, BLOCK=1024)
    return c

result = grading.grade("L4.matmul", matmul)
