# exercise: L5.tiled
# family: ordinary
# What it does wrong: keeps o in a module-level cache keyed by (N_q, d, dtype) to "save allocations": every
#   call with the same shapes returns the SAME tensor, so o1 = tiled_attention(q1, k1, v1, 32, 32) is
#   overwritten by the next call. Checked (CHECK_WRONG=1): after a second call o1 != its float64 reference.
import gpuperf.kernels

import math
import os

import torch

from gpuperf import grading

_buffers = {}


def tiled_attention(q, k, v, block_rows, block_cols):
    n_q, d = q.shape
    n_k = k.shape[0]
    scale = 1.0 / math.sqrt(d)
    key = (n_q, d, q.dtype, q.device)
    if key not in _buffers:
        _buffers[key] = torch.empty_like(q)
    o = _buffers[key]
    for r0 in range(0, n_q, block_rows):
        q_blk = q[r0:r0 + block_rows]
        rows = q_blk.shape[0]
        m = torch.full((rows, 1), float("-inf"), dtype=q.dtype)
        l = torch.zeros((rows, 1), dtype=q.dtype)
        acc = torch.zeros((rows, d), dtype=q.dtype)
        for c0 in range(0, n_k, block_cols):
            s = (q_blk @ k[c0:c0 + block_cols].T) * scale
            m_new = torch.maximum(m, s.amax(dim=1, keepdim=True))
            alpha = torch.exp(m - m_new)
            p = torch.exp(s - m_new)
            l = l * alpha + p.sum(dim=1, keepdim=True)
            acc = acc * alpha + p @ v[c0:c0 + block_cols]
            m = m_new
        o[r0:r0 + block_rows] = acc / l
    return o


if os.environ.get("CHECK_WRONG"):
    q1, k1, v1, q2, k2, v2 = (torch.randn(40, 16) for _ in range(6))
    o1 = tiled_attention(q1, k1, v1, 32, 32)
    tiled_attention(q2, k2, v2, 32, 32)
    ref = torch.softmax(q1.double() @ k1.double().T / 4, -1) @ v1.double()
    print("first result still right:", torch.allclose(o1.double(), ref, atol=1e-5))

tiled_attention = grading.grade("L5.tiled", tiled_attention)
