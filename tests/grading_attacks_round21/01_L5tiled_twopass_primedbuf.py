# WRONG (two-pass softmax, the algorithm L5.tiled forbids): for each block of queries a first pass over all
# blocks of keys takes the exact row max, then a second pass computes exp(s - max), the sum and P V. Keys go
# through one reused buffer `kbuf` (v through `vbuf`) that was first "primed" with a single element of k (of v),
# and a reference to that primed view is kept alive. The grader's read counter (_count_reads.own) sets how many
# distinct elements of k a buffer can hold only the first time it owns the buffer (1 element), so every later read
# of the buffer is counted as one element of k, and two passes over k look like far less than one.
# The first pass's scores are a sum of d outer products by elementwise mul (no matrix-product op name), so the
# grader's product count sees 2 products per tile.
import math
import torch
from gpuperf import grading


def tiled_attention(q, k, v, block_rows, block_cols):
    n_q, d = q.shape
    n_k = k.shape[0]
    scale = 1.0 / math.sqrt(d)
    o = torch.empty_like(q)
    kbuf = torch.empty((block_cols, d), dtype=k.dtype)
    vbuf = torch.empty((block_cols, d), dtype=v.dtype)
    kprime = kbuf[:1, :1]
    kprime.copy_(k[:1, :1])
    vprime = vbuf[:1, :1]
    vprime.copy_(v[:1, :1])
    for r0 in range(0, n_q, block_rows):
        q_blk = q[r0:r0 + block_rows]
        rows = q_blk.shape[0]
        m = torch.full((rows, 1), float("-inf"), dtype=q.dtype)
        for c0 in range(0, n_k, block_cols):  # pass 1: the exact max
            kb = kbuf[:min(block_cols, n_k - c0)]
            kb.copy_(k[c0:c0 + block_cols])
            s = q_blk[:, :1] * kb[:, 0][None, :]
            for j in range(1, d):  # scores as a sum of outer products (mul, not a matrix-product op)
                s = s + q_blk[:, j:j + 1] * kb[:, j][None, :]
            s = s * scale
            m = torch.maximum(m, s.amax(dim=1, keepdim=True))
        l = torch.zeros((rows, 1), dtype=q.dtype)
        acc = torch.zeros((rows, d), dtype=q.dtype)
        for c0 in range(0, n_k, block_cols):  # pass 2: probabilities with the exact max
            n = min(block_cols, n_k - c0)
            kb = kbuf[:n]
            kb.copy_(k[c0:c0 + block_cols])
            vb = vbuf[:n]
            vb.copy_(v[c0:c0 + block_cols])
            p = torch.exp((q_blk @ kb.T) * scale - m)
            l = l + p.sum(dim=1, keepdim=True)
            acc = acc + p @ vb
        o[r0:r0 + block_rows] = acc / l
    return o
result = grading.grade("L5.tiled", tiled_attention)
