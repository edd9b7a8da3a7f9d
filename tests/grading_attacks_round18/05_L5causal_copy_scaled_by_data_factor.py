"""WRONG (lazy): a causal forward that skips NO block of keys past the diagonal (every program walks the keys up
to min(N_k, N_q) and only masks), the tiles past the diagonal read from a near copy of K made by a kernel of its
own (round 16's 16, round 17's 07). Round 17's 07 stored `k + 0.0 * tl.sum(k, 0)` (equal lanes: now a copy);
this one stores `k * (1 + 2^-20 + z) + (1e-30 + z)`, z = `0.0 * tl.sum(k, 0)`: K scaled by a factor computed from a
reduction, its exact zeros nudged to 1e-30 (a first version without the nudge was refused on seed 12, whose K
has exact zeros: the lanes left equal made the buffer a partial copy, counted by the causal pass check).
The tiles read from the copy are all past the diagonal (every score masked), so the perturbation never reaches O.

Why the grader should accept it: a kernel copy is recognised by per-lane origins (`_gpuperf_lanes_from`).
`_carry_lanes` keeps them through a scaling by a constant, and `_carry_equal_lanes` (new) keeps them where another
operand computed from a load leaves the lanes bit-equal. Here the factor carries sources (the reduction) and the
values differ from k in almost every lane (times 1 + 2^-20), so no origins survive: the stored tile is no copy of
k, and the forward's loads of it are no visits of K. The README promises copies "cast or scaled at most"; a
scale that depends on the data is still a scale.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(k_ptr, kc_ptr, N_K, HEAD_DIM: tl.constexpr, BLOCK: tl.constexpr):
    # K copied block by block into a buffer of the same layout, every value off by one part in 2^20
    block = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block * BLOCK + tl.arange(0, BLOCK)
    dims = tl.arange(0, HEAD_DIM)
    at = head * N_K * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
    k = tl.load(k_ptr + at, mask=rows[:, None] < N_K, other=0.0)
    # NOT the same values: times (1 + 2^-20), a factor computed from a reduction of the tile (0 times its sums)
    s0 = 0.0 * tl.sum(k, axis=0)[None, :]
    kk = k * (1.0 + 0.00000095367431640625 + s0) + (1e-30 + s0)  # zeros nudged to 1e-30 too
    tl.store(kc_ptr + at, kk, mask=rows[:, None] < N_K)


@triton.jit
def fwd_kernel(q_ptr, k_ptr, kc_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr,
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
        if CAUSAL and start > last_q:  # a tile past the diagonal: read from the copy
            k = tl.load(kc_ptr + head * N_K * HEAD_DIM + at[:, None] * HEAD_DIM + dims[None, :],
                        mask=keys[:, None] < N_K, other=0.0)
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
    kc = k
    if causal:  # the tiles past the diagonal are read from a copy of K
        kc = torch.empty_like(k)
        copy_kernel[(triton.cdiv(n_k, 32), batch * heads)](k, kc, n_k, HEAD_DIM=d, BLOCK=32)
    fwd_kernel[grid](q, k, kc, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, HEAD_DIM=d,
                     BLOCK_M=64, BLOCK_N=32)
    return o, lse


result = grading.grade("L5.causal", attention_forward)
