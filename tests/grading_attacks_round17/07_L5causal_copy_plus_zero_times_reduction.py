"""WRONG (lazy): a causal forward that skips NO block of keys past the diagonal (every program walks the keys up
to min(N_k, N_q) and only masks), the tiles past the diagonal read from a copy of K made by a kernel of its own
(round 16's 16). The copy kernel stores `k + 0.0 * tl.sum(k, axis=0)[None, :]` in place of `tl.trans(tl.trans(k))`:
the same values in the same lanes (plus zero times a reduction of the same tile).

Why the grader should accept it: a kernel copy is recognised by per-lane origins (`_gpuperf_lanes_from`);
`_carry_lanes` drops them when another operand computed from a load carries no origins (a reduction, `_NOT_LANEWISE`
"reduce"), so the stored tile is no copy of k (`_kernel_images`) and the forward's loads of it are no visits of K.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(k_ptr, kc_ptr, N_K, HEAD_DIM: tl.constexpr, BLOCK: tl.constexpr):
    # K copied block by block into a buffer of the same layout (the values pass through two transposes)
    block = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block * BLOCK + tl.arange(0, BLOCK)
    dims = tl.arange(0, HEAD_DIM)
    at = head * N_K * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
    k = tl.load(k_ptr + at, mask=rows[:, None] < N_K, other=0.0)
    kk = k + 0.0 * tl.sum(k, axis=0)[None, :]  # the same values: plus 0 times the column sums
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
