"""WRONG (a race between programs): split-K matmul. Each of the SPLIT programs of a tile adds its partial sum
into an fp32 workspace with tl.atomic_add, and the program of the LAST split (pid_k == SPLIT - 1) takes the
value the atomic returns (the sum of the splits added before it), adds its own part and stores the finished
tile to C, rounded to C's dtype. That assumes the program of the last split runs after the others: nothing
orders the programs of one launch on a GPU, so C misses the partial sums of the splits still running.
Triton's interpreter runs the programs one after another in grid order (axis 2 innermost), which hides it."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def mm(a_ptr, b_ptr, ws_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, PER, SPLIT: tl.constexpr,
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
    before = tl.atomic_add(ws_ptr + rows[:, None] * N + cols[None, :], acc, mask=msk)
    if pk == SPLIT - 1:  # "the last split": assumed to run after the others
        tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, (before + acc).to(c_ptr.dtype.element_ty), mask=msk)


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    ws = torch.zeros((M, N), dtype=torch.float32, device=a.device)
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    prec = "ieee" if a.dtype == torch.float32 else "tf32"
    split = 2
    per = triton.cdiv(triton.cdiv(K, 32), split) * 32
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32), split)
    mm[grid](a, b, ws, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
             per, SPLIT=split, BM=32, BN=32, BK=32, PREC=prec)
    return c


result = grading.grade("L4.matmul", matmul)
