"""WRONG (a race between programs): split-K matmul into an fp32 workspace from torch.empty (no zero fill): the
program of the FIRST split (pid_k == 0) writes its partial tile with tl.atomic_xchg (to 'initialise' the
workspace; through an int32 view of it, as the interpreter exchanges integers only), the other splits add theirs with tl.atomic_add; C is the workspace cast to C's dtype. It assumes the
first split's program runs before the others: on a GPU nothing orders them, and an add that lands before the
exchange is wiped out (or adds onto garbage). Triton's interpreter runs pid_k = 0 first (grid order), which
hides it."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def mm(a_ptr, b_ptr, ws_ptr, wsi_ptr, M, N, K, sam, sak, sbk, sbn, PER,
       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr):
    pm = tl.program_id(0).to(tl.int64)
    pn = tl.program_id(1).to(tl.int64)
    pk = tl.program_id(2).to(tl.int64)
    rows = pm * BM + tl.arange(0, BM)
    cols = pn * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    k_lo = pk * PER
    for k0 in range(k_lo, tl.minimum(k_lo + PER, K), BK):
        kk = k0 + ks
        a = tl.load(a_ptr + rows[:, None] * sam + kk[None, :] * sak, mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + cols[None, :] * sbn, mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PREC)
    msk = (rows[:, None] < M) & (cols[None, :] < N)
    ptrs = ws_ptr + rows[:, None] * N + cols[None, :]
    if pk == 0:  # "the first split initialises the workspace": assumed to run first
        tl.atomic_xchg(wsi_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.int32, bitcast=True), mask=msk)
    else:
        tl.atomic_add(ptrs, acc, mask=msk)


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    ws = torch.empty((M, N), dtype=torch.float32, device=a.device)
    prec = "ieee" if a.dtype == torch.float32 else "tf32"
    split = 2
    per = triton.cdiv(triton.cdiv(K, 32), split) * 32
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32), split)
    mm[grid](a, b, ws, ws.view(torch.int32), M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), per,
             BM=32, BN=32, BK=32, PREC=prec)
    return ws.to(a.dtype)


result = grading.grade("L4.matmul", matmul)
