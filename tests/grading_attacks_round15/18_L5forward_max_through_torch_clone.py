"""WRONG (lazy): not FlashAttention's one pass: a first kernel walks K for each row's max, a second walks K
again for the sum and the output (K read twice per block of queries, "in one kernel or in two").

The trick: the row max the first kernel stores is handed to the second through a torch copy, `m.clone()`. Both
kernels read k as given; no casts.

Why the grader should accept it: `_one_pass_check` charges a program the loads of "every program of an earlier
kernel whose stores it read" (`trace.through_launches`); the second kernel reads the clone, whose bytes torch
wrote, not the first kernel's programs, so the lineage may stop there.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def max_kernel(q_ptr, kws_ptr, m_ptr, N_Q, N_K, scale, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    k_ptr = kws_ptr
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    for start in range(0, N_K, BLOCK_N):  # pass 1 over K: the row max
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        s = tl.where(keys[None, :] < N_K, s, float("-inf"))
        m = tl.maximum(m, tl.max(s, axis=1))
    tl.store(m_ptr + head * N_Q + rows, m, mask=rows < N_Q)


@triton.jit
def out_kernel(q_ptr, k_ptr, v_ptr, m_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, HEAD_DIM: tl.constexpr,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                mask=rows[:, None] < N_Q, other=0.0)
    m = tl.load(m_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start in range(0, N_K, BLOCK_N):  # pass 2 over K: the sum and the output, with the max of pass 1
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        s = tl.where(keys[None, :] < N_K, s, float("-inf"))
        p = tl.exp(s - m[:, None])
        l += tl.sum(p, axis=1)
        acc += tl.dot(p.to(v.dtype), v, input_precision="ieee")
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             (acc / l[:, None]).to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    m = torch.full((batch, heads, n_q), float("-inf"), dtype=torch.float32, device=q.device)
    grid = (triton.cdiv(n_q, 32), batch * heads)
    scale = 1.0 / math.sqrt(d)
    max_kernel[grid](q, k, m, n_q, n_k, scale, HEAD_DIM=d, BLOCK_M=32, BLOCK_N=32)
    out_kernel[grid](q, k, v, m.clone(), o, lse, n_q, n_k, scale, HEAD_DIM=d, BLOCK_M=32, BLOCK_N=32)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
