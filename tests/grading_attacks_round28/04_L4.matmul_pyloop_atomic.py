# what: the walk over K run from Python, one launch per block of K, each launch atomically adding its A_k B_k tile into an fp32 workspace (nothing reads it until the cast): an accumulator kept in memory that the chain rule should refuse
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def step_kernel(a_ptr, b_ptr, ws_ptr, M, N, K, k0, sam, sak, sbk, sbn,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1).to(tl.int64)
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    kk = (k0 + tl.arange(0, BK)).to(tl.int64)
    a = tl.load(a_ptr + rows[:, None] * sam + kk[None, :] * sak, mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
    b = tl.load(b_ptr + kk[:, None] * sbk + cols[None, :] * sbn, mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)
    p = tl.dot(a, b, input_precision="ieee") if a.dtype == tl.float32 else tl.dot(a, b)
    tl.atomic_add(ws_ptr + rows[:, None] * N + cols[None, :], p, mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def cast_kernel(ws_ptr, c_ptr, M, N, scm, scn, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BM + tl.arange(0, BM)
    cols = tl.program_id(1).to(tl.int64) * BN + tl.arange(0, BN)
    m = (rows[:, None] < M) & (cols[None, :] < N)
    v = tl.load(ws_ptr + rows[:, None] * N + cols[None, :], mask=m)
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, v.to(c_ptr.dtype.element_ty), mask=m)


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    ws = torch.zeros((M, N), dtype=torch.float32, device=a.device)
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
    for k0 in range(0, K, 32):
        step_kernel[grid](a, b, ws, M, N, K, k0, a.stride(0), a.stride(1), b.stride(0), b.stride(1), BM=32, BN=32, BK=32)
    cast_kernel[grid](ws, c, M, N, c.stride(0), c.stride(1), BM=32, BN=32)
    return c


result = grading.grade("L4.matmul", matmul)
