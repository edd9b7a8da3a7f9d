# exercise: L5.causal
# family: ordinary
# What it does wrong: keeps its output buffers in a module-level cache keyed by shape/dtype/device to "save
#   allocations": every call with the same shapes returns the SAME tensors, so a later call silently overwrites
#   the results of an earlier one (o1, lse1 = f(q1, k1, v1); f(q2, k2, v2) changes o1 and lse1). Checked (CHECK_WRONG=1): after a second call on new inputs of the
#   same shape, the first call's result no longer matches its float64 reference.
import gpuperf.kernels

import math

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
        m_new = tl.maximum(m, tl.max(s, axis=1))
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


_buffers = {}


def attention_forward(q, k, v, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    key = (tuple(q.shape), n_k, q.dtype, q.device)
    if key not in _buffers:
        _buffers[key] = (torch.empty((B, H, n_q, d), dtype=q.dtype, device=q.device),
                         torch.empty((B, H, n_q), dtype=torch.float32, device=q.device))
    o, lse = _buffers[key]
    grid = (triton.cdiv(n_q, 64), B * H)
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, H, 1.4426950408889634 / math.sqrt(d),
                     *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *o.stride()[:3],
                     CAUSAL=causal, D=d, BLOCK_M=64, BLOCK_N=16)
    return o, lse


import os
if os.environ.get("CHECK_WRONG"):
    q1, k1, v1, q2, k2, v2 = (torch.randn(1, 2, 40, 16) for _ in range(6))
    o1, _ = attention_forward(q1, k1, v1)
    attention_forward(q2, k2, v2)
    ref = torch.softmax(q1.double() @ k1.double().transpose(-1, -2) / 4, -1) @ v1.double()
    print("first result still right:", torch.allclose(o1.double(), ref, atol=1e-5))

attention_forward = grading.grade("L5.causal", attention_forward)
