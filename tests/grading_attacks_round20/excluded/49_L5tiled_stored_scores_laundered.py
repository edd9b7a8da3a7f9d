# CHEAT (algorithm): the classic two-pass "safe softmax" over a stored row of scores, not the online softmax: for
# each block of queries every block of scores S_ij = Q_i K_j^T is computed once and KEPT (a list holding the whole
# block_rows x N_k row of scores), then the exact row max is taken over all of them and a second sweep over the
# stored blocks does exp, the sum and p @ v. Each stored block is passed through a reduction over a singleton
# dimension (s.unsqueeze(0).sum(0): the same values) before it is kept. The exercise forbids exactly this:
# "no tensor as large as the N_q x N_k score matrix, so the scores may exist only block by block" and
# "one pass over the keys (no first pass for the maximum)". A correct grader must refuse it.
import math
import torch, triton, triton.language as tl
import gpuperf, gpuperf.kernels
from gpuperf import grading


def tiled_attention(q, k, v, block_rows, block_cols):
    n_q, d = q.shape
    n_k = k.shape[0]
    scale = 1.0 / math.sqrt(d)
    o = torch.empty_like(q)
    for r0 in range(0, n_q, block_rows):
        q_blk = q[r0:r0 + block_rows]
        stored = []
        m = torch.full((q_blk.shape[0], 1), float("-inf"), dtype=q.dtype)
        for c0 in range(0, n_k, block_cols):
            s = (q_blk @ k[c0:c0 + block_cols].T) * scale
            stored.append(s.unsqueeze(0).sum(0))
            m = torch.maximum(m, s.amax(dim=1, keepdim=True))
        l = torch.zeros_like(m)
        acc = torch.zeros((q_blk.shape[0], d), dtype=q.dtype)
        for i, s in enumerate(stored):
            p = torch.exp(s - m)
            l += p.sum(dim=1, keepdim=True)
            acc += p @ v[i * block_cols:(i + 1) * block_cols]
        o[r0:r0 + block_rows] = acc / l
    return o

result = grading.grade("L5.tiled", tiled_attention)
