"""HONEST: FlashAttention backward as in FlashAttention-2's first Triton version: D per row in a small kernel,
then ONE kernel, a program per block of keys, that walks the queries it sees, accumulating dK and dV in
registers and adding its share of dQ = scale dS K with fp32 atomics into a zeroed fp32 buffer (cast once at
the end). Causal: the walk starts at the key block's diagonal. Inputs read through their own strides."""
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def delta_kernel(o_ptr, do_ptr, delta_ptr, N_Q, H, sob, soh, son, sdb, sdh, sdn,
                 D: tl.constexpr, BM: tl.constexpr):
    bh = tl.program_id(1).to(tl.int64)
    b = bh // H
    h = bh % H
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    msk = rows[:, None] < N_Q
    o = tl.load(o_ptr + b * sob + h * soh + rows[:, None] * son + dims[None, :], mask=msk, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + b * sdb + h * sdh + rows[:, None] * sdn + dims[None, :], mask=msk, other=0.0).to(tl.float32)
    tl.store(delta_ptr + bh * N_Q + rows, tl.sum(o * do, axis=1), mask=rows < N_Q)


@triton.jit
def bwd_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr, N_Q, N_K, H, scale,
               sqb, sqh, sqn, skb, skh, skn, svb, svh, svn, sdb, sdh, sdn,
               CAUSAL: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    pid_n = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    b = bh // H
    h = bh % H
    keys = pid_n * BN + tl.arange(0, BN)
    dims = tl.arange(0, D)
    kmask = keys[:, None] < N_K
    k = tl.load(k_ptr + b * skb + h * skh + keys[:, None] * skn + dims[None, :], mask=kmask, other=0.0)
    v = tl.load(v_ptr + b * svb + h * svh + keys[:, None] * svn + dims[None, :], mask=kmask, other=0.0)
    dk = tl.zeros((BN, D), dtype=tl.float32)
    dv = tl.zeros((BN, D), dtype=tl.float32)
    start = 0
    if CAUSAL:
        start = (pid_n * BN // BM) * BM
    for m0 in range(start, N_Q, BM):
        rows = m0 + tl.arange(0, BM)
        rmask = rows[:, None] < N_Q
        q = tl.load(q_ptr + b * sqb + h * sqh + rows[:, None] * sqn + dims[None, :], mask=rmask, other=0.0)
        do = tl.load(do_ptr + b * sdb + h * sdh + rows[:, None] * sdn + dims[None, :], mask=rmask, other=0.0)
        lse = tl.load(lse_ptr + bh * N_Q + rows, mask=rows < N_Q, other=0.0)
        delta = tl.load(delta_ptr + bh * N_Q + rows, mask=rows < N_Q, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PREC) * scale
        vis = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        if CAUSAL:
            vis = vis & (keys[None, :] <= rows[:, None])
        p = tl.where(vis, tl.exp(s - lse[:, None]), 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision=PREC)
        dp = tl.dot(do, tl.trans(v), input_precision=PREC)
        ds = p * (dp - delta[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision=PREC)
        dq_part = tl.dot(ds.to(k.dtype), k, input_precision=PREC) * scale
        tl.atomic_add(dq_ptr + bh * N_Q * D + rows[:, None] * D + dims[None, :], dq_part, mask=rmask)
    kv = bh * N_K * D + keys[:, None] * D + dims[None, :]
    tl.store(dk_ptr + kv, (dk * scale).to(dk_ptr.dtype.element_ty), mask=kmask)
    tl.store(dv_ptr + kv, dv.to(dv_ptr.dtype.element_ty), mask=kmask)


def attention_backward(q, k, v, o, lse, do, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    lse = lse.float().contiguous()
    delta = torch.empty((B, H, n_q), dtype=torch.float32, device=q.device)
    dq = torch.zeros((B, H, n_q, d), dtype=torch.float32, device=q.device)
    dk = torch.empty((B, H, n_k, d), dtype=k.dtype, device=q.device)
    dv = torch.empty((B, H, n_k, d), dtype=v.dtype, device=q.device)
    prec = "ieee" if q.dtype == torch.float32 else "tf32"
    BM = BN = 32
    delta_kernel[(triton.cdiv(n_q, BM), B * H)](o, do, delta, n_q, H, o.stride(0), o.stride(1), o.stride(2),
                                                do.stride(0), do.stride(1), do.stride(2), D=d, BM=BM)
    bwd_kernel[(triton.cdiv(n_k, BN), B * H)](
        q, k, v, do, lse, delta, dq, dk, dv, n_q, n_k, H, 1.0 / math.sqrt(d),
        q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2), do.stride(0), do.stride(1), do.stride(2),
        CAUSAL=causal, D=d, BM=BM, BN=BN, PREC=prec)
    return dq.to(q.dtype), dk, dv


result = grading.grade("L6.backward", attention_backward)
