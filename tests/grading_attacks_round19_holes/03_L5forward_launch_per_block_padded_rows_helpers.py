"""WRONG (lazy): the blocks of queries one after another, a Python loop of one launch per block of queries, ONE
program per head doing a launch's work (round 18's 04, returning the buffers themselves). O is returned as a view
of a buffer whose rows are padded (`buf[..., :d]` of a (B, H, N_q, d + 16) buffer); in each launch, 32 more
programs per head each store zeros into the padding of one row of the block.

Why the grader should accept it: `_launch_loop_check` decodes every write in O's byte span into O's rows
(`_element_addresses` gives no filter for a 4-D output), so the writes into the padding count as programs on the
head's rows: each launch has 33 programs on them, not one, and no launch is narrow.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def attention_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, block_m, scale, o_row,
                             PAD: tl.constexpr,
                             CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)  # one (batch, head) pair per column of the grid
    helper = tl.program_id(0)
    if helper > 0:  # the padding of one row of the block: zeros, by a program of its own
        row = (block_m * BLOCK_M + helper - 1).to(tl.int64)
        pads = tl.arange(0, PAD)
        tl.store(o_ptr + head * N_Q * o_row + row * o_row + HEAD_DIM + pads, tl.zeros((PAD,), tl.float32),
                 mask=(pads * 0 + row) < N_Q - 1)  # inside the view's span: not the last row's
        return
    dims = tl.arange(0, HEAD_DIM)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    q = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)

    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)  # running row max of the scores
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)  # running sum of exp(score - m)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)  # running unnormalised output
    end = N_K
    if CAUSAL:  # key blocks right of this query block's last row are all masked: skip them
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        # key 0 is visible to every row, so m is finite from the first block on
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)  # rescales what was accumulated under the old max
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * o_row + rows[:, None] * o_row + dims[None, :],
             o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty((batch, heads, n_q, head_dim + 16), dtype=q.dtype, device=q.device)[..., :head_dim]
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    for block_m in range(triton.cdiv(n_q, 32)):  # the blocks of queries one after another: a launch each
        attention_forward_kernel[(33, batch * heads)](q, k, v, o, lse, n_q, n_k, block_m, 1.0 / math.sqrt(head_dim),
                                                       o.stride(2), PAD=16, CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=32,
                                                      BLOCK_N=32, PRECISION=precision, num_stages=1)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
