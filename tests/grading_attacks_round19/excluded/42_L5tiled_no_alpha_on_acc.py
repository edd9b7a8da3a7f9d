"""WRONG: the running sum l is rescaled by alpha = exp(m_old - m_new) but the running output acc is not."""
import math
import torch
from gpuperf import grading


def tiled_attention(q, k, v, block_rows, block_cols):
    n_q, d = q.shape
    n_k = k.shape[0]
    scale = 1.0 / math.sqrt(d)
    o = torch.empty_like(q)
    for r0 in range(0, n_q, block_rows):
        qb = q[r0:r0 + block_rows]
        m = torch.full((qb.shape[0], 1), float("-inf"))
        l = torch.zeros((qb.shape[0], 1))
        acc = torch.zeros((qb.shape[0], d))
        for c0 in range(0, n_k, block_cols):
            s = (qb @ k[c0:c0 + block_cols].T) * scale
            m_new = torch.maximum(m, s.amax(dim=1, keepdim=True))
            alpha = torch.exp(m - m_new)
            p = torch.exp(s - m_new)
            l = l * alpha + p.sum(dim=1, keepdim=True)
            acc = acc + p @ v[c0:c0 + block_cols]
            m = m_new
        o[r0:r0 + block_rows] = acc / l
    return o


result = grading.grade("L5.tiled", tiled_attention)
