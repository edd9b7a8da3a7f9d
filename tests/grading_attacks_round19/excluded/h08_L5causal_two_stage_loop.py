"""HONEST: causal FlashAttention forward in the structure of Triton's fused-attention tutorial: for a block of
queries, stage 1 walks the blocks of keys wholly below the diagonal WITHOUT a mask, stage 2 walks the diagonal
block(s) with the causal mask; the two ranges are disjoint (one pass over the keys each block sees). Full
(non-causal) attention: stage 1 over every key block with the bounds mask. BLOCK_M = 64, BLOCK_N = 32, exp2."""
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def _inner(acc, l, m, q, k_head, v_head, rows, lo, hi, N_K, qk_scale, dims,
           MASKED: tl.constexpr, D: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    for start in range(lo, hi, BN):
        keys = start + tl.arange(0, BN)
        k = tl.load(k_head + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PREC) * qk_scale
        vis = keys[None, :] < N_K
        if MASKED:
            vis = vis & (keys[None, :] <= rows[:, None])
        s = tl.where(vis, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp2(m - m_new)
        p = tl.exp2(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PREC)
        m = m_new
    return acc, l, m


@triton.jit
def fwd(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, qk_scale,
        CAUSAL: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    k_head = k_ptr + head * N_K * D
    v_head = v_ptr + head * N_K * D
    m = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    if CAUSAL:
        lo_diag = tl.minimum(block_m * BM, N_K)  # keys below this block's first row: seen by every row
        acc, l, m = _inner(acc, l, m, q, k_head, v_head, rows, 0, lo_diag, N_K, qk_scale, dims,
                           False, D, BN, PREC)
        hi = tl.minimum((block_m + 1) * BM, N_K)
        acc, l, m = _inner(acc, l, m, q, k_head, v_head, rows, lo_diag, hi, N_K, qk_scale, dims,
                           True, D, BN, PREC)
    else:
        acc, l, m = _inner(acc, l, m, q, k_head, v_head, rows, 0, N_K, N_K, qk_scale, dims, False, D, BN, PREC)
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, (m + tl.log2(l)) * 0.6931471805599453, mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((B, H, n_q), dtype=torch.float32, device=q.device)
    prec = "ieee" if q.dtype == torch.float32 else "tf32"
    fwd[(triton.cdiv(n_q, 64), B * H)](q, k, v, o, lse, n_q, n_k, 1.4426950408889634 / math.sqrt(d),
                                       CAUSAL=causal, D=d, BM=64, BN=32, PREC=prec)
    return o, lse


result = grading.grade("L5.causal", attention_forward)
