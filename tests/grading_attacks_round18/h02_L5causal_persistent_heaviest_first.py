"""HONEST: a persistent causal FlashAttention forward: a grid of at most 132 programs (one per multiprocessor of an
H200), each taking (head, block of queries) tiles in turn, tile = pid, pid + P, pid + 2P, ...; the blocks of
queries are taken heaviest first (the last block of each head, which walks the most keys, first: the usual
load-balancing order for a causal mask). Each tile: q loaded once, one online-softmax walk over the blocks of keys
up to its own diagonal (no block past it), bounds mask and causal mask, fp32 accumulators, 64-bit head offsets.

Why the grader may refuse it: one program holds several blocks of queries, of several heads, one after another,
in descending order (the causal pass and skip checks judge each walk against the block held at the time).
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, n_blocks, n_tiles, scale,
               CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    dims = tl.arange(0, HEAD_DIM)
    for tile in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
        head = (tile // n_blocks).to(tl.int64)
        block_m = n_blocks - 1 - tile % n_blocks  # heaviest block of queries first
        rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
        q_head = q_ptr + head * N_Q * HEAD_DIM
        k_head = k_ptr + head * N_K * HEAD_DIM
        v_head = v_ptr + head * N_K * HEAD_DIM
        q = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
        m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
        l = tl.zeros((BLOCK_M,), dtype=tl.float32)
        acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
        end = N_K
        if CAUSAL:
            end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
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
            alpha = tl.exp(m - m_new)
            p = tl.exp(s - m_new[:, None])
            l = l * alpha + tl.sum(p, axis=1)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
            m = m_new
        o = acc / l[:, None]
        tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                 o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
        tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((B, H, n_q), dtype=torch.float32, device=q.device)
    BLOCK = 32
    n_blocks = triton.cdiv(n_q, BLOCK)
    n_tiles = n_blocks * B * H
    fwd_kernel[(min(132, n_tiles),)](q, k, v, o, lse, n_q, n_k, n_blocks, n_tiles, 1.0 / math.sqrt(d),
                                     CAUSAL=causal, HEAD_DIM=d, BLOCK_M=BLOCK, BLOCK_N=BLOCK)
    return o, lse


result = grading.grade("L5.causal", attention_forward)
