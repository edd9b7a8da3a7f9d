# exercise: L5.tiled
# family: ordinary
# why: Ignores the blocks: one query at a time against all keys, two passes (max, then sum), scores computed by broadcast-multiply-and-sum instead of @ so that the grader's matrix-product count sees nothing. Not the online softmax over blocks. A correct solution loops over key blocks with a running max, sum and output.
# expect: ACCEPTED if the grader only counts mm/bmm-like operators
import _common; _common.setup()
import math
import torch
from gpuperf import grading


def tiled_attention(q, k, v, block_rows, block_cols):
    n_q, d = q.shape
    scale = 1.0 / math.sqrt(d)
    o = torch.empty_like(q)
    for i in range(n_q):
        s = (q[i][None, :] * k).sum(1) * scale      # N_k scores of one query: no matrix product
        p = torch.exp(s - s.max())
        o[i] = (p[:, None] * v).sum(0) / p.sum()
    return o


tiled_attention = grading.grade("L5.tiled", tiled_attention)
