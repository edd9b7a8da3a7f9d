# exercise: L5.forward
# family: algorithm
# What is wrong: no tiles of queries and no tensor cores. One program per query row (a grid of N_q x heads
# programs), each re-reading all of K and V from memory (K and V are read N_q times instead of
# N_q / BLOCK_M), and the scores and P V are broadcast multiplies and sums instead of tl.dot. The online
# softmax itself is right, so every number is right.
import math

import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def attention_row_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr,
                         HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + row * HEAD_DIM + dims).to(tl.float32)
    m = tl.max(tl.full((BLOCK_N,), float("-inf"), dtype=tl.float32), axis=0)
    l = tl.sum(tl.zeros((BLOCK_N,), dtype=tl.float32), axis=0)
    acc = tl.zeros((HEAD_DIM,), dtype=tl.float32)
    for start in range(0, N_K, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        kv = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
        k = tl.load(k_ptr + kv, mask=keys[:, None] < N_K, other=0.0).to(tl.float32)
        v = tl.load(v_ptr + kv, mask=keys[:, None] < N_K, other=0.0).to(tl.float32)
        s = tl.sum(k * q[None, :], axis=1) * scale
        visible = keys < N_K
        if CAUSAL:
            visible = visible & (keys <= row)
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=0))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new)
        l = l * alpha + tl.sum(p, axis=0)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        m = m_new
    tl.store(o_ptr + head * N_Q * HEAD_DIM + row * HEAD_DIM + dims, (acc / l).to(o_ptr.dtype.element_ty))
    tl.store(lse_ptr + head * N_Q + row, m + tl.log(l))


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    attention_row_kernel[(n_q, batch * heads)](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal,
                                               HEAD_DIM=d, BLOCK_N=64)
    return o, lse


attention_forward = grading.grade("L5.forward", attention_forward)
