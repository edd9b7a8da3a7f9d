"""WRONG (lazy): a causal forward that skips NO key block past the diagonal: every program walks the keys up to
min(N_k, N_q) and only masks (the tiles past the diagonal are loaded and multiplied, then masked to -inf).

Trick: for a tile past the held block's diagonal the load reads only 7 of the d = 16 columns of each key row
(`dims % 7`: the tile's values do not matter, they are masked), and the same group of loads (between the same
two tl.dot) also loads ONE whole key row at the diagonal (key = the held block's last query), added with weight
0 to the tile. Cost: one row per skipped tile.

Why the grader should accept it: the r15bridge fix judges a group of loads by its dense rows (`_dense_blocks`):
rows read at least half as much as the row read MOST in the group. The anchor row is read whole (16), the tile's
rows 7 each (< 8): the tile is no rows, the judged block is the anchor row alone, which the held block sees. The
masked-lanes fallback of `_judged_rows` does not apply (every lane of the tile is active: the narrow columns come
from the addresses, not a mask). The product past the diagonal runs (a tl.dot on the tile) exactly as in a
kernel without skipping.
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
    last_q = tl.minimum((block_m + 1) * BLOCK_M, N_Q) - 1
    if CAUSAL:
        end = tl.minimum(N_K, N_Q)  # NO skipping: every block up to N_q is walked
    for start in range(0, end, BLOCK_N):
        keys = start + lanes
        at = tl.minimum(keys, N_K - 1)  # tail lanes clamped to the last key (masked off anyway)
        if CAUSAL and start > last_q:  # a tile past the diagonal: still loaded and multiplied (no skipping)
            # ... reading 7 of the 16 columns of each row (it is masked out anyway), beside one whole row at
            # the diagonal (key last_q), added with weight 0 so that both reach the same tl.dot
            k = tl.load(k_head + at[:, None] * HEAD_DIM + (dims % (HEAD_DIM // 2 - 1))[None, :],
                        mask=keys[:, None] < N_K, other=0.0)
            anchor = tl.load(k_head + last_q * HEAD_DIM + dims)
            k = k + tl.sum(anchor, axis=0) * 0.0
        else:
            k = tl.load(k_head + at[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + at[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
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
    grid = (triton.cdiv(n_q, 64), batch * heads)
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, HEAD_DIM=d,
                     BLOCK_M=64, BLOCK_N=32)
    return o, lse


result = grading.grade("L5.causal", attention_forward)
