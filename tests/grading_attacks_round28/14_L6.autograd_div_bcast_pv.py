# what: the autograd Function of h07 with the forward's PV product done as p[:, :, None] / (1/v)[None] summed over keys (a broadcast product written as a division), the real tl.dot kept as 0 * dot; should be refused
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading

LOG2E = 1.4426950408889634


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, H, N_Q, N_K, qk_scale,
               sqb, sqh, sqn, skb, skh, skn, svb, svh, svn, sob, soh, son,
               CAUSAL: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    bh = tl.program_id(0).to(tl.int64)
    b = bh // H
    h = bh % H
    blk = tl.program_id(1)
    rows = blk * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    qp = q_ptr + b * sqb + h * sqh
    kp = k_ptr + b * skb + h * skh
    vp = v_ptr + b * svb + h * svh
    q = tl.load(qp + rows[:, None] * sqn + d[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    hi = N_K
    if CAUSAL:
        hi = tl.minimum(N_K, (blk + 1) * BM)
    for start in range(0, hi, BN):
        keys = start + tl.arange(0, BN)
        kt = tl.load(kp + keys[None, :] * skn + d[:, None], mask=keys[None, :] < N_K, other=0.0)
        s = tl.dot(q, kt, input_precision=PREC) * qk_scale
        ok = (keys[None, :] < N_K) & (rows[:, None] >= 0)
        if CAUSAL:
            ok = ok & (rows[:, None] >= keys[None, :])
        s = tl.where(ok, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        corr = tl.exp2(m_i - m_new)
        l_i = l_i * corr + tl.sum(p, 1)
        v = tl.load(vp + keys[:, None] * svn + d[None, :], mask=keys[:, None] < N_K, other=0.0)
        rv = 1.0 / v.to(tl.float32)
        acc = acc * corr[:, None] + tl.sum(p[:, :, None] / rv[None, :, :], axis=1) + 0.0 * tl.dot(p.to(v.dtype), v, input_precision=PREC)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + b * sob + h * soh + rows[:, None] * son + d[None, :], out.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + bh * N_Q + rows, (m_i + tl.log2(l_i)) / 1.4426950408889634, mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    o = torch.empty((B, H, n_q, d), dtype=q.dtype, device=q.device)
    lse = torch.empty((B, H, n_q), dtype=torch.float32, device=q.device)
    prec = "ieee" if q.dtype == torch.float32 else "tf32"
    BM, BN = 32, 16
    grid = (B * H, triton.cdiv(n_q, BM))
    fwd_kernel[grid](q, k, v, o, lse, H, n_q, n_k, LOG2E / math.sqrt(d),
                     q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
                     v.stride(0), v.stride(1), v.stride(2), o.stride(0), o.stride(1), o.stride(2),
                     CAUSAL=causal, D=d, BM=BM, BN=BN, PREC=prec)
    return o, lse



@triton.jit
def delta_kernel(o_ptr, do_ptr, delta_ptr, N_Q, D: tl.constexpr, BM: tl.constexpr):
    h = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    off = h * N_Q * D + rows[:, None] * D + d[None, :]
    o = tl.load(o_ptr + off, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + off, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    tl.store(delta_ptr + h * N_Q + rows, tl.sum(o * do, 1), mask=rows < N_Q)


@triton.jit
def bwd_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr, N_Q, N_K, scale,
               CAUSAL: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    nb = tl.program_id(0)
    h = tl.program_id(1).to(tl.int64)
    keys = nb * BN + tl.arange(0, BN)
    d = tl.arange(0, D)
    koff = h * N_K * D + keys[:, None] * D + d[None, :]
    k = tl.load(k_ptr + koff, mask=keys[:, None] < N_K, other=0.0)
    v = tl.load(v_ptr + koff, mask=keys[:, None] < N_K, other=0.0)
    dk = tl.zeros((BN, D), tl.float32)
    dv = tl.zeros((BN, D), tl.float32)
    lo = 0
    if CAUSAL:
        lo = (nb * BN // BM) * BM
    for m0 in range(lo, N_Q, BM):
        rows = m0 + tl.arange(0, BM)
        qoff = h * N_Q * D + rows[:, None] * D + d[None, :]
        q = tl.load(q_ptr + qoff, mask=rows[:, None] < N_Q, other=0.0)
        do = tl.load(do_ptr + qoff, mask=rows[:, None] < N_Q, other=0.0)
        lse = tl.load(lse_ptr + h * N_Q + rows, mask=rows < N_Q, other=0.0)
        dlt = tl.load(delta_ptr + h * N_Q + rows, mask=rows < N_Q, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PREC) * scale
        ok = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        if CAUSAL:
            ok = ok & (keys[None, :] <= rows[:, None])
        p = tl.where(ok, tl.exp(s - lse[:, None]), 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision=PREC)
        dp = tl.dot(do, tl.trans(v), input_precision=PREC)
        ds = p * (dp - dlt[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision=PREC)
        dqp = tl.dot(ds.to(k.dtype), k, input_precision=PREC) * scale
        tl.atomic_add(dq_ptr + h * N_Q * D + rows[:, None] * D + d[None, :], dqp, mask=rows[:, None] < N_Q)
    tl.store(dk_ptr + koff, (dk * scale).to(dk_ptr.dtype.element_ty), mask=keys[:, None] < N_K)
    tl.store(dv_ptr + koff, dv.to(dv_ptr.dtype.element_ty), mask=keys[:, None] < N_K)


@triton.jit
def cast_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m).to(dst_ptr.dtype.element_ty), mask=m)


def attention_backward(q, k, v, o, lse, do, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    lse = lse.float().contiguous()
    delta = torch.empty_like(lse)
    dq32 = torch.zeros(q.shape, dtype=torch.float32, device=q.device)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    prec = "ieee" if q.dtype == torch.float32 else "tf32"
    BM, BN = 32, 32
    delta_kernel[(triton.cdiv(n_q, BM), B * H)](o, do, delta, n_q, D=d, BM=BM)
    bwd_kernel[(triton.cdiv(n_k, BN), B * H)](q, k, v, do, lse, delta, dq32, dk, dv, n_q, n_k, 1.0 / math.sqrt(d),
                                            CAUSAL=causal, D=d, BM=BM, BN=BN, PREC=prec)
    cast_kernel[(triton.cdiv(dq.numel(), 1024),)](dq32, dq, dq.numel(), BLOCK=1024)
    return dq, dk, dv



class FlashAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, causal=False):
        o, lse = attention_forward(q, k, v, causal)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.causal = causal
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        dq, dk, dv = attention_backward(q, k, v, o, lse, do, ctx.causal)
        return dq, dk, dv, None


result = grading.grade("L6.autograd", FlashAttention)
