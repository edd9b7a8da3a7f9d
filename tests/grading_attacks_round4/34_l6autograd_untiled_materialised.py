# exercise: L6.autograd
# family: algorithm
# What it does wrong: neither pass is FlashAttention. The forward is one program per head holding the whole
# N_q x N_k score matrix (a plain three-step softmax, no blocks of keys, no running max); the backward is one
# program per head holding the whole P and dS (N_q x N_k) at once, no blocks at all. On a GPU this does not fit
# on chip past a few hundred keys. The L6.autograd grader compares values only: none of the algorithm checks of
# L5.forward or L6.backward run on the Function's own kernels.
import gpuperf.kernels  # first: without a GPU it switches Triton to its CPU interpreter
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def fwd_whole(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr,
              HEAD_DIM: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr):
    head = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, BQ)
    keys = tl.arange(0, BK)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    k = tl.load(k_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
    v = tl.load(v_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
    s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale  # all N_q x N_k scores at once
    visible = keys[None, :] < N_K
    if CAUSAL:
        visible = visible & (keys[None, :] <= rows[:, None])
    s = tl.where(visible, s, float("-inf"))
    m = tl.max(s, axis=1)
    p = tl.exp(s - m[:, None])
    l = tl.sum(p, axis=1)
    o = tl.dot((p / l[:, None]).to(v.dtype), v, input_precision="ieee")
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


@triton.jit
def bwd_whole(q_ptr, k_ptr, v_ptr, o_ptr, do_ptr, lse_ptr, dq_ptr, dk_ptr, dv_ptr, N_Q, N_K, scale,
              CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr):
    head = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, BQ)
    keys = tl.arange(0, BK)
    dims = tl.arange(0, HEAD_DIM)
    qo = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
    ko = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
    q = tl.load(q_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
    do = tl.load(do_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
    o = tl.load(o_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
    k = tl.load(k_ptr + ko, mask=keys[:, None] < N_K, other=0.0)
    v = tl.load(v_ptr + ko, mask=keys[:, None] < N_K, other=0.0)
    lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1)
    s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
    visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
    if CAUSAL:
        visible = visible & (keys[None, :] <= rows[:, None])
    p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)  # the whole P of the head
    dv = tl.dot(tl.trans(p.to(do.dtype)), do, input_precision="ieee")
    dp = tl.dot(do, tl.trans(v), input_precision="ieee")
    ds = p * (dp - delta[:, None])  # the whole dS of the head
    dq = tl.dot(ds.to(k.dtype), k, input_precision="ieee") * scale
    dk = tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision="ieee") * scale
    tl.store(dq_ptr + qo, dq.to(dq_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(dk_ptr + ko, dk.to(dk_ptr.dtype.element_ty), mask=keys[:, None] < N_K)
    tl.store(dv_ptr + ko, dv.to(dv_ptr.dtype.element_ty), mask=keys[:, None] < N_K)


def _sizes(q, k):
    return max(16, triton.next_power_of_2(q.shape[2])), max(16, triton.next_power_of_2(k.shape[2]))


class FlashAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, causal=False):
        b, h, n_q, d = q.shape
        n_k = k.shape[2]
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        o = torch.empty_like(q)
        lse = torch.empty((b, h, n_q), dtype=torch.float32, device=q.device)
        bq, bk = _sizes(q, k)
        fwd_whole[(b * h,)](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, HEAD_DIM=d, BQ=bq, BK=bk)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.causal = causal
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        b, h, n_q, d = q.shape
        n_k = k.shape[2]
        do = do.contiguous()
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        bq, bk = _sizes(q, k)
        bwd_whole[(b * h,)](q, k, v, o, do, lse, dq, dk, dv, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=ctx.causal,
                            HEAD_DIM=d, BQ=bq, BK=bk)
        return dq, dk, dv, None


FlashAttention = grading.grade("L6.autograd", FlashAttention)
