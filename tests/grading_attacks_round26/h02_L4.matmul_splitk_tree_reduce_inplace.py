# what: honest: split-K with 8 slices into a workspace [8, M, N], then a tree reduction in place (8 -> 4 -> 2 slices, each launch adding the upper half onto the lower half), then a kernel that adds the last two and casts into C
import torch
import triton
import triton.language as tl
import gpuperf.kernels
from gpuperf import grading

@triton.jit
def partial_kernel(a_ptr, b_ptr, w_ptr, M, N, K, K_PER, stride_am, stride_ak, stride_bk, stride_bn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    split = tl.program_id(1).to(tl.int64)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = ((pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = ((pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    ks = tl.arange(0, BLOCK_K).to(tl.int64)
    k_lo = split * K_PER
    k_hi = tl.minimum(k_lo + K_PER, K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(k_lo, k_hi, BLOCK_K):
        kk = k0 + ks
        a = tl.load(a_ptr + rows[:, None] * stride_am + kk[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & (kk[None, :] < k_hi), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=(kk[:, None] < k_hi) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(w_ptr + split * M * N + rows[:, None] * N + cols[None, :], acc,
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def fold_kernel(w_ptr, MN, HALF, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    s = tl.program_id(1).to(tl.int64)
    mask = offs < MN
    lo = tl.load(w_ptr + s * MN + offs, mask=mask)
    hi = tl.load(w_ptr + (s + HALF) * MN + offs, mask=mask)
    tl.store(w_ptr + s * MN + offs, lo + hi, mask=mask)


@triton.jit
def reduce_kernel(w_ptr, c_ptr, M, N, stride_cm, stride_cn, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < M * N
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(SPLIT):
        total += tl.load(w_ptr + s * M * N + offs, mask=mask, other=0.0)
    r = offs // N
    col = offs % N
    tl.store(c_ptr + r * stride_cm + col * stride_cn, total.to(c_ptr.dtype.element_ty), mask=mask)


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    bm, bn, bk = block_m or 32, block_n or 32, block_k or 32
    split = 8 if K >= 8 * bk else 1
    k_per = triton.cdiv(triton.cdiv(K, split), bk) * bk
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    w = torch.empty((split, M, N), dtype=torch.float32, device=a.device)
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    partial_kernel[(triton.cdiv(M, bm) * triton.cdiv(N, bn), split)](
        a, b, w, M, N, K, k_per, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, PRECISION=precision)
    while split > 2:
        split //= 2
        fold_kernel[(triton.cdiv(M * N, 1024), split)](w, M * N, split, BLOCK=1024)
    reduce_kernel[(triton.cdiv(M * N, 1024),)](w, c, M, N, c.stride(0), c.stride(1), SPLIT=split, BLOCK=1024)
    return c


result = grading.grade("L4.matmul", matmul)
