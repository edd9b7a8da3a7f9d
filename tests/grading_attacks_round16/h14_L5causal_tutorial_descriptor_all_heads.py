"""HONEST (as Triton's fused-attention tutorial): the course's L5 forward kernel with its loads through ONE tensor
descriptor per tensor over every head's rows (B H N rows of HEAD_DIM), a head's rows at row coordinate
head * N. BUT: rows of a tile that run past the head's N rows are not padded by the descriptor (they are the next
head's rows), and the scores mask them (keys < N_K): wasted lanes, right values. The coordinates are row indices,
32-bit: they wrap past 2^31 rows (2^31 * d elements), which no GPU holds.

Why the grader might refuse it: the 32-bit rule, or the tiles read across the next head's rows (block sizes,
visits, the rows one load covers).
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def attention_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, NUM_HEADS, scale,
                             CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)  # one (batch, head) pair per column of the grid
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    # as Triton's fused-attention tutorial: one descriptor over every head's rows (B H N rows of HEAD_DIM),
    # a head's rows found at row coordinate head * N (a row index: it wraps past 2^31 ROWS, not elements)
    hz = tl.program_id(1)
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[NUM_HEADS * N_Q, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_M, HEAD_DIM])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[NUM_HEADS * N_K, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[NUM_HEADS * N_K, HEAD_DIM], strides=[HEAD_DIM, 1],
                                       block_shape=[BLOCK_N, HEAD_DIM])
    q_row0 = hz * N_Q
    k_row0 = hz * N_K
    q = q_desc.load([q_row0 + block_m * BLOCK_M, 0])

    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)  # running row max of the scores
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)  # running sum of exp(score - m)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)  # running unnormalised output
    end = N_K
    if CAUSAL:  # key blocks right of this query block's last row are all masked: skip them
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = k_desc.load([k_row0 + start, 0])
        v = v_desc.load([k_row0 + start, 0])
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
    grid = (triton.cdiv(n_q, 32), batch * heads)
    attention_forward_kernel[grid](q, k, v, o, lse, n_q, n_k, batch * heads, 1.0 / math.sqrt(head_dim),
                                   CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=32,
                                   BLOCK_N=32, PRECISION=precision, num_stages=1)
    return o, lse


result = grading.grade("L5.causal", attention_forward)
