# HONEST: the course's tiled_attention, with one common optimisation: the 1/sqrt(d) scale is folded into a
# copy of k made once before the loops (k_s = k * scale), so every block's S = Q_i (K_j * scale)^T needs no
# extra multiply. Same one-pass online softmax, same loop order, each block of k read once per block of
# queries. The grader counts the one-off scaling of k as a full extra read of k: on a case with a single
# block of queries (N_q <= block_rows) that is 2 reads of k per block of queries > 1.5.
import math
import torch
from gpuperf import grading


def tiled_attention(q, k, v, block_rows, block_cols):
    n_q, d = q.shape
    n_k = k.shape[0]
    scale = 1.0 / math.sqrt(d)
    k_s = k * scale  # fold the scale into k once
    o = torch.empty_like(q)
    for r0 in range(0, n_q, block_rows):
        q_blk = q[r0:r0 + block_rows]
        rows = q_blk.shape[0]
        m = torch.full((rows, 1), float("-inf"), dtype=q.dtype)
        l = torch.zeros((rows, 1), dtype=q.dtype)
        acc = torch.zeros((rows, d), dtype=q.dtype)
        for c0 in range(0, n_k, block_cols):
            s = q_blk @ k_s[c0:c0 + block_cols].T
            m_new = torch.maximum(m, s.amax(dim=1, keepdim=True))
            alpha = torch.exp(m - m_new)
            p = torch.exp(s - m_new)
            l = l * alpha + p.sum(dim=1, keepdim=True)
            acc = acc * alpha + p @ v[c0:c0 + block_cols]
            m = m_new
        o[r0:r0 + block_rows] = acc / l
    return o
result = grading.grade("L5.tiled", tiled_attention)
