# WRONG: rescales l by alpha but forgets to rescale acc: when the max grows in a later
# key block, the earlier contributions to acc keep their old (too large) scale.
import math
import torch, triton, triton.language as tl
import gpuperf, gpuperf.kernels
from gpuperf import grading

def tiled_attention(q, k, v, block_rows, block_cols):
    # o = softmax(q k^T / sqrt(d)) v for q (N_q, d), k and v (N_k, d), one block of
    # queries at a time; the scores exist only block by block, never as N_q x N_k.
    n_q, d = q.shape
    n_k = k.shape[0]
    scale = 1.0 / math.sqrt(d)
    o = torch.empty_like(q)
    for r0 in range(0, n_q, block_rows):
        q_blk = q[r0:r0 + block_rows]
        rows = q_blk.shape[0]
        m = torch.full((rows, 1), float("-inf"), dtype=q.dtype)  # running max
        l = torch.zeros((rows, 1), dtype=q.dtype)  # running sum of exp(s - m)
        acc = torch.zeros((rows, d), dtype=q.dtype)  # running unnormalised output
        for c0 in range(0, n_k, block_cols):
            s = (q_blk @ k[c0:c0 + block_cols].T) * scale
            m_new = torch.maximum(m, s.amax(dim=1, keepdim=True))
            alpha = torch.exp(m - m_new)  # rescales what was summed under the old max
            p = torch.exp(s - m_new)
            l = l * alpha + p.sum(dim=1, keepdim=True)
            acc = acc + p @ v[c0:c0 + block_cols]
            m = m_new
        o[r0:r0 + block_rows] = acc / l
    return o

result = grading.grade("L5.tiled", tiled_attention)
