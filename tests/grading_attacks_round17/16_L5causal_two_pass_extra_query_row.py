"""WRONG: with the causal mask, not an online softmax: every program but a head's last walks its keys TWICE, a
first pass for each row's max, a second for the sum and P V (round 16's 18, refused now), with another dodge than
01's: the first pass holds q with ONE row more than the block (lanes of 2 BLOCK_M, the extra row's result unused),
the second holds the block's rows. A head's last block (no row after it) takes the one-pass online path.

Why the grader should accept it: `_causal_passes` keys a program's runs by the last query row each holds
(`held.setdefault(last, ...)`: "a block of queries held again is one block"), and allows each distinct last row a
walk of its own (`distinct = sum(len(keys) + block ...)`). Holding one more row in the first pass makes the two
walks over the same keys two "blocks of queries", each allowed its own pass.
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
    rows = block_m * BLOCK_M + tl.arange(0, 2 * BLOCK_M)  # tiles of 2 BLOCK_M lanes, BLOCK_M rows used
    own = rows < tl.minimum(block_m * BLOCK_M + BLOCK_M, N_Q)
    dims = tl.arange(0, HEAD_DIM)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    end = N_K
    if CAUSAL:  # keys after this block's last query are hidden: stop at the diagonal
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    m = tl.full((2 * BLOCK_M,), float("-inf"), dtype=tl.float32)
    if CAUSAL and (block_m + 1) * BLOCK_M < N_Q:  # pass 1 (causal, every block but a head's last): the max
        # q with ONE row more than the block (its result unused)
        q1 = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :],
                     mask=(rows < tl.minimum(block_m * BLOCK_M + BLOCK_M + 1, N_Q))[:, None], other=0.0)
        for start in range(0, end, BLOCK_N):
            keys = start + tl.arange(0, BLOCK_N)
            k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
            s = tl.dot(q1, tl.trans(k), input_precision="ieee") * scale
            visible = (keys[None, :] < N_K) & (keys[None, :] <= rows[:, None])
            m = tl.maximum(m, tl.max(tl.where(visible, s, float("-inf")), axis=1))
    # pass 2: the sum and P V (a running max, which never moves where pass 1 found it); q as the block's rows
    q = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=own[:, None], other=0.0)
    l = tl.zeros((2 * BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((2 * BLOCK_M, HEAD_DIM), dtype=tl.float32)
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
    l = tl.where(own, l, 1.0)
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             o.to(o_ptr.dtype.element_ty), mask=own[:, None])
    tl.store(lse_ptr + head * N_Q + rows, tl.where(m == float("-inf"), 0.0, m) + tl.log(l), mask=own)


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
