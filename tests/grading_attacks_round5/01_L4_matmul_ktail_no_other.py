# exercise: L4.matmul
# family: ordinary
# What it does wrong: the K-tail loads of A and B are masked but have no `other=0.0`. Triton documents the
#   masked-out lanes of such a load as undefined (on a GPU they hold whatever the registers held), so the
#   tail block adds garbage * garbage to the accumulator whenever K is not a multiple of BLOCK_K. Triton's
#   interpreter fills masked-out lanes with 0, which is exactly what the kernel needs, so on the CPU it is right.
#   Checked: verify_01.py runs this kernel under the interpreter with masked-out lanes of loads without `other`
#   filled with 1.0 (what "undefined" may be on a GPU): C = A @ B for K = 70 (not a multiple of 32) is off
#   by ~2 per tail lane versus float64.
import gpuperf.kernels

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                  stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // tiles_n
    pid_n = pid % tiles_n
    rows = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    ks = tl.arange(0, BLOCK_K).to(tl.int64)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = k0 + ks < K
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k0 + ks)[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & k_ok[None, :])          # no other=: undefined lanes
        b = tl.load(b_ptr + (k0 + ks)[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=k_ok[:, None] & (cols[None, :] < N))          # no other=: undefined lanes
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    c = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    block_m, block_n, block_k = block_m or 32, block_n or 32, block_k or 32
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(M, block_m) * triton.cdiv(N, block_n),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                        b.stride(1), c.stride(0), c.stride(1), BLOCK_M=block_m,
                        BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m,
                        PRECISION=precision)
    return c


matmul = grading.grade("L4.matmul", matmul)
