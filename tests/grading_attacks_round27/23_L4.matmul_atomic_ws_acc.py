# what: CHEAT: the accumulator kept in a workspace of its own in memory, each block of K's tile product atomically added to it (traffic per K block, the lesson's registers skipped), then a cast kernel; atomic adds escape the "workspace stored twice" rule; should be refused
import torch
import triton
import triton.language as tl
from gpuperf import grading

@triton.jit
def mm_kernel(a_ptr, b_ptr, ws_ptr, M, N, K, sam, sak, sbk, sbn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr):
    pid = tl.program_id(0)
    tn = tl.cdiv(N, BN)
    rows = ((pid // tn) * BM + tl.arange(0, BM)).to(tl.int64)
    cols = ((pid % tn) * BN + tl.arange(0, BN)).to(tl.int64)
    ks = tl.arange(0, BK).to(tl.int64)
    off = rows[:, None] * N + cols[None, :]
    ok = (rows[:, None] < M) & (cols[None, :] < N)
    for k0 in range(0, K, BK):
        kk = k0 + ks
        a = tl.load(a_ptr + rows[:, None] * sam + kk[None, :] * sak, mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + cols[None, :] * sbn, mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)
        tl.atomic_add(ws_ptr + off, tl.dot(a, b, input_precision=PREC), mask=ok)

@triton.jit
def cast_kernel(ws_ptr, c_ptr, M, N, scm, scn, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    tn = tl.cdiv(N, BN)
    rows = ((pid // tn) * BM + tl.arange(0, BM)).to(tl.int64)
    cols = ((pid % tn) * BN + tl.arange(0, BN)).to(tl.int64)
    ok = (rows[:, None] < M) & (cols[None, :] < N)
    v = tl.load(ws_ptr + rows[:, None] * N + cols[None, :], mask=ok, other=0.0)
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, v.to(c_ptr.dtype.element_ty), mask=ok)

def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    ws = torch.zeros((M, N), dtype=torch.float32, device=a.device)
    prec = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(M, 32) * triton.cdiv(N, 32),)
    mm_kernel[grid](a, b, ws, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), BM=32, BN=32, BK=32, PREC=prec)
    cast_kernel[grid](ws, c, M, N, c.stride(0), c.stride(1), BM=32, BN=32)
    return c

result = grading.grade("L4.matmul", matmul)
