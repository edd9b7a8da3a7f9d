"""A FlashAttention backward shared by the L6 attacks (the course's three-kernel layout, rewritten), with
switches for the mistakes."""
import math

import torch
import triton
import triton.language as tl


@triton.jit
def rowdot_kernel(o_ptr, do_ptr, delta_ptr, N_Q, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    off = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
    o = tl.load(o_ptr + off, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + off, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    tl.store(delta_ptr + head * N_Q + rows, tl.sum(o * do, axis=1), mask=rows < N_Q)


@triton.jit
def kv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, dq_ptr, N_Q, N_K, scale,
              CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              PRECISION: tl.constexpr, SCALE_DK: tl.constexpr, DV16: tl.constexpr, DQ_HERE: tl.constexpr):
    block_n = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    keys = block_n * BLOCK_N + tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    kv = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
    k = tl.load(k_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
    v = tl.load(v_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
    dk = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    for m0 in range(0, N_Q, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        qo = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
        q = tl.load(q_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
        do = tl.load(do_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
        lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
        delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision=PRECISION)
        if DV16:
            dv = dv.to(tl.float16).to(tl.float32)
        dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)
        ds = p * (dp - delta[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision=PRECISION)
        if DQ_HERE:  # dQ += scale dS K from every key block: a non-atomic read-modify-write (a race on a GPU)
            part = tl.dot(ds.to(k.dtype), k, input_precision=PRECISION) * scale
            old = tl.load(dq_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
            tl.store(dq_ptr + qo, old + part, mask=rows[:, None] < N_Q)
    if SCALE_DK:
        dk = dk * scale
    tl.store(dk_ptr + kv, dk.to(dk_ptr.dtype.element_ty), mask=keys[:, None] < N_K)
    tl.store(dv_ptr + kv, dv.to(dv_ptr.dtype.element_ty), mask=keys[:, None] < N_K)


@triton.jit
def q_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr,
             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    qo = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
    q = tl.load(q_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
    do = tl.load(do_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
    lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    dq = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for n0 in range(0, N_K, BLOCK_N):
        keys = n0 + tl.arange(0, BLOCK_N)
        kv = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
        k = tl.load(k_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
        dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k, input_precision=PRECISION)
    tl.store(dq_ptr + qo, (dq * scale).to(dq_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)


def backward(q, k, v, o, lse, do, causal=False, *, scale_dk=True, dv16=False, dq_race=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    lse = lse.float().contiguous()
    delta = torch.empty_like(lse)
    dk, dv = torch.empty_like(k), torch.empty_like(v)
    dq = torch.zeros(q.shape, dtype=torch.float32, device=q.device) if dq_race else torch.empty_like(q)
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    scale = 1.0 / math.sqrt(d)
    bh = batch * heads
    rowdot_kernel[(triton.cdiv(n_q, 32), bh)](o, do, delta, n_q, HEAD_DIM=d, BLOCK_M=32)
    common = dict(CAUSAL=causal, HEAD_DIM=d, BLOCK_M=32, BLOCK_N=32, PRECISION=precision)
    kv_kernel[(triton.cdiv(n_k, 32), bh)](q, k, v, do, lse, delta, dk, dv, dq, n_q, n_k, scale,
                                          SCALE_DK=scale_dk, DV16=dv16, DQ_HERE=dq_race, **common)
    if dq_race:
        return dq.to(q.dtype), dk, dv
    q_kernel[(triton.cdiv(n_q, 32), bh)](q, k, v, do, lse, delta, dq, n_q, n_k, scale, **common)
    return dq, dk, dv
