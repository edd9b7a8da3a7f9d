"""WRONG: the Function keeps q, k, v, O and lse as plain ctx attributes (ctx.q = q) instead of
ctx.save_for_backward: autograd cannot see an in-place change between forward and backward, and the backward
silently differentiates the new values. The backward itself is the course-style three-kernel one."""
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading
from gpuperf.kernels.labs.l5 import attention_forward


@triton.jit
def row_dot(o_ptr, do_ptr, delta_ptr, N_Q, D: tl.constexpr, BM: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    off = head * N_Q * D + rows[:, None] * D + dims[None, :]
    o = tl.load(o_ptr + off, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + off, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    tl.store(delta_ptr + head * N_Q + rows, tl.sum(o * do, axis=1), mask=rows < N_Q)


@triton.jit
def dkdv(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, N_Q, N_K, scale,
         CAUSAL: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    bn = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    keys = bn * BN + tl.arange(0, BN)
    dims = tl.arange(0, D)
    kv = head * N_K * D + keys[:, None] * D + dims[None, :]
    k = tl.load(k_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
    v = tl.load(v_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
    dk = tl.zeros((BN, D), dtype=tl.float32)
    dv = tl.zeros((BN, D), dtype=tl.float32)
    start = 0
    if CAUSAL:
        start = (bn * BN // BM) * BM
    for m0 in range(start, N_Q, BM):
        rows = m0 + tl.arange(0, BM)
        qo = head * N_Q * D + rows[:, None] * D + dims[None, :]
        q = tl.load(q_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
        do = tl.load(do_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
        lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
        delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PREC) * scale
        vis = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        if CAUSAL:
            vis = vis & (keys[None, :] <= rows[:, None])
        p = tl.where(vis, tl.exp(s - lse[:, None]), 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision=PREC)
        dp = tl.dot(do, tl.trans(v), input_precision=PREC)
        ds = p * (dp - delta[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision=PREC)
    tl.store(dk_ptr + kv, (dk * scale).to(dk_ptr.dtype.element_ty), mask=keys[:, None] < N_K)
    tl.store(dv_ptr + kv, dv.to(dv_ptr.dtype.element_ty), mask=keys[:, None] < N_K)


@triton.jit
def dqk(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, N_Q, N_K, scale,
        CAUSAL: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    bm = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = bm * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    qo = head * N_Q * D + rows[:, None] * D + dims[None, :]
    q = tl.load(q_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
    do = tl.load(do_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
    lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    dq = tl.zeros((BM, D), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (bm + 1) * BM)
    for n0 in range(0, end, BN):
        keys = n0 + tl.arange(0, BN)
        kv = head * N_K * D + keys[:, None] * D + dims[None, :]
        k = tl.load(k_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PREC) * scale
        vis = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        if CAUSAL:
            vis = vis & (keys[None, :] <= rows[:, None])
        p = tl.where(vis, tl.exp(s - lse[:, None]), 0.0)
        dp = tl.dot(do, tl.trans(v), input_precision=PREC)
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k, input_precision=PREC)
    tl.store(dq_ptr + qo, (dq * scale).to(dq_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)


def backward_kernels(q, k, v, o, lse, do, causal):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    lse = lse.float().contiguous()
    delta = torch.empty_like(lse)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    prec = "ieee" if q.dtype == torch.float32 else "tf32"
    scale = 1.0 / math.sqrt(d)
    row_dot[(triton.cdiv(n_q, 32), B * H)](o, do, delta, n_q, D=d, BM=32)
    kw = dict(CAUSAL=causal, D=d, BM=32, BN=32, PREC=prec)
    dkdv[(triton.cdiv(n_k, 32), B * H)](q, k, v, do, lse, delta, dk, dv, n_q, n_k, scale, **kw)
    dqk[(triton.cdiv(n_q, 32), B * H)](q, k, v, do, lse, delta, dq, n_q, n_k, scale, **kw)
    return dq, dk, dv


class Attention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, causal=False):
        o, lse = attention_forward(q, k, v, causal)
        ctx.q, ctx.k, ctx.v, ctx.o, ctx.lse = q, k, v, o, lse  # not saved for backward
        ctx.causal = causal
        return o

    @staticmethod
    def backward(ctx, do):
        dq, dk, dv = backward_kernels(ctx.q, ctx.k, ctx.v, ctx.o, ctx.lse, do, ctx.causal)
        return dq, dk, dv, None


result = grading.grade("L6.autograd", Attention)
