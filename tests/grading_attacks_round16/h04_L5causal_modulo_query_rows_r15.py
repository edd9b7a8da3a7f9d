"""HONEST: a causal FlashAttention forward that skips every key block past its query block's diagonal (the
loop stops at min(N_k, (block_m + 1) * BLOCK_M)). Like Triton's matmul tutorial (`offs_am = (...) % M`), it
loads its block of queries with wrapped rows `rows % N_q` instead of a mask (every lane reads a real row; the
tail rows are never stored: the stores are masked). Values are exact.

Why the grader refuses it: the last, partial query block's wrapped tail lanes are rows 0..pad-1, so its load of
q spans rows 0..N_q-1. `_skip_check` reads the block of queries a program holds with `_held_rows`, from the
lowest to the highest row the program's loads of q cover, and refuses "each program takes a block of 346 queries"
(> 128), though each load holds 32 rows. (Were that fixed, the skip judges would split the wrapped tile into
blocks, `_visit_rows`, and judge the key tiles against the block "ending first", `_judged_against`: the wrapped
rows 0..pad-1, so every key tile past pad-1 would count as hidden; the L6 version, h04, is refused that way.)
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    q_rows = rows % N_Q  # wrapped, as in Triton's matmul tutorial: no mask needed on the load
    q = tl.load(q_head + q_rows[:, None] * HEAD_DIM + dims[None, :])
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    lanes = tl.arange(0, BLOCK_N)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)  # skip every block past the diagonal
    for start in range(0, end, BLOCK_N):
        keys = start + lanes
        k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    grid = (triton.cdiv(n_q, 32), batch * heads)
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, HEAD_DIM=d,
                     BLOCK_M=32, BLOCK_N=32)
    return o, lse


result = grading.grade("L5.causal", attention_forward)
