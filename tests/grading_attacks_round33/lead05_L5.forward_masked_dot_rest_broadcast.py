# WRONG/LAZY (a variant of mine, round 33): the course's forward, but S = Q K^T's tl.dot takes Q's tile masked to
# its first head dimension (a dot over zeros, its multiply-adds counted in full); the other d - 1 dimensions are
# a broadcast multiply and a sum. The static rule refuses the broadcast. (With it off this passes: L5 does not
# count the non-zero products of its dots, as L4 does; its cases include q = 0, so the count needs the inputs.)
import math
import os

import torch
import triton
import triton.language as tl
from gpuperf import grading


def triton_interpreting():
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


@triton.jit
def attention_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale,
                             CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)  # one (batch, head) pair per column of the grid
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    q = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)

    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)  # running row max of the scores
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)  # running sum of exp(score - m)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)  # running unnormalised output
    end = N_K
    if CAUSAL:  # key blocks right of this query block's last row are all masked: skip them
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        first = dims[None, :] == 0
        s = tl.dot(tl.where(first, q, 0.0), tl.trans(k), input_precision=PRECISION)
        rest = tl.where(first, 0.0, q).to(tl.float32)
        s = (s + tl.sum(rest[:, None, :] * k.to(tl.float32)[None, :, :], axis=2)) * scale
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        # key 0 is visible to every row, so m is finite from the first block on
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)  # rescales what was accumulated under the old max
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    on_gpu = q.is_cuda and not triton_interpreting()
    sm80 = on_gpu and torch.cuda.get_device_capability(q.device)[0] >= 8
    block_m, block_n = (64, 64) if on_gpu and q.element_size() == 2 else (32, 32)
    if on_gpu and not sm80 and head_dim > 64:  # a T4 (sm_75) has 64 KB of shared
        block_m, block_n = block_m // 2, block_n // 2  # memory: halve the d = 128 tiles
    stages = 2 if sm80 else 1  # pipelined loads take shared memory: one stage on a T4
    precision = "ieee" if q.dtype == torch.float32 else "tf32"  # fp32 means fp32
    grid = (triton.cdiv(n_q, block_m), batch * heads)
    attention_forward_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(head_dim),
                                   CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=block_m,
                                   BLOCK_N=block_n, PRECISION=precision,
                                   num_stages=stages)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
