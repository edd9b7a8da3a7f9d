# exercise: L4.matmul
# family: ordinary
# why: rows * stride_am and (k0+ks) * stride_bk in 32 bits: a 50000 x 50000 operand wraps; the course's kernel widens
#   to int64.
import gpuperf.kernels  # noqa: F401  (switches on the interpreter without a GPU)
import math
import torch
import triton
import triton.language as tl
import gpuperf.kernels as _gk
from gpuperf import grading


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                  stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles_per_group = GROUP_M * tiles_n
    first_m = (pid // tiles_per_group) * GROUP_M
    group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % tiles_per_group) % group_rows
    pid_n = (pid % tiles_per_group) // group_rows
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = k0 + ks < K
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k0 + ks)[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    c = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    on_gpu = a.is_cuda and not _gk.interpreter_enabled()
    wide = 128 if a.element_size() == 2 else 64
    block_m = block_m or (wide if on_gpu else 32)
    block_n = block_n or (wide if on_gpu else 32)
    block_k = block_k or 32
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(M, block_m) * triton.cdiv(N, block_n),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1), BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m,
                        PRECISION=precision)
    return c


matmul = grading.grade("L4.matmul", matmul)
