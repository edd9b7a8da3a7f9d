# exercise: L6.autograd
# family: algorithm
# What it does wrong: the Function's backward is the textbook (not flash) backward: a first kernel writes the
# whole N_q x N_k probabilities P and dS of every head to HBM (fp32 scratch), two more kernels read them back
# for dV, dK and dQ. O(N^2) memory and traffic, exactly what FlashAttention's backward avoids.
import gpuperf.kernels  # noqa: F401

import math

import torch
import triton
import triton.language as tl

from gpuperf import grading
from gpuperf.kernels.labs.l5 import attention_forward


@triton.jit
def _p_ds(q_ptr, k_ptr, v_ptr, o_ptr, do_ptr, lse_ptr, p_ptr, ds_ptr, N_Q, N_K, scale,
          CAUSAL: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    bm = tl.program_id(0).to(tl.int64)
    bn = tl.program_id(1).to(tl.int64)
    bh = tl.program_id(2).to(tl.int64)
    rows = bm * BM + tl.arange(0, BM)
    keys = bn * BN + tl.arange(0, BN)
    dims = tl.arange(0, D)
    rmask = rows < N_Q
    kmask = keys < N_K
    q = tl.load(q_ptr + bh * N_Q * D + rows[:, None] * D + dims[None, :], mask=rmask[:, None], other=0.0)
    o = tl.load(o_ptr + bh * N_Q * D + rows[:, None] * D + dims[None, :], mask=rmask[:, None], other=0.0)
    do = tl.load(do_ptr + bh * N_Q * D + rows[:, None] * D + dims[None, :], mask=rmask[:, None], other=0.0)
    k = tl.load(k_ptr + bh * N_K * D + keys[:, None] * D + dims[None, :], mask=kmask[:, None], other=0.0)
    v = tl.load(v_ptr + bh * N_K * D + keys[:, None] * D + dims[None, :], mask=kmask[:, None], other=0.0)
    lse = tl.load(lse_ptr + bh * N_Q + rows, mask=rmask, other=0.0)
    delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1)
    s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
    vis = rmask[:, None] & kmask[None, :]
    if CAUSAL:
        vis = vis & (keys[None, :] <= rows[:, None])
    p = tl.where(vis, tl.exp(s - lse[:, None]), 0.0)
    dp = tl.dot(do, tl.trans(v), input_precision="ieee")
    ds = p * (dp - delta[:, None])
    off = bh * N_Q * N_K + rows[:, None] * N_K + keys[None, :]
    tl.store(p_ptr + off, p, mask=rmask[:, None] & kmask[None, :])
    tl.store(ds_ptr + off, ds, mask=rmask[:, None] & kmask[None, :])


@triton.jit
def _dkdv(q_ptr, do_ptr, p_ptr, ds_ptr, dk_ptr, dv_ptr, N_Q, N_K, scale,
          D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    bn = tl.program_id(0).to(tl.int64)
    bh = tl.program_id(1).to(tl.int64)
    keys = bn * BN + tl.arange(0, BN)
    dims = tl.arange(0, D)
    kmask = keys < N_K
    dk = tl.zeros((BN, D), dtype=tl.float32)
    dv = tl.zeros((BN, D), dtype=tl.float32)
    for m0 in range(0, N_Q, BM):
        rows = m0 + tl.arange(0, BM).to(tl.int64)
        rmask = rows < N_Q
        q = tl.load(q_ptr + bh * N_Q * D + rows[:, None] * D + dims[None, :], mask=rmask[:, None], other=0.0)
        do = tl.load(do_ptr + bh * N_Q * D + rows[:, None] * D + dims[None, :], mask=rmask[:, None], other=0.0)
        off = bh * N_Q * N_K + rows[:, None] * N_K + keys[None, :]
        m2 = rmask[:, None] & kmask[None, :]
        p = tl.load(p_ptr + off, mask=m2, other=0.0)
        ds = tl.load(ds_ptr + off, mask=m2, other=0.0)
        dv += tl.dot(tl.trans(p), do.to(tl.float32), input_precision="ieee")
        dk += tl.dot(tl.trans(ds), q.to(tl.float32), input_precision="ieee")
    o = bh * N_K * D + keys[:, None] * D + dims[None, :]
    tl.store(dk_ptr + o, (dk * scale).to(dk_ptr.dtype.element_ty), mask=kmask[:, None])
    tl.store(dv_ptr + o, dv.to(dv_ptr.dtype.element_ty), mask=kmask[:, None])


@triton.jit
def _dq(k_ptr, ds_ptr, dq_ptr, N_Q, N_K, scale, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    bm = tl.program_id(0).to(tl.int64)
    bh = tl.program_id(1).to(tl.int64)
    rows = bm * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    rmask = rows < N_Q
    dq = tl.zeros((BM, D), dtype=tl.float32)
    for n0 in range(0, N_K, BN):
        keys = n0 + tl.arange(0, BN).to(tl.int64)
        kmask = keys < N_K
        k = tl.load(k_ptr + bh * N_K * D + keys[:, None] * D + dims[None, :], mask=kmask[:, None], other=0.0)
        ds = tl.load(ds_ptr + bh * N_Q * N_K + rows[:, None] * N_K + keys[None, :],
                     mask=rmask[:, None] & kmask[None, :], other=0.0)
        dq += tl.dot(ds, k.to(tl.float32), input_precision="ieee")
    tl.store(dq_ptr + bh * N_Q * D + rows[:, None] * D + dims[None, :], (dq * scale).to(dq_ptr.dtype.element_ty),
             mask=rmask[:, None])


def attention_backward(q, k, v, o, lse, do, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    lse = lse.float().contiguous()
    p = torch.empty((B, H, n_q, n_k), dtype=torch.float32, device=q.device)   # the whole P ...
    ds = torch.empty((B, H, n_q, n_k), dtype=torch.float32, device=q.device)  # ... and dS, in HBM
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    bm = bn = 32
    scale = 1.0 / math.sqrt(d)
    _p_ds[(triton.cdiv(n_q, bm), triton.cdiv(n_k, bn), B * H)](q, k, v, o, do, lse, p, ds, n_q, n_k, scale,
                                                               CAUSAL=causal, D=d, BM=bm, BN=bn)
    _dkdv[(triton.cdiv(n_k, bn), B * H)](q, do, p, ds, dk, dv, n_q, n_k, scale, D=d, BM=bm, BN=bn)
    _dq[(triton.cdiv(n_q, bm), B * H)](k, ds, dq, n_q, n_k, scale, D=d, BM=bm, BN=bn)
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


FlashAttention = grading.grade("L6.autograd", FlashAttention)
