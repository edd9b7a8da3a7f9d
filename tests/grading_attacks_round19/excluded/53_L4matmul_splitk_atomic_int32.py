"""WRONG: split-K matmul whose partial tiles are added into the fp32 workspace with tl.atomic_add at 32-bit
offsets: rows = pid_m * BLOCK_M + arange (int32) times N. Past 2^31 elements of C the offsets wrap and the
atomics add into the wrong elements. (The loads use 64-bit offsets; only the atomic's address is 32-bit.)"""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def mm(a_ptr, b_ptr, ws_ptr, M, N, K, sam, sak, sbk, sbn, PER,
       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    pk = tl.program_id(2).to(tl.int64)
    rows32 = pm * BM + tl.arange(0, BM)
    cols32 = pn * BN + tl.arange(0, BN)
    rows = rows32.to(tl.int64)
    cols = cols32.to(tl.int64)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    k_lo = pk * PER
    for k0 in range(k_lo, tl.minimum(k_lo + PER, K), BK):
        kk = k0 + ks
        a = tl.load(a_ptr + rows[:, None] * sam + kk[None, :] * sak, mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + cols[None, :] * sbn, mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PREC)
    tl.atomic_add(ws_ptr + rows32[:, None] * N + cols32[None, :], acc, mask=(rows32[:, None] < M) & (cols32[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    ws = torch.zeros((M, N), dtype=torch.float32, device=a.device)
    prec = "ieee" if a.dtype == torch.float32 else "tf32"
    split = 2
    per = triton.cdiv(triton.cdiv(K, 32), split) * 32
    mm[(triton.cdiv(M, 32), triton.cdiv(N, 32), split)](a, b, ws, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                                                        b.stride(1), per, BM=32, BN=32, BK=32, PREC=prec)
    return ws.to(a.dtype)


result = grading.grade("L4.matmul", matmul)
