"""WRONG (lazy): a causal forward that skips NO block of keys past the diagonal: every program walks the keys up
to min(N_k, N_q), runs both tile products on every block and only masks. A tile past the diagonal is loaded in ONE
tl.load whose first lane row is a whole row at the diagonal (the block's last query as a key: visible) and whose
other lane rows each read one element (column 0) of their far key, every lane of the row pointed at it (no mask:
masked-off lanes are rows of their own to the skip check; lanes past N_k clamped to the last key). Its values do
not matter: P is 0 there.

Why the grader should accept it: today each load of a visited block is judged by its own rows, "a row counts where
that load read at least half as much of it as of its own most-read row" (`_load_blocks` -> `_dense_blocks`). In
one load, the anchor row is read whole (d elements) and the far rows one element each (1/d < 1/2): the far rows
drop out and the load's only row is the anchor, which the block sees. Round 16's 04 put the anchor in a load of its
own; the new per-load rule handles that, but not an anchor inside the load.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr, FAR_COLS: tl.constexpr,
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
        if CAUSAL and start > last_q:  # a tile past the diagonal: ONE load, lane row 0 = a whole row at the
            # diagonal (the block's last query as a key), every other lane row one element of its far key
            anchor = tl.minimum(last_q, N_K - 1)
            rows_at = tl.where(lanes == 0, anchor, at)
            cols = tl.where(lanes[:, None] == 0, dims[None, :], dims[None, :] % FAR_COLS)  # far rows: column 0
            k = tl.load(k_head + tl.minimum(rows_at, N_K - 1)[:, None] * HEAD_DIM + cols)
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
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, FAR_COLS=1, HEAD_DIM=d,
                     BLOCK_M=64, BLOCK_N=32)
    return o, lse


result = grading.grade("L5.causal", attention_forward)
