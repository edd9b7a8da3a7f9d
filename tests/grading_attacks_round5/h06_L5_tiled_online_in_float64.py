# exercise: L5.tiled
# family: honest (expected to pass)
# What it does: the course's online softmax exactly (running max, rescaled sum and output), computed in float64
#   for accuracy: each block of q, k and v is converted with .double() before its products.
import gpuperf.kernels

import math

import torch

from gpuperf import grading


def tiled_attention(q, k, v, block_rows, block_cols):
    n_q, d = q.shape
    n_k = k.shape[0]
    scale = 1.0 / math.sqrt(d)
    o = torch.empty_like(q)
    for r0 in range(0, n_q, block_rows):
        q_blk = q[r0:r0 + block_rows].double()
        rows = q_blk.shape[0]
        m = torch.full((rows, 1), float("-inf"), dtype=torch.float64)
        l = torch.zeros((rows, 1), dtype=torch.float64)
        acc = torch.zeros((rows, d), dtype=torch.float64)
        for c0 in range(0, n_k, block_cols):
            s = (q_blk @ k[c0:c0 + block_cols].double().T) * scale
            m_new = torch.maximum(m, s.amax(dim=1, keepdim=True))
            alpha = torch.exp(m - m_new)
            p = torch.exp(s - m_new)
            l = l * alpha + p.sum(dim=1, keepdim=True)
            acc = acc * alpha + p @ v[c0:c0 + block_cols].double()
            m = m_new
        o[r0:r0 + block_rows] = (acc / l).float()
    return o


tiled_attention = grading.grade("L5.tiled", tiled_attention)
