"""WRONG: split-K with plain stores: the SPLIT programs of one tile each store their partial sum to the
same C tile (a race; the last writer wins), then... every split writes acc of its slice only."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, PER, BM: tl.constexpr, BN: tl.constexpr,
       BK: tl.constexpr, PREC: tl.constexpr):
    pm = tl.program_id(0).to(tl.int64)
    pn = tl.program_id(1).to(tl.int64)
    ps = tl.program_id(2).to(tl.int64)
    rows = pm * BM + tl.arange(0, BM)
    cols = pn * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(ps * PER, tl.minimum(ps * PER + PER, K), BK):
        kk = k0 + ks
        a = tl.load(a_ptr + rows[:, None] * sam + kk[None, :] * sak, mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + cols[None, :] * sbn, mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PREC)
    # read-modify-write (not atomic): programs of one tile race
    cp = c_ptr + rows[:, None] * scm + cols[None, :] * scn
    msk = (rows[:, None] < M) & (cols[None, :] < N)
    old = tl.load(cp, mask=msk, other=0.0)
    tl.store(cp, old + acc, mask=msk)


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.zeros((M, N), dtype=torch.float32, device=a.device)
    prec = "ieee" if a.dtype == torch.float32 else "tf32"
    split = 2
    per = triton.cdiv(triton.cdiv(K, 32), split) * 32
    mm[(triton.cdiv(M, 32), triton.cdiv(N, 32), split)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                                        c.stride(0), c.stride(1), per, BM=32, BN=32, BK=32, PREC=prec)
    return c.to(a.dtype)


result = grading.grade("L4.matmul", matmul)
