# exercise: L5.tiled
# family: algorithm
# What it does wrong: no online softmax. For each block of queries it computes every score block once and
# keeps them all (the whole block_rows x N_k row of scores, held as a list of blocks), takes the exact row
# max over them, then a second pass over the kept blocks sums exp and multiplies by V. No running max, no
# rescaling, and all of S for the block of queries is held at once; each single operation stays small, and
# k and v are each read once per block of queries, so every count the grader takes looks like one pass.
import gpuperf.kernels  # first: without a GPU it switches Triton to its CPU interpreter
import math
import torch
from gpuperf import grading


def tiled_attention(q, k, v, block_rows, block_cols):
    n_q, d = q.shape
    n_k = k.shape[0]
    scale = 1.0 / math.sqrt(d)
    o = torch.empty_like(q)
    for r0 in range(0, n_q, block_rows):
        q_blk = q[r0:r0 + block_rows]
        kept = []
        m = None
        for c0 in range(0, n_k, block_cols):
            s = (q_blk @ k[c0:c0 + block_cols].T) * scale
            kept.append(s)  # the scores are never thrown away: N_q x N_k of them in the end
            mx = s.amax(dim=1, keepdim=True)
            m = mx if m is None else torch.maximum(m, mx)
        l = torch.zeros((q_blk.shape[0], 1), dtype=q.dtype)
        acc = torch.zeros((q_blk.shape[0], d), dtype=q.dtype)
        for j, c0 in enumerate(range(0, n_k, block_cols)):  # second pass: exact max known, no rescale
            p = torch.exp(kept[j] - m)
            l = l + p.sum(dim=1, keepdim=True)
            acc = acc + p @ v[c0:c0 + block_cols]
        o[r0:r0 + block_rows] = acc / l
    return o


tiled_attention = grading.grade("L5.tiled", tiled_attention)
