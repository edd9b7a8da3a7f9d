"""WRONG (lazy): a causal forward that does not skip the blocks past each query block's diagonal. Every program
walks the keys up to min(N_k, N_q) (the work of a full square attention), masking only.

Why the grader should accept it (the new causal skip checks):
- The pairing by tl.dot (`_paired_visits`) follows a load's value to the products through `_gpuperf_loads`, a tag
  that handles carry through arithmetic but NOT through memory. The program loads its block of q once, stores it
  to its own scratch tile and loads it back: every QK^T then takes rows of k but no rows of q (the scratch is
  neither q nor a torch copy of it). So no product "took rows of the other tensor", and each k visit falls to
  the fallback: judged against the rows of q loaded after it and before the next k load.
- Those are a one-element decoy load of q's last row (N_q - 1), never used: every visited key block <= N_q - 1
  looks visible, and pairs > 0.
- The second judge (`_stored_block_visits`, the rows of o the program stores next) reads only tl.store: o is
  written with tl.atomic_add onto torch.zeros on the program's own rows (an accumulating atomic: no race), so
  there is no store mark to judge against.
- The scratch is one q block per program (BLOCK_M x d), inside `_scratch_check`'s budget.
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
    q_direct = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    tl.store(scr_ptr + slot + tile, q_direct, mask=rows[:, None] < N_Q)
    q = tl.load(scr_ptr + slot + tile, mask=rows[:, None] < N_Q, other=0.0)
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
    tl.atomic_add(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                  o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.zeros_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    block_m, block_n = 32, 32
    grid = (triton.cdiv(n_q, block_m), batch * heads)
    scr = torch.empty(grid[0] * grid[1] * block_m * d, dtype=q.dtype, device=q.device)
    fwd_kernel[grid](q, k, v, o, lse, scr, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, HEAD_DIM=d,
                     BLOCK_M=block_m, BLOCK_N=block_n)
    return o, lse


result = grading.grade("L5.causal", attention_forward)
