# exercise: L5.forward (and L5.causal)
# family: honest
# What it does differently: no .contiguous() copies (each tensor's own strides go to the kernel), exp2
# with log2(e) folded into the scale (the lse converted back to natural log), BLOCK_M = 16 queries
# against BLOCK_N = 64 keys, the (batch, head) pair split into two grid axes. Correct: must pass.
import gpuperf.kernels  # first: without a GPU it switches Triton to its CPU interpreter
import math
import sys

import torch
import triton
import triton.language as tl
from gpuperf import grading

LOG2E = 1.4426950408889634


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr,
               sqb, sqh, sqn, skb, skh, skn, svb, svh, svn, sob, soh, son,
               H, N_Q, N_K, qk_scale_log2,
               CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    block_m = tl.program_id(0).to(tl.int64)
    b = tl.program_id(1).to(tl.int64)
    h = tl.program_id(2).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + b * sqb + h * sqh + rows[:, None] * sqn + dims[None, :],
                mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)  # in log2 units
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + b * skb + h * skh + keys[:, None] * skn + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + b * svb + h * svh + keys[:, None] * svn + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * qk_scale_log2
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp2(m - m_new)
        p = tl.exp2(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + b * sob + h * soh + rows[:, None] * son + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + (b * H + h) * N_Q + rows, (m + tl.log2(l)) / 1.4426950408889634, mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    o = torch.empty((batch, heads, n_q, head_dim), dtype=q.dtype, device=q.device)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    block_m, block_n = 16, 64
    grid = (triton.cdiv(n_q, block_m), batch, heads)
    fwd_kernel[grid](q, k, v, o, lse, q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1),
                     k.stride(2), v.stride(0), v.stride(1), v.stride(2), o.stride(0), o.stride(1), o.stride(2),
                     heads, n_q, n_k, LOG2E / math.sqrt(head_dim), CAUSAL=causal, HEAD_DIM=head_dim,
                     BLOCK_M=block_m, BLOCK_N=block_n, PRECISION=precision)
    return o, lse


attention_forward = grading.grade("L5.forward", attention_forward)
