"""HONEST (found by the tenth session's review of the ninth's grader change): split-K. The course's grouped, tiled
matmul with a second grid axis that splits K in two slices for fp32 inputs with K >= 256 (partial tiles added to a
zeroed C by `tl.atomic_add`), one slice otherwise; SPLIT passed at run time, so Triton folds SPLIT = 1 into a
constant. Each program counts its blocks of K as `(k_end - k_start + BLOCK_K - 1) // BLOCK_K`.

Why the grader refused it: a quotient of a value computed from the axis-1 program id marked that axis a block's
index (round 17's 13), so `pid_k * per` lost the split-K exemption of the 32-bit mask rule. A quotient marks a
block's index now only where what is divided was built from the program id by products and sums; the slice's
length is a difference.
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                  stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  PRECISION: tl.constexpr, SPLIT):
    # Grouped order: GROUP_M rows of tiles are walked column by column, so the programs running
    # at the same time share tiles of A and B in L2.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles_per_group = GROUP_M * tiles_n
    first_m = (pid // tiles_per_group) * GROUP_M
    group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % tiles_per_group) % group_rows
    pid_n = (pid % tiles_per_group) // group_rows

    # 64-bit indices before any product with a stride: past 2^31 elements a 32-bit one wraps
    rows = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    ks = tl.arange(0, BLOCK_K).to(tl.int64)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    per = tl.cdiv(K, SPLIT * BLOCK_K) * BLOCK_K  # this program's slice of K
    k_start = tl.program_id(1) * per
    k_end = tl.minimum(K, k_start + per)
    n_it = (k_end - k_start + BLOCK_K - 1) // BLOCK_K  # this slice's blocks of K
    for i in range(0, n_it):
        k0 = k_start + i * BLOCK_K
        k_ok = k0 + ks < k_end
        a_tile = a_ptr + rows[:, None] * stride_am + (k0 + ks)[None, :] * stride_ak
        b_tile = b_ptr + (k0 + ks)[:, None] * stride_bk + cols[None, :] * stride_bn
        a = tl.load(a_tile, mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_tile, mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)  # fp32 accumulation
    c = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    if SPLIT == 1:
        tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < M) & (cols[None, :] < N))
    else:  # fp32 C from torch.zeros: the slices' partial sums added
        tl.atomic_add(c, acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    split = 2 if (a.dtype == torch.float32 and K >= 256) else 1  # split-K on long K (fp32: atomics onto zeros)
    c = torch.zeros((M, N), dtype=a.dtype, device=a.device) if split > 1 else \
        torch.empty((M, N), dtype=a.dtype, device=a.device)
    on_gpu = a.is_cuda and not gpuperf.kernels.interpreter_enabled()
    wide = 128 if a.element_size() == 2 else 64  # fp32 tiles take twice the memory
    block_m = block_m or (wide if on_gpu else 32)
    block_n = block_n or (wide if on_gpu else 32)
    block_k = block_k or 32
    # fp32 inputs: true fp32 products ("ieee"); Triton's default rounds them to TF32.
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(M, block_m) * triton.cdiv(N, block_n), split)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                        b.stride(1), c.stride(0), c.stride(1), BLOCK_M=block_m,
                        BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m,
                        PRECISION=precision, SPLIT=split)
    return c


result = grading.grade("L4.matmul", matmul)
