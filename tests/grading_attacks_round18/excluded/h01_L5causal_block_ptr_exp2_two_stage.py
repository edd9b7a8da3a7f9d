"""HONEST: a causal FlashAttention forward written the way Triton's fused-attention tutorial writes it: block
pointers (`tl.make_block_ptr`, boundary_check and zero padding) on the tensors' own strides (no `.contiguous()`
copies), exp2 with log2(e) folded into the scale, and the walk of a block of queries split in two loops: the
blocks of keys wholly below the diagonal without the causal mask, then the blocks on the diagonal with it. One
pass over the keys each query block can see, no block past the diagonal visited, 64-bit head offsets, fp32
accumulators; lse returned in natural log.

Why the grader may refuse it: block pointers (addresses read from the block's origin and strides), loads of K
and V in two separate loops (two walks?), exp2 in place of exp.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def _inner(acc, l, m, q, K_blk, V_blk, rows, lo, hi, N_K, qk_scale, BLOCK_N: tl.constexpr,
           DIAG: tl.constexpr):
    K_blk = tl.advance(K_blk, (0, lo))
    V_blk = tl.advance(V_blk, (lo, 0))
    for start in range(lo, hi, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        kt = tl.load(K_blk, boundary_check=(0, 1), padding_option="zero")  # (d, BLOCK_N)
        v = tl.load(V_blk, boundary_check=(0, 1), padding_option="zero")
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
        K_blk = tl.advance(K_blk, (0, BLOCK_N))
        V_blk = tl.advance(V_blk, (BLOCK_N, 0))
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
    Q_blk = tl.make_block_ptr(q_ptr + b * sqb + h * sqh, shape=(N_Q, HEAD_DIM), strides=(sqn, 1),
                              offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, HEAD_DIM), order=(1, 0))
    K_blk = tl.make_block_ptr(k_ptr + b * skb + h * skh, shape=(HEAD_DIM, N_K), strides=(1, skn),
                              offsets=(0, 0), block_shape=(HEAD_DIM, BLOCK_N), order=(0, 1))
    V_blk = tl.make_block_ptr(v_ptr + b * svb + h * svh, shape=(N_K, HEAD_DIM), strides=(svn, 1),
                              offsets=(0, 0), block_shape=(BLOCK_N, HEAD_DIM), order=(1, 0))
    O_blk = tl.make_block_ptr(o_ptr + b * sob + h * soh, shape=(N_Q, HEAD_DIM), strides=(son, 1),
                              offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, HEAD_DIM), order=(1, 0))
    rows = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    q = tl.load(Q_blk, boundary_check=(0, 1), padding_option="zero")
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    if CAUSAL:
        # stage 1: the blocks of keys wholly below the diagonal, no causal mask (BLOCK_M == BLOCK_N)
        off = tl.minimum(start_m * BLOCK_M, N_K)
        acc, l, m = _inner(acc, l, m, q, K_blk, V_blk, rows, 0, off, N_K, qk_scale, BLOCK_N, False)
        # stage 2: the block on the diagonal, masked
        hi = tl.minimum((start_m + 1) * BLOCK_M, N_K)
        acc, l, m = _inner(acc, l, m, q, K_blk, V_blk, rows, off, hi, N_K, qk_scale, BLOCK_N, True)
    else:
        acc, l, m = _inner(acc, l, m, q, K_blk, V_blk, rows, 0, N_K, N_K, qk_scale, BLOCK_N, False)
    o = acc / l[:, None]
    tl.store(O_blk, o.to(o_ptr.dtype.element_ty), boundary_check=(0, 1))
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
