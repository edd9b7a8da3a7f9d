# HONEST: tiled attention whose running max and sum start from the first key block
# (no -inf start), then the online update over the remaining blocks; normalises at the end.
import math
import torch, triton, triton.language as tl
import gpuperf, gpuperf.kernels
from gpuperf import grading

def tiled_attention(q, k, v, block_rows, block_cols):
    n_q, d = q.shape
    n_k = k.shape[0]
    scale = d ** -0.5
    out = torch.empty_like(q)
    r0 = 0
    while r0 < n_q:
        qb = q[r0:r0 + block_rows] * scale
        s = qb @ k[0:block_cols].T
        m = s.amax(dim=1, keepdim=True)
        p = torch.exp(s - m)
        l = p.sum(dim=1, keepdim=True)
        acc = p @ v[0:block_cols]
        c0 = block_cols
        while c0 < n_k:
            s = qb @ k[c0:c0 + block_cols].T
            m_new = torch.maximum(m, s.amax(dim=1, keepdim=True))
            p = torch.exp(s - m_new)
            corr = torch.exp(m - m_new)
            l = corr * l + p.sum(dim=1, keepdim=True)
            acc = corr * acc + p @ v[c0:c0 + block_cols]
            m = m_new
            c0 += block_cols
        out[r0:r0 + block_rows] = acc / l
        r0 += block_rows
    return out

result = grading.grade("L5.tiled", tiled_attention)
