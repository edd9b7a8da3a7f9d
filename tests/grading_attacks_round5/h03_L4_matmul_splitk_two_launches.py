# exercise: L4.matmul
# family: honest (expected to pass)
# What it does: split-K done right: program (tile, split) adds its share of K into a zeroed fp32 buffer with
#   tl.atomic_add (adds commute), and a second launch converts the buffer to C's type.
import gpuperf.kernels

import math

import torch
import triton
import triton.language as tl

from gpuperf import grading

@triton.jit
def splitk_kernel(a_ptr, b_ptr, acc_ptr, M, N, K, K_PER_SPLIT, stride_am, stride_ak, stride_bk, stride_bn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    split = tl.program_id(1).to(tl.int64)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = ((pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = ((pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    ks = tl.arange(0, BLOCK_K).to(tl.int64)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    k_start = split * K_PER_SPLIT
    for k0 in range(k_start, tl.minimum(k_start + K_PER_SPLIT, K), BLOCK_K):
        k_ok = k0 + ks < K
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k0 + ks)[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.atomic_add(acc_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def convert_kernel(acc_ptr, c_ptr, M, N, stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = (tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(acc_ptr + rows[:, None] * N + cols[None, :], mask=inside, other=0.0)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, x.to(c_ptr.dtype.element_ty), mask=inside)


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    acc = torch.zeros((M, N), dtype=torch.float32, device=a.device)
    splits = 4
    k_per_split = triton.cdiv(triton.cdiv(K, splits), 32) * 32
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    splitk_kernel[(triton.cdiv(M, 32) * triton.cdiv(N, 32), splits)](
        a, b, acc, M, N, K, k_per_split, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
        BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, PRECISION=precision)
    convert_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](acc, c, M, N, c.stride(0), c.stride(1), BLOCK_M=32, BLOCK_N=32)
    return c



matmul = grading.grade("L4.matmul", matmul)
