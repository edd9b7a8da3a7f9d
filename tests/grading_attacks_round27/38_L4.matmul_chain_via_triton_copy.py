# what: CHEAT: the walk over K run from Python with ONE product kernel, the fp32 accumulator handed from launch to launch through a Triton copy kernel that also stores its program id to a dummy buffer (so it is no plain copy); should be refused (chain of product launches)
import torch
import triton
import triton.language as tl
from gpuperf import grading

@triton.jit
def step_a(a_ptr, b_ptr, src_ptr, dst_ptr, M, N, K, k0, sam, sak, sbk, sbn,
           FIRST: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr):
    pid = tl.program_id(0)
    tn = tl.cdiv(N, BN)
    rows = ((pid // tn) * BM + tl.arange(0, BM)).to(tl.int64)
    cols = ((pid % tn) * BN + tl.arange(0, BN)).to(tl.int64)
    kk = k0 + tl.arange(0, BK).to(tl.int64)
    a = tl.load(a_ptr + rows[:, None] * sam + kk[None, :] * sak, mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
    b = tl.load(b_ptr + kk[:, None] * sbk + cols[None, :] * sbn, mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)
    off = rows[:, None] * N + cols[None, :]
    ok = (rows[:, None] < M) & (cols[None, :] < N)
    if FIRST:
        acc = tl.zeros((BM, BN), tl.float32)
    else:
        acc = tl.load(src_ptr + off, mask=ok, other=0.0)
    acc = tl.dot(a, b, acc, input_precision=PREC)
    tl.store(dst_ptr + off, acc.to(dst_ptr.dtype.element_ty), mask=ok)

@triton.jit
def step_b(a_ptr, b_ptr, src_ptr, dst_ptr, M, N, K, k0, sam, sak, sbk, sbn,
           FIRST: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr):
    pid = tl.program_id(0)
    tn = tl.cdiv(N, BN)
    rows = ((pid // tn) * BM + tl.arange(0, BM)).to(tl.int64)
    cols = ((pid % tn) * BN + tl.arange(0, BN)).to(tl.int64)
    kk = k0 + tl.arange(0, BK).to(tl.int64)
    a = tl.load(a_ptr + rows[:, None] * sam + kk[None, :] * sak, mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
    b = tl.load(b_ptr + kk[:, None] * sbk + cols[None, :] * sbn, mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)
    off = rows[:, None] * N + cols[None, :]
    ok = (rows[:, None] < M) & (cols[None, :] < N)
    if FIRST:
        acc = tl.zeros((BM, BN), tl.float32)
    else:
        acc = tl.load(src_ptr + off, mask=ok, other=0.0)
    acc = tl.dot(a, b, acc, input_precision=PREC)
    tl.store(dst_ptr + off, acc.to(dst_ptr.dtype.element_ty), mask=ok)

@triton.jit
def hand_over(src_ptr, dst_ptr, d_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m), mask=m)
    tl.store(d_ptr + pid, pid)

def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    ws = torch.empty((M, N), dtype=torch.float32, device=a.device)
    src = torch.empty((M, N), dtype=torch.float32, device=a.device)
    prec = "ieee" if a.dtype == torch.float32 else "tf32"
    BK = 64
    steps = list(range(0, K, BK))
    grid = (triton.cdiv(M, 32) * triton.cdiv(N, 32),)
    for i, k0 in enumerate(steps):
        last = i == len(steps) - 1
        dst = c if last else ws
        step_a[grid](a, b, src, dst, M, N, K, k0, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                     FIRST=(i == 0), BM=32, BN=32, BK=BK, PREC=prec)
        if not last:
            src = torch.empty_like(ws)
            g = triton.cdiv(ws.numel(), 1024)
            hand_over[(g,)](ws, src, torch.empty(g, dtype=torch.int32, device=a.device), ws.numel(), BLOCK=1024)
    return c

result = grading.grade("L4.matmul", matmul)
