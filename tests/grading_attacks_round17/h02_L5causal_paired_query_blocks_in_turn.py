"""HONEST: h01's load-balanced causal forward (each program a pair of query blocks, i and n-1-i, each walked once
with the online softmax and stopped at its own diagonal), with the second block of queries loaded only after the
first block's walk and stores: load q_a, walk, store; load q_b, walk, store. A control for h01 (which loads both
blocks of queries first); if this one is refused too, pairing itself is refused.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def _walk(q, rows, k_head, v_head, N_K, scale, dims, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr,
          BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    end = N_K
    if CAUSAL:  # keys after this block's last query are hidden
        end = tl.minimum(N_K, tl.max(rows) + 1)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp(m - shift)
        p = tl.exp(s - shift[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        m = m_new
    return acc, m, l


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, N_BLOCKS, CAUSAL: tl.constexpr,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    dims = tl.arange(0, HEAD_DIM)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    o_head = o_ptr + head * N_Q * HEAD_DIM
    if CAUSAL:
        first = pid  # a short walk ...
        second = N_BLOCKS - 1 - pid  # ... and a long one
    else:
        first = pid
        second = pid
    rows_a = first * BLOCK_M + tl.arange(0, BLOCK_M)
    rows_b = second * BLOCK_M + tl.arange(0, BLOCK_M)
    q_a = tl.load(q_head + rows_a[:, None] * HEAD_DIM + dims[None, :], mask=rows_a[:, None] < N_Q, other=0.0)
    acc, m, l = _walk(q_a, rows_a, k_head, v_head, N_K, scale, dims, CAUSAL, BLOCK_M, BLOCK_N, HEAD_DIM)
    tl.store(o_head + rows_a[:, None] * HEAD_DIM + dims[None, :], (acc / l[:, None]).to(o_ptr.dtype.element_ty),
             mask=rows_a[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows_a, m + tl.log(l), mask=rows_a < N_Q)
    if second != first:
        q_b = tl.load(q_head + rows_b[:, None] * HEAD_DIM + dims[None, :], mask=rows_b[:, None] < N_Q,
                      other=0.0)
        acc, m, l = _walk(q_b, rows_b, k_head, v_head, N_K, scale, dims, CAUSAL, BLOCK_M, BLOCK_N, HEAD_DIM)
        tl.store(o_head + rows_b[:, None] * HEAD_DIM + dims[None, :],
                 (acc / l[:, None]).to(o_ptr.dtype.element_ty), mask=rows_b[:, None] < N_Q)
        tl.store(lse_ptr + head * N_Q + rows_b, m + tl.log(l), mask=rows_b < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    bm = 32
    n_blocks = triton.cdiv(n_q, bm)
    programs = triton.cdiv(n_blocks, 2) if causal else n_blocks
    fwd_kernel[(programs, batch * heads)](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), n_blocks, CAUSAL=causal,
                                          HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=32)
    return o, lse


result = grading.grade("L5.causal", attention_forward)
