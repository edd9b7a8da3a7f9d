# WRONG (loop order the exercise forbids: keys outermost, FlashAttention-1's order, every block of queries
# revisited for each block of keys, m, l and acc kept for all queries). Each block of queries is "tainted"
# with a 0-d zero computed from every row of q (q_i = q[r0:r1] + 0 * q.sum()): _count_reads.mark_q() gives an
# operator's output the span of q rows of ALL its q-derived inputs, so every q_i is recorded as rows 0 to
# N_q - 1, every score product takes "the same rows", score_product() skips consecutive repeats, and the
# keys-outermost check (order:back: products coming back to rows they had left) never fires.
import math
import torch
from gpuperf import grading


def tiled_attention(q, k, v, block_rows, block_cols):
    n_q, d = q.shape
    n_k = k.shape[0]
    scale = 1.0 / math.sqrt(d)
    zero = q.sum() * 0.0  # a 0-d zero "computed from" every row of q
    m = torch.full((n_q, 1), float("-inf"), dtype=q.dtype)
    l = torch.zeros((n_q, 1), dtype=q.dtype)
    acc = torch.zeros((n_q, d), dtype=q.dtype)
    for c0 in range(0, n_k, block_cols):  # keys outermost
        k_blk = k[c0:c0 + block_cols]
        v_blk = v[c0:c0 + block_cols]
        for r0 in range(0, n_q, block_rows):
            q_i = q[r0:r0 + block_rows] + zero
            s = (q_i @ k_blk.T) * scale
            m_old = m[r0:r0 + block_rows]
            m_new = torch.maximum(m_old, s.amax(dim=1, keepdim=True))
            alpha = torch.exp(m_old - m_new)
            p = torch.exp(s - m_new)
            l[r0:r0 + block_rows] = l[r0:r0 + block_rows] * alpha + p.sum(dim=1, keepdim=True)
            acc[r0:r0 + block_rows] = acc[r0:r0 + block_rows] * alpha + p @ v_blk
            m[r0:r0 + block_rows] = m_new
    return acc / l
result = grading.grade("L5.tiled", tiled_attention)
