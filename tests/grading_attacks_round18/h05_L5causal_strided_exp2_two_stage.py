"""HONEST: a causal FlashAttention forward in the layout of Triton's fused-attention tutorial: the tensors' own
strides (no `.contiguous()` copies; the head dimension's stride is 1, the labs' contract), exp2 with log2(e)
folded into the scale, and the walk of a block of queries split in two loops: the blocks of keys wholly below
the diagonal without the causal mask (stage 1), then the block on the diagonal with it (stage 2). One pass over
the keys each block of queries can see, no block past the diagonal, 64-bit head offsets, fp32 accumulators;
lse returned in natural log. (excluded/h01 wrote the same with `tl.make_block_ptr`, which Triton 3.9 removed.)

Why the grader may refuse it: loads of K and V in two separate loops (two walks?), exp2 in place of exp, K
loaded transposed through its strides.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def _inner(acc, l, m, q, k_head, v_head, skn, svn, rows, lo, hi, N_K, qk_scale, HEAD_DIM: tl.constexpr,
           BLOCK_N: tl.constexpr, DIAG: tl.constexpr):
    dims = tl.arange(0, HEAD_DIM)
    for start in range(lo, hi, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        kt = tl.load(k_head + keys[None, :] * skn + dims[:, None], mask=keys[None, :] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * svn + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, kt, input_precision="ieee") * qk_scale  # in log2 units
        visible = keys[None, :] < N_K
        if DIAG:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp2(m - m_new)
        p = tl.exp2(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        m = m_new
    return acc, l, m


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr,
               sqb, sqh, sqn, skb, skh, skn, svb, svh, svn, sob, soh, son, slb, slh,
               H, N_Q, N_K, qk_scale, CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    b = bh // H
    h = bh % H
    q_head = q_ptr + b * sqb + h * sqh
    k_head = k_ptr + b * skb + h * skh
    v_head = v_ptr + b * svb + h * svh
    rows = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_head + rows[:, None] * sqn + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    if CAUSAL:
        # stage 1: the blocks of keys wholly below the diagonal, no causal mask (BLOCK_M == BLOCK_N)
        off = tl.minimum(start_m * BLOCK_M, N_K)
        acc, l, m = _inner(acc, l, m, q, k_head, v_head, skn, svn, rows, 0, off, N_K, qk_scale,
                           HEAD_DIM, BLOCK_N, False)
        # stage 2: the block on the diagonal, masked
        hi = tl.minimum((start_m + 1) * BLOCK_M, N_K)
        acc, l, m = _inner(acc, l, m, q, k_head, v_head, skn, svn, rows, off, hi, N_K, qk_scale,
                           HEAD_DIM, BLOCK_N, True)
    else:
        acc, l, m = _inner(acc, l, m, q, k_head, v_head, skn, svn, rows, 0, N_K, N_K, qk_scale,
                           HEAD_DIM, BLOCK_N, False)
    o = acc / l[:, None]
    tl.store(o_ptr + b * sob + h * soh + rows[:, None] * son + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N_Q)
    lse = (m + tl.log2(l)) * 0.6931471805599453  # back to natural log
    tl.store(lse_ptr + b * slb + h * slh + rows, lse, mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    o = torch.empty((B, H, n_q, d), dtype=q.dtype, device=q.device)
    lse = torch.empty((B, H, n_q), dtype=torch.float32, device=q.device)
    BLOCK = 32
    grid = (triton.cdiv(n_q, BLOCK), B * H)
    fwd_kernel[grid](q, k, v, o, lse,
                     q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
                     v.stride(0), v.stride(1), v.stride(2), o.stride(0), o.stride(1), o.stride(2),
                     lse.stride(0), lse.stride(1), H, n_q, n_k, 1.4426950408889634 / math.sqrt(d),
                     CAUSAL=causal, HEAD_DIM=d, BLOCK_M=BLOCK, BLOCK_N=BLOCK)
    return o, lse


result = grading.grade("L5.causal", attention_forward)
