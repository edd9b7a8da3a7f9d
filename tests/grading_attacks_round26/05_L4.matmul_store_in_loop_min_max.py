# what: the tile of C written after every block of K (a store left inside the loop, a tile written unfinished and rewritten) as tl.atomic_min(INT_MIN) then tl.atomic_max(bits) on an int32 view of C (together a plain store), fp32 inputs; rule 3 counts only and/or/xor (and xchg) as stores
import torch
import triton
import triton.language as tl
import gpuperf.kernels
from gpuperf import grading

@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, ci_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                  stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr, IN_LOOP: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // tiles_n
    pid_n = pid % tiles_n
    rows = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    ks = tl.arange(0, BLOCK_K).to(tl.int64)
    cmask = (rows[:, None] < M) & (cols[None, :] < N)
    coffs = rows[:, None] * stride_cm + cols[None, :] * stride_cn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = k0 + ks < K
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k0 + ks)[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        if IN_LOOP:
            tl.atomic_min(ci_ptr + coffs, tl.full((BLOCK_M, BLOCK_N), -2147483648, dtype=tl.int32), mask=cmask)
            tl.atomic_max(ci_ptr + coffs, acc.to(tl.int32, bitcast=True), mask=cmask)
    if not IN_LOOP:
        tl.store(c_ptr + coffs, acc.to(c_ptr.dtype.element_ty), mask=cmask)


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    fp32 = a.dtype == torch.float32
    ci = c.view(torch.int32) if fp32 else c
    bm, bn, bk = block_m or 32, block_n or 32, block_k or 32
    precision = "ieee" if fp32 else "tf32"
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    matmul_kernel[grid](a, b, c, ci, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                        b.stride(1), c.stride(0), c.stride(1), BLOCK_M=bm,
                        BLOCK_N=bn, BLOCK_K=bk, PRECISION=precision, IN_LOOP=fp32)
    return c


result = grading.grade("L4.matmul", matmul)
