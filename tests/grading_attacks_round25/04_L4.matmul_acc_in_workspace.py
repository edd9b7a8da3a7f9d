# what: the accumulator kept in a global fp32 workspace (loaded, added to, stored back every block of K, as a C triple loop does `C[i][j] += ...`): 2*K/BLOCK_K tile round trips per tile instead of one store
import torch
import triton
import triton.language as tl
import gpuperf.kernels
from gpuperf import grading

@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, ws_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                  stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // tiles_n
    pid_n = pid % tiles_n
    rows = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    ks = tl.arange(0, BLOCK_K).to(tl.int64)
    cmask = (rows[:, None] < M) & (cols[None, :] < N)
    ws = ws_ptr + rows[:, None] * N + cols[None, :]
    tl.store(ws, tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32), mask=cmask)
    for k0 in range(0, K, BLOCK_K):
        k_ok = k0 + ks < K
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k0 + ks)[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        acc = tl.load(ws, mask=cmask, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        tl.store(ws, acc, mask=cmask)
    acc = tl.load(ws, mask=cmask, other=0.0)
    c = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=cmask)


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    ws = torch.empty((M, N), dtype=torch.float32, device=a.device)
    block_m = block_m or 32
    block_n = block_n or 32
    block_k = block_k or 32
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(M, block_m) * triton.cdiv(N, block_n),)
    matmul_kernel[grid](a, b, c, ws, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                        b.stride(1), c.stride(0), c.stride(1), BLOCK_M=block_m,
                        BLOCK_N=block_n, BLOCK_K=block_k, PRECISION=precision)
    return c


result = grading.grade("L4.matmul", matmul)
