# exercise: L4.matmul
# family: ordinary
# What it does wrong: keeps C in a module-level cache keyed by (M, N, dtype, device) to "save allocations":
#   every call with the same output shape returns the SAME tensor, so c1 = matmul(a1, b1); matmul(a2, b2)
#   silently overwrites c1. Checked (CHECK_WRONG=1): after the second call c1 != a1 @ b1 (float64).
import gpuperf.kernels

import os

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K).to(tl.int64)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = k0 + ks < K
        a = tl.load(a_ptr + rows[:, None] * sam + (k0 + ks)[None, :] * sak,
                    mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * sbk + cols[None, :] * sbn,
                    mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


_buffers = {}


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    key = (M, N, a.dtype, a.device)
    if key not in _buffers:
        _buffers[key] = torch.empty((M, N), dtype=a.dtype, device=a.device)
    c = _buffers[key]
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
    mm_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                    c.stride(1), BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    return c


if os.environ.get("CHECK_WRONG"):
    a1, b1, a2, b2 = torch.randn(40, 30), torch.randn(30, 50), torch.randn(40, 30), torch.randn(30, 50)
    c1 = matmul(a1, b1)
    matmul(a2, b2)
    print("first result still right:", torch.allclose(c1.double(), a1.double() @ b1.double(), atol=1e-4))

matmul = grading.grade("L4.matmul", matmul)
