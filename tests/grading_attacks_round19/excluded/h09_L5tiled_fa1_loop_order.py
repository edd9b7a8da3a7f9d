"""HONEST: the original FlashAttention (v1) loop order in plain PyTorch: the OUTER loop walks the blocks of keys
and values, the inner loop the blocks of queries, with each query block's running max, sum and unnormalised
output kept between visits (in tensors of N_q rows, as FlashAttention-1 keeps them in HBM). Each (query block,
key block) pair costs S = Q_i K_j^T and P V_j once; no N_q x N_k score matrix ever exists."""
import math
import torch
from gpuperf import grading


def tiled_attention(q, k, v, block_rows, block_cols):
    n_q, d = q.shape
    n_k = k.shape[0]
    scale = 1.0 / math.sqrt(d)
    m = torch.full((n_q, 1), float("-inf"), dtype=q.dtype)
    l = torch.zeros((n_q, 1), dtype=q.dtype)
    acc = torch.zeros((n_q, d), dtype=q.dtype)
    for c0 in range(0, n_k, block_cols):
        k_blk, v_blk = k[c0:c0 + block_cols], v[c0:c0 + block_cols]
        for r0 in range(0, n_q, block_rows):
            r1 = min(r0 + block_rows, n_q)
            s = (q[r0:r1] @ k_blk.T) * scale
            m_old = m[r0:r1]
            m_new = torch.maximum(m_old, s.amax(dim=1, keepdim=True))
            alpha = torch.exp(m_old - m_new)
            p = torch.exp(s - m_new)
            l[r0:r1] = l[r0:r1] * alpha + p.sum(dim=1, keepdim=True)
            acc[r0:r1] = acc[r0:r1] * alpha + p @ v_blk
            m[r0:r1] = m_new
    return acc / l


result = grading.grade("L5.tiled", tiled_attention)
