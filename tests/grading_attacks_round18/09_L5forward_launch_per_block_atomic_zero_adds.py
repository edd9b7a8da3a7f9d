"""WRONG (lazy): the blocks of queries one after another, a Python loop of one launch per block of queries; in
launch i only program (i, head) computes (its block of queries, one program per head as in round 16's 21). Every
launch is on the full grid: the programs of the blocks done by earlier launches add 0 to their block of O (and lse) with
`tl.atomic_add` (the value stays), those of the blocks still to come store zeros (placeholders).

Why the grader should accept it: `_launch_loop_check` (new this session) calls a launch narrow when few programs
wrote a head's rows, counting every write (`2 * programs < launches`) or the writes the output keeps
(`0 < 2 * kept < launches`, `_surviving_writes`, by address, "atomics included"). Every launch has one program per
block of queries writing; in every launch but the last, all writes are overwritten later (kept = 0, not narrow);
in the last, every program's write is kept (the atomic adds of 0 are writes). So no launch is narrow, although
each block was computed by a launch in which one program per head did any work. (L5's loads of O are not counted
as passes; in L3 the same trick is refused by the total load count.)
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def attention_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, block_m, scale,
                             CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)  # one (batch, head) pair per column of the grid
    dims = tl.arange(0, HEAD_DIM)
    other = tl.program_id(0)  # the block of queries this program writes in this launch
    if other != block_m:
        rows_o = other * BLOCK_M + tl.arange(0, BLOCK_M)
        at = o_ptr + head * N_Q * HEAD_DIM + rows_o[:, None] * HEAD_DIM + dims[None, :]
        zero = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32).to(o_ptr.dtype.element_ty)
        if other < block_m:  # a block an earlier launch computed: add 0 to it (a write that keeps it)
            tl.atomic_add(at, zero, mask=rows_o[:, None] < N_Q)
            tl.atomic_add(lse_ptr + head * N_Q + rows_o, tl.zeros((BLOCK_M,), dtype=tl.float32), mask=rows_o < N_Q)
        else:  # a block a later launch computes: placeholder
            tl.store(at, zero, mask=rows_o[:, None] < N_Q)
            tl.store(lse_ptr + head * N_Q + rows_o, tl.zeros((BLOCK_M,), dtype=tl.float32), mask=rows_o < N_Q)
        return
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
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    for block_m in range(triton.cdiv(n_q, 32)):  # the blocks of queries one after another: a launch each
        attention_forward_kernel[(triton.cdiv(n_q, 32), batch * heads)](q, k, v, o, lse, n_q, n_k, block_m, 1.0 / math.sqrt(head_dim),
                                                      CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=32,
                                                      BLOCK_N=32, PRECISION=precision, num_stages=1)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
