# exercise: L6.backward
# family: ordinary
# What it does wrong: keeps its output buffers in a module-level cache keyed by shape/dtype/device to "save
#   allocations": every call with the same shapes returns the SAME tensors, so a later call silently overwrites
#   the results of an earlier one (dq1, dk1, dv1 = f(...); f(...) on new tensors changes dk1, dv1). Checked (CHECK_WRONG=1): after a second call on new inputs of the
#   same shape, the first call's result no longer matches its float64 reference.
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


_buffers = {}


def attention_backward(q, k, v, o, lse, do, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    delta = torch.empty((B, H, n_q), dtype=torch.float32, device=q.device)
    delta_kernel[(triton.cdiv(n_q, 32), B * H)](o, do, delta, n_q, H, *o.stride()[:3], *do.stride()[:3],
                                                D=d, BLOCK_M=32)
    dq32 = torch.zeros((B, H, n_q, d), dtype=torch.float32, device=q.device)
    key = (B, H, n_k, d, k.dtype, q.device)
    if key not in _buffers:
        _buffers[key] = (torch.empty((B, H, n_k, d), dtype=k.dtype, device=q.device),
                         torch.empty((B, H, n_k, d), dtype=v.dtype, device=q.device))
    dk, dv = _buffers[key]
    grid = (triton.cdiv(n_k, 32), B * H)
    bwd_kernel[grid](q, k, v, do, lse, delta, dq32, dk, dv, n_q, n_k, H, 1.0 / math.sqrt(d), *lse.stride(),
                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *do.stride()[:3],
                     CAUSAL=causal, D=d, BLOCK_M=32, BLOCK_N=32)
    return dq32.to(q.dtype), dk, dv


import os
if os.environ.get("CHECK_WRONG"):
    def ref_grads(q, k, v, do):
        q, k, v = (t.double().requires_grad_() for t in (q, k, v))
        o = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        o.backward(do.double())
        return o.detach(), k.grad
    ins = [[torch.randn(1, 1, 40, 16) for _ in range(4)] for _ in range(2)]
    outs = []
    for q, k, v, do in ins:
        o, _ = ref_grads(q, k, v, do)
        lse = torch.logsumexp(q.double() @ k.double().transpose(-1, -2) / 4, -1).float()
        outs.append(attention_backward(q, k, v, o.float(), lse, do))
    print("first dk still right:", torch.allclose(outs[0][1].double(), ref_grads(*ins[0])[1], atol=1e-4))

attention_backward = grading.grade("L6.backward", attention_backward)
