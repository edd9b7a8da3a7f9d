"""WRONG (lazy): a causal forward that does not skip the blocks past each query block's diagonal: every program
walks the keys up to min(N_k, N_q), masking only. Plain loads, plain stores, no scratch, no atomics.

The trick: in causal mode each key tile holds 31 keys (start .. start + 30) in lanes 0-30, and its lane 31 loads
key 0 (and the same row of v); that lane is always masked out of the scores (its logical key is "none"), so the
values are exact.

Why the grader should accept it: the skip checks read a visited block of keys from the addresses of its lanes,
lowest to highest (`_paired_visits` / `_hidden_pairs` on active lanes, `_visit_pairs` and `_stored_block_visits`
on all lanes), and call it hidden only where its FIRST row comes after the last query of the block judged
against (`keys[0] > queries[1]`). Lane 31 makes every tile's first row key 0, which every query sees. The
query side is judged by the block "ending first" (so extra q rows in an operand do not help), but the key side
has no such guard. The widest load stays within LARGEST_BLOCK_K (keys 0..255 at most: `_key_blocks_check` only
runs at N_k >= 512, where the walk stops at N_q = 256).
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
    q = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    lanes = tl.arange(0, BLOCK_N)
    end = N_K
    STEP: tl.constexpr = BLOCK_N - 1 if CAUSAL else BLOCK_N
    if CAUSAL:
        end = tl.minimum(N_K, N_Q)  # no skipping of the blocks past the diagonal
    for start in range(0, end, STEP):
        keys = start + lanes  # the logical key of each lane
        real = (lanes < STEP) & (keys < end)
        phys = keys
        if CAUSAL:
            phys = tl.where(lanes == BLOCK_N - 1, 0, keys)  # lane 31 loads key 0
        live = real | (phys == 0)
        k = tl.load(k_head + phys[:, None] * HEAD_DIM + dims[None, :], mask=live[:, None], other=0.0)
        v = tl.load(v_head + phys[:, None] * HEAD_DIM + dims[None, :], mask=live[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        visible = real[None, :]
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
