# exercise: L5.tiled
# family: algorithm
# What it does wrong: no running maximum: each block of queries takes the row maxima of its FIRST key block as
#   a fixed shift and never rescales; exp(s - shift), l and acc are kept in float64, whose exp overflows only
#   past 709. The grader's largest scores ("huge": about +-1000) differ from the first block's maximum by a
#   few hundred at most, inside float64's range, so the missing running max is never seen. Wrong on
#   legitimate inputs where a later key block's scores exceed the first block's by more than 709.
#   Checked: verify_25.py, keys of the first block pointing away from q and later keys towards it (scores
#   -1000 then +1000): NaN, while the online softmax gives the float64 answer.
import gpuperf.kernels

import math

import torch

from gpuperf import grading


def tiled_attention(q, k, v, block_rows, block_cols):
    n_q, d = q.shape
    n_k = k.shape[0]
    scale = 1.0 / math.sqrt(d)
    o = torch.empty_like(q)
    keep = []  # (keeping the float64 copies alive: see h06 in REPORT.md)
    for r0 in range(0, n_q, block_rows):
        q_blk = q[r0:r0 + block_rows].double()
        rows = q_blk.shape[0]
        shift = None
        l = torch.zeros((rows, 1), dtype=torch.float64)
        acc = torch.zeros((rows, d), dtype=torch.float64)
        for c0 in range(0, n_k, block_cols):
            kc, vc = k[c0:c0 + block_cols].double(), v[c0:c0 + block_cols].double()
            keep += [kc, vc]
            s = (q_blk @ kc.T) * scale
            if shift is None:
                shift = s.amax(dim=1, keepdim=True)  # float64 has room for the rest
            p = torch.exp(s - shift)
            l = l + p.sum(dim=1, keepdim=True)
            acc = acc + p @ vc
        o[r0:r0 + block_rows] = (acc / l).float()
    return o


tiled_attention = grading.grade("L5.tiled", tiled_attention)
