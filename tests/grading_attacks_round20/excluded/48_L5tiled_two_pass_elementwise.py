# CHEAT (algorithm), 47 without the laundering copy (reads k itself in both passes): a two-pass softmax, not the online one. Pass 1 finds each query row's exact maximum over all
# keys (scores built with broadcast multiply-adds, one column of d at a time, not with a matrix product); pass 2
# uses that fixed maximum (no running max, no alpha rescaling) to sum exp and accumulate p @ v. The keys are first
# copied block by block through a reduction over a singleton dimension (k_blk.unsqueeze(0).sum(0): the same
# values), so later passes read that copy instead of k. L5 Exercise 1 asks for one pass over the keys with a
# running max ("no first pass for the maximum"); this computes every score twice. A correct grader must refuse it.
import math
import torch, triton, triton.language as tl
import gpuperf, gpuperf.kernels
from gpuperf import grading


def tiled_attention(q, k, v, block_rows, block_cols):
    n_q, d = q.shape
    n_k = k.shape[0]
    scale = 1.0 / math.sqrt(d)
    k_blocks = [k[c0:c0 + block_cols] for c0 in range(0, n_k, block_cols)]
    o = torch.empty_like(q)
    for r0 in range(0, n_q, block_rows):
        q_blk = q[r0:r0 + block_rows] * scale
        rows = q_blk.shape[0]
        # pass 1: the exact max of each row over all keys
        m = torch.full((rows, 1), float("-inf"), dtype=q.dtype)
        for kb in k_blocks:
            s = torch.zeros((rows, kb.shape[0]), dtype=q.dtype)
            for j in range(d):
                s += q_blk[:, j:j + 1] * kb[:, j].unsqueeze(0)
            m = torch.maximum(m, s.amax(dim=1, keepdim=True))
        # pass 2: fixed shift, plain sums
        l = torch.zeros((rows, 1), dtype=q.dtype)
        acc = torch.zeros((rows, d), dtype=q.dtype)
        for i, kb in enumerate(k_blocks):
            p = torch.exp(q_blk @ kb.T - m)
            l += p.sum(dim=1, keepdim=True)
            acc += p @ v[i * block_cols:(i + 1) * block_cols]
        o[r0:r0 + block_rows] = acc / l
    return o

result = grading.grade("L5.tiled", tiled_attention)
