"""WRONG (lazy): a causal forward whose first programs (the blocks of queries starting before row 96, which have
the most blocks past their diagonal) skip NOTHING: they walk every key up to min(N_k, N_q). Later programs skip.

The trick (aimed at the 21:55 fix, `_unwrapped`): each program holds 30 queries in lanes 0-29 of its 32-lane
block of q; in a non-skipping program lane 30 loads query 0 and lane 31 the last query N_q - 1 (both masked out of
P and never written). O is added with `tl.atomic_add` onto zeros, and every program also adds 0 to every row of O.

Why the grader should accept it: `_unwrapped` reads a load whose blocks start at a head's first row and end at its
last as a tile wrapped past the end, and drops the blocks before the widest gap: for an early program that is
query 0 AND its real block, so the held block is the last query alone, which sees every key (`_paired_visits`).
`_rows_spanned` reads it "the shorter way round" (at most 127 rows for r < 96, under `_held_rows`' 128). The
store judge (`_stored_block_visits`) gets no block: rows that other programs add to are no program's.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STEP_M: tl.constexpr):
    block_m = tl.program_id(0).to(tl.int64)
    head = tl.program_id(1).to(tl.int64)
    lanes_m = tl.arange(0, BLOCK_M)
    r = block_m * STEP_M
    rows = r + lanes_m
    real = (lanes_m < STEP_M) & (rows < N_Q)
    dims = tl.arange(0, HEAD_DIM)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    early = CAUSAL and (r < 96)
    phys = tl.minimum(rows, N_Q - 1)
    if early:
        phys = tl.where(lanes_m == STEP_M, 0, tl.where(lanes_m == STEP_M + 1, N_Q - 1, phys))
    else:
        phys = tl.where(lanes_m >= STEP_M, tl.minimum(r + STEP_M - 1, N_Q - 1), phys)
    q = tl.load(q_head + phys.to(tl.int64)[:, None] * HEAD_DIM + dims[None, :])
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    lanes = tl.arange(0, BLOCK_N)
    end = N_K + block_m * 0
    if CAUSAL:
        end = tl.minimum(tl.minimum(N_K, N_Q), r + STEP_M)  # the diagonal
        if early:
            end = tl.minimum(N_K, N_Q) + block_m * 0  # no skipping at all
    for start in range(0, end, BLOCK_N):
        keys = start + lanes
        k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        visible = (keys[None, :] < N_K) & real[:, None]
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp(m - m_safe)
        p = tl.exp(s - m_safe[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        m = m_new
    o = acc / tl.where(l > 0, l, 1.0)[:, None]
    o_head = o_ptr + head * N_Q * HEAD_DIM
    tl.atomic_add(o_head + rows.to(tl.int64)[:, None] * HEAD_DIM + dims[None, :], o, mask=real[:, None])
    for z in range(0, N_Q, BLOCK_M):  # 0 added to every row of O: rows every program adds to
        zr = z + lanes_m
        tl.atomic_add(o_head + zr[:, None] * HEAD_DIM + dims[None, :], tl.zeros((BLOCK_M, HEAD_DIM), tl.float32),
                      mask=zr[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows.to(tl.int64), m + tl.log(l), mask=real)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o32 = torch.zeros((batch, heads, n_q, d), dtype=torch.float32, device=q.device)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    grid = (triton.cdiv(n_q, 30), batch * heads)
    fwd_kernel[grid](q, k, v, o32, lse, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, HEAD_DIM=d,
                     BLOCK_M=32, BLOCK_N=32, STEP_M=30)
    return o32.to(q.dtype), lse


result = grading.grade("L5.causal", attention_forward)
