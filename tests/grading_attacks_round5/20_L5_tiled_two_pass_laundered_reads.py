# exercise: L5.tiled
# family: escape
# What it does wrong: not the online softmax: for each block of queries a first pass computes the exact row
#   maximum over every key block, then a second pass computes exp(s - max), the sum and P V with no
#   rescaling (the safe softmax in two passes, which the exercise and the grader's read count forbid: "a first
#   pass for the max ... reads them more"). It gets past the count in two ways: each block of k and v is
#   copied once through a broadcast (`k_blk.unsqueeze(0) * ones(2, 1, 1)`), whose output has another shape, so
#   _count_reads no longer counts reads of the copy as reads of k; and the first pass's scores are a multiply
#   and a sum, which the count of matrix products does not see. Checked: the values are right (max error
#   ~1e-7 against float64); the algorithm is the two-pass one, with k read twice per block of queries.
import gpuperf.kernels

import math

import torch

from gpuperf import grading


def tiled_attention(q, k, v, block_rows, block_cols):
    n_q, d = q.shape
    n_k = k.shape[0]
    scale = 1.0 / math.sqrt(d)
    two = torch.ones(2, 1, 1, dtype=q.dtype)
    k_blocks, v_blocks = [], []
    for c0 in range(0, n_k, block_cols):  # my own copy of each block, made once
        k_blocks.append((k[c0:c0 + block_cols].unsqueeze(0) * two)[0])
        v_blocks.append((v[c0:c0 + block_cols].unsqueeze(0) * two)[0])
    o = torch.empty_like(q)
    for r0 in range(0, n_q, block_rows):
        q_blk = q[r0:r0 + block_rows]
        rows = q_blk.shape[0]
        # pass 1: the exact maximum of every row
        m = torch.full((rows, 1), float("-inf"), dtype=q.dtype)
        for kb in k_blocks:
            for i in range(rows):
                s_i = (q_blk[i] * kb).sum(dim=1) * scale
                m[i, 0] = torch.maximum(m[i, 0], s_i.max())
        # pass 2: exp(s - max), the sum and P V, no rescaling needed
        l = torch.zeros((rows, 1), dtype=q.dtype)
        acc = torch.zeros((rows, d), dtype=q.dtype)
        for kb, vb in zip(k_blocks, v_blocks):
            p = torch.exp((q_blk @ kb.T) * scale - m)
            l = l + p.sum(dim=1, keepdim=True)
            acc = acc + p @ vb
        o[r0:r0 + block_rows] = acc / l
    return o


tiled_attention = grading.grade("L5.tiled", tiled_attention)
