# exercise: L6.autograd
# family: ordinary
# What it does wrong: its forward's "running" max is the max of the current key block only
#   (m_new = tl.max(s, 1), not tl.maximum(m, tl.max(s, 1))): exp(m - m_new) overflows to inf (then NaN) when a
#   row's max sits in an early key block ~90+ above a later block's max. (Same strided-kernel base as 17; the
#   check below uses contiguous inputs.) Checked (CHECK_WRONG=1): q = 100 k[3] (key 3 scores ~ +400, the
#   later blocks ~ +200 at most): O is NaN, float64 scaled_dot_product_attention is finite.
import gpuperf.kernels

import math
import os

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, H, qk_scale,
               sqb, sqh, sqn, skb, skh, skn, svb, svh, svn, sob, soh, son,
               CAUSAL: tl.constexpr, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    b = bh // H
    h = bh % H
    rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + b * sqb + h * sqh + rows[:, None] * sqn + dims[None, :], mask=rows[:, None] < N_Q,
                other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (pid_m + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N).to(tl.int64)
        k = tl.load(k_ptr + b * skb + h * skh + keys[:, None] * skn + dims[None, :], mask=keys[:, None] < N_K,
                    other=0.0)
        v = tl.load(v_ptr + b * svb + h * svh + keys[:, None] * svn + dims[None, :], mask=keys[:, None] < N_K,
                    other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * qk_scale   # in log2 units
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.max(s, axis=1)   # BUG: the block's max, not the running max
        shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp2(m - shift)
        p = tl.exp2(s - shift[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + b * sob + h * soh + rows[:, None] * son + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + bh * N_Q + rows, (m + tl.log2(l)) * 0.6931471805599453, mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    o = torch.empty((B, H, n_q, d), dtype=q.dtype, device=q.device)
    lse = torch.empty((B, H, n_q), dtype=torch.float32, device=q.device)
    grid = (triton.cdiv(n_q, 64), B * H)
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, H, 1.4426950408889634 / math.sqrt(d),
                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *o.stride()[:3],
                     CAUSAL=causal, D=d, BLOCK_M=64, BLOCK_N=16)
    return o, lse


@triton.jit
def delta_kernel(o_ptr, do_ptr, d_ptr, N_Q, H, sob, soh, son, sdb, sdh, sdn, D: tl.constexpr,
                 BLOCK_M: tl.constexpr):
    bh = tl.program_id(1).to(tl.int64)
    b = bh // H
    h = bh % H
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, D)
    m = rows[:, None] < N_Q
    o = tl.load(o_ptr + b * sob + h * soh + rows[:, None] * son + dims[None, :], mask=m, other=0.0)
    do = tl.load(do_ptr + b * sdb + h * sdh + rows[:, None] * sdn + dims[None, :], mask=m, other=0.0)
    tl.store(d_ptr + bh * N_Q + rows, tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1), mask=rows < N_Q)


@triton.jit
def bwd_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, d_ptr, dq_ptr, dk_ptr, dv_ptr, N_Q, N_K, H, scale, slb, slh, sln,
               sqb, sqh, sqn, skb, skh, skn, svb, svh, svn, sdb, sdh, sdn,
               CAUSAL: tl.constexpr, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_n = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    b = bh // H
    h = bh % H
    keys = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    dims = tl.arange(0, D)
    kmask = keys[:, None] < N_K
    k = tl.load(k_ptr + b * skb + h * skh + keys[:, None] * skn + dims[None, :], mask=kmask, other=0.0)
    v = tl.load(v_ptr + b * svb + h * svh + keys[:, None] * svn + dims[None, :], mask=kmask, other=0.0)
    dk = tl.zeros((BLOCK_N, D), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N, D), dtype=tl.float32)
    start = 0
    if CAUSAL:
        start = (pid_n * BLOCK_N // BLOCK_M) * BLOCK_M
    for m0 in range(start, N_Q, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M).to(tl.int64)
        rmask = rows[:, None] < N_Q
        q = tl.load(q_ptr + b * sqb + h * sqh + rows[:, None] * sqn + dims[None, :], mask=rmask, other=0.0)
        do = tl.load(do_ptr + b * sdb + h * sdh + rows[:, None] * sdn + dims[None, :], mask=rmask, other=0.0)
        lse = tl.load(lse_ptr + b * slb + h * slh + rows * sln, mask=rows < N_Q, other=0.0)
        dd = tl.load(d_ptr + bh * N_Q + rows, mask=rows < N_Q, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision="ieee")
        dp = tl.dot(do, tl.trans(v), input_precision="ieee")
        ds = p * (dp - dd[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision="ieee")
        dq_part = tl.dot(ds.to(k.dtype), k, input_precision="ieee") * scale
        tl.atomic_add(dq_ptr + bh * N_Q * D + rows[:, None] * D + dims[None, :], dq_part, mask=rmask)
    out = bh * N_K * D + keys[:, None] * D + dims[None, :]
    tl.store(dk_ptr + out, (dk * scale).to(dk_ptr.dtype.element_ty), mask=kmask)
    tl.store(dv_ptr + out, dv.to(dv_ptr.dtype.element_ty), mask=kmask)


def attention_backward(q, k, v, o, lse, do, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    delta = torch.empty((B, H, n_q), dtype=torch.float32, device=q.device)
    delta_kernel[(triton.cdiv(n_q, 32), B * H)](o, do, delta, n_q, H, *o.stride()[:3], *do.stride()[:3],
                                                D=d, BLOCK_M=32)
    dq32 = torch.zeros((B, H, n_q, d), dtype=torch.float32, device=q.device)
    dk = torch.empty((B, H, n_k, d), dtype=k.dtype, device=q.device)
    dv = torch.empty((B, H, n_k, d), dtype=v.dtype, device=q.device)
    grid = (triton.cdiv(n_k, 32), B * H)
    bwd_kernel[grid](q, k, v, do, lse, delta, dq32, dk, dv, n_q, n_k, H, 1.0 / math.sqrt(d), *lse.stride(),
                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *do.stride()[:3],
                     CAUSAL=causal, D=d, BLOCK_M=32, BLOCK_N=32)
    return dq32.to(q.dtype), dk, dv


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


if os.environ.get("CHECK_WRONG"):
    g = torch.Generator().manual_seed(0)
    k = torch.randn(1, 1, 100, 16, generator=g)
    v = torch.randn(1, 1, 100, 16, generator=g)
    q = k[:, :, 3:4].repeat(1, 1, 8, 1) * 100
    o = FlashAttention.apply(q, k, v, False)
    ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double())
    print("o has NaN:", bool(o.isnan().any()), "ref finite:", bool(ref.isfinite().all()))

FlashAttention = grading.grade("L6.autograd", FlashAttention)
