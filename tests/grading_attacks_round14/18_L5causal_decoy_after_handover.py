"""WRONG (lazy): 01 with its queries handed over by an earlier kernel instead of bounced in the same launch, and o
written through scratch: a causal forward that walks the keys up to min(N_k, N_q) and skips nothing. Written by
the fixer of round 14's Finding 1 (the fallback's decoys), not by the attacker.

Why the grader accepted it (round 14):
- A kernel of the reader's writes q * 2 (plus five neighbouring elements times 0) into a buffer: no lane-for-lane
  copy, so the buffer is no Image of q, and the forward's products take rows of neither q nor a copy of it.
- Every visit of k then falls to `_paired_visits`' fallback: the rows of q loaded after it, before the next
  load of k. Those are one-element decoys of q's last row, never multiplied: every block looks visible.
- o is stored to scratch and copied into o by another launch: the store judge sees no store of o in the
  forward's launch.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, scr_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    slot = (head * tl.num_programs(0) + block_m.to(tl.int64)) * (BLOCK_M * HEAD_DIM)
    tile = tl.arange(0, BLOCK_M)[:, None] * HEAD_DIM + dims[None, :]
    q = tl.load(scr_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q,
                other=0.0) * 0.5
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, N_Q)  # no skipping of the blocks past the diagonal
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        if CAUSAL:
            decoy = tl.load(q_head + (N_Q - 1) * HEAD_DIM)  # one element of the head's last query row, unused
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


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    junk = tl.zeros((BLOCK,), dtype=tl.float32)
    for j in range(1, 6):
        junk += tl.load(x_ptr + tl.minimum(offs + j, n - 1), mask=offs < n).to(tl.float32)
    tl.store(y_ptr + offs, (x * factor + junk * 0.0).to(y_ptr.dtype.element_ty), mask=offs < n)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.zeros_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    block_m, block_n = 32, 32
    grid = (triton.cdiv(n_q, block_m), batch * heads)
    scr = torch.empty(q.numel(), dtype=q.dtype, device=q.device)
    scale_kernel[(triton.cdiv(q.numel(), 1024),)](q, scr, q.numel(), 2.0, BLOCK=1024)
    o_scr = torch.empty(q.numel(), dtype=q.dtype, device=q.device)
    fwd_kernel[grid](q, k, v, o_scr, lse, scr, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, HEAD_DIM=d,
                     BLOCK_M=block_m, BLOCK_N=block_n)
    scale_kernel[(triton.cdiv(q.numel(), 1024),)](o_scr, o, q.numel(), 1.0, BLOCK=1024)
    return o, lse


result = grading.grade("L5.causal", attention_forward)
