# exercise: L4.matmul
# family: ordinary
# What it does wrong: split-K: program (tile, split) multiplies its share of K and adds it into an fp32 buffer
#   with tl.atomic_add; the program of the last split then loads the buffer and writes the tile of C. On a GPU
#   the programs of one launch run in any order, so the "last" split may read the buffer before the others
#   have added to it. The interpreter runs them in index order, and the grader's race check never compares a
#   load with other programs' accumulating atomics. Checked: verify_08.py runs the kernel with the programs
#   in reverse order (a legal GPU schedule): C holds only the last split's share (errors of order 10).
import gpuperf.kernels

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, acc_ptr, M, N, K, K_PER_SPLIT, stride_am, stride_ak, stride_bk,
                  stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    split = tl.program_id(1).to(tl.int64)
    tiles_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // tiles_n
    pid_n = pid % tiles_n
    rows = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
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
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    tile = rows[:, None] * N + cols[None, :]
    tl.atomic_add(acc_ptr + tile, acc, mask=inside)
    if split == tl.num_programs(1) - 1:  # the last split: the others have added theirs
        total = tl.load(acc_ptr + tile, mask=inside, other=0.0)
        tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn,
                 total.to(c_ptr.dtype.element_ty), mask=inside)


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    acc = torch.zeros((M, N), dtype=torch.float32, device=a.device)
    block_m, block_n, block_k = 32, 32, 32
    splits = 4
    k_per_split = triton.cdiv(triton.cdiv(K, splits), block_k) * block_k
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(M, block_m) * triton.cdiv(N, block_n), splits)
    matmul_kernel[grid](a, b, c, acc, M, N, K, k_per_split, a.stride(0), a.stride(1), b.stride(0),
                        b.stride(1), c.stride(0), c.stride(1), BLOCK_M=block_m, BLOCK_N=block_n,
                        BLOCK_K=block_k, PRECISION=precision)
    return c


matmul = grading.grade("L4.matmul", matmul)
