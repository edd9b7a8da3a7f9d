# exercise: L5.forward (and L5.causal)
# family: honest
# What it does differently: loads and stores through tensor descriptors (tl.make_tensor_descriptor, the
# API Triton 3.6 gives in place of block pointers, TMA-backed on Hopper, as Triton's current fused-attention
# tutorial does): one 3-D descriptor per tensor over (B*H, N, d), boundary handling by the descriptor's
# zero padding instead of masks. Correct: must pass (on a GPU it needs triton.set_allocator for the
# in-kernel descriptors; the interpreter does not).
import gpuperf.kernels  # first: without a GPU it switches Triton to its CPU interpreter
import math
import sys

import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def desc_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, HEADS, N_Q, N_K, scale,
                CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1)
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[HEADS, N_Q, HEAD_DIM], strides=[N_Q * HEAD_DIM, HEAD_DIM, 1],
                                       block_shape=[1, BLOCK_M, HEAD_DIM])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[HEADS, N_K, HEAD_DIM], strides=[N_K * HEAD_DIM, HEAD_DIM, 1],
                                       block_shape=[1, BLOCK_N, HEAD_DIM])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[HEADS, N_K, HEAD_DIM], strides=[N_K * HEAD_DIM, HEAD_DIM, 1],
                                       block_shape=[1, BLOCK_N, HEAD_DIM])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[HEADS, N_Q, HEAD_DIM], strides=[N_Q * HEAD_DIM, HEAD_DIM, 1],
                                       block_shape=[1, BLOCK_M, HEAD_DIM])
    q = q_desc.load([head, block_m * BLOCK_M, 0]).reshape(BLOCK_M, HEAD_DIM)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = k_desc.load([head, start, 0]).reshape(BLOCK_N, HEAD_DIM)
        v = v_desc.load([head, start, 0]).reshape(BLOCK_N, HEAD_DIM)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m = m_new
    o_desc.store([head, block_m * BLOCK_M, 0], (acc / l[:, None]).to(o_ptr.dtype.element_ty).reshape(1, BLOCK_M, HEAD_DIM))
    tl.store(lse_ptr + head.to(tl.int64) * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(n_q, 32), batch * heads)
    desc_kernel[grid](q, k, v, o, lse, batch * heads, n_q, n_k, 1.0 / math.sqrt(head_dim), CAUSAL=causal,
                      HEAD_DIM=head_dim, BLOCK_M=32, BLOCK_N=32, PRECISION=precision)
    return o, lse


attention_forward = grading.grade("L5.forward", attention_forward)
