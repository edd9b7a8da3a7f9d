"""HONEST: the course's L5 forward kernel (online softmax, one walk over K and V per block of queries, tl.dot
tiles), with one change in the wrapper: q, k and v are converted to fp32 first (`.float()`, torch copies the
graders allow) so that every product and sum runs in fp32; O is allocated in q's dtype (the kernel casts when it
stores). K and V are still read once per block of queries.

Why the grader should refuse it: the fp32 copies are memory of the learner's own, and since today its loads count
in elements of q by bytes (`algorithm._unit`): on the fp16 canary case (N_q = 16, N_k = 4096) each load of the
fp32 copy of K counts twice, so `_one_pass_check` sees "2 times each of the 4096 x 16": a first pass for the max
and a second for the sum. The README promises that loads of a copy made with .to() "count as loads of the rows it
copies".
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def attention_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale,
                             CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)  # one (batch, head) pair per column of the grid
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
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
    q32, k32, v32 = (t.float().contiguous() for t in (q, k, v))  # fp32 copies, contiguous
    o = torch.empty((batch, heads, n_q, head_dim), dtype=q.dtype, device=q.device)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    grid = (triton.cdiv(n_q, 32), batch * heads)
    attention_forward_kernel[grid](q32, k32, v32, o, lse, n_q, n_k, 1.0 / math.sqrt(head_dim),
                                   CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=32, BLOCK_N=32,
                                   PRECISION="ieee", num_stages=1)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
