# exercise: L6.backward
# family: ordinary
# What it does wrong: copy-paste in the launches: dO's strides are passed as q's (q.stride() where
#   do.stride() belongs). The grader's dO always has q's layout (both heads-interleaved (B, H, N, d)),
#   so this never shows in L6.backward; a dO laid out differently from q (autograd hands dO in the layout of
#   whatever consumed O, often contiguous while q is a strided view) is read at the wrong addresses.
#   Checked (CHECK_WRONG=1): q, k, v with heads interleaved, dO contiguous: dv != float64.
import gpuperf.kernels

import math

import torch
import triton
import triton.language as tl

from gpuperf import grading


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
    delta_kernel[(triton.cdiv(n_q, 32), B * H)](o, do, delta, n_q, H, *o.stride()[:3], *q.stride()[:3],
                                                D=d, BLOCK_M=32)
    dq32 = torch.zeros((B, H, n_q, d), dtype=torch.float32, device=q.device)
    dk = torch.empty((B, H, n_k, d), dtype=k.dtype, device=q.device)
    dv = torch.empty((B, H, n_k, d), dtype=v.dtype, device=q.device)
    grid = (triton.cdiv(n_k, 32), B * H)
    bwd_kernel[grid](q, k, v, do, lse, delta, dq32, dk, dv, n_q, n_k, H, 1.0 / math.sqrt(d), *lse.stride(),
                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *q.stride()[:3],
                     CAUSAL=causal, D=d, BLOCK_M=32, BLOCK_N=32)
    return dq32.to(q.dtype), dk, dv


import os
if os.environ.get("CHECK_WRONG"):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 40, 2, 16, generator=g).transpose(1, 2) for _ in range(3))
    do = torch.randn(1, 2, 40, 16, generator=g)                 # contiguous
    q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
    o64 = torch.nn.functional.scaled_dot_product_attention(q64, k64, v64)
    o64.backward(do.double())
    lse = torch.logsumexp(q.double() @ k.double().transpose(-1, -2) / 4, -1).float()
    dq, dk, dv = attention_backward(q, k, v, o64.detach().float(), lse, do)
    print("max err dv", (dv.double() - v64.grad).abs().max().item())

attention_backward = grading.grade("L6.backward", attention_backward)
