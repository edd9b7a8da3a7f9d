# exercise: L5.causal
# family: escape
# What is wrong: no causal block skipping (every program walks every key block, and computes its scores,
# exp and P V), hidden from the grader's count of the key blocks visited: K is read with
# tl.atomic_add(k, 0.0) (an atomic returns the old value; adding 0 leaves the bits of k unchanged), which
# the grader counts neither as loaded elements nor as visited blocks. One ordinary tl.load of the first key
# block per program gives the grader something to count (and a block size to derive its bound from).
import math

import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def attention_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr,
                             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                             PRECISION: tl.constexpr):
    bm = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = bm * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    first = tl.arange(0, BLOCK_N)
    k_first = tl.load(k_ptr + head * N_K * HEAD_DIM + first[:, None] * HEAD_DIM + dims[None, :],
                      mask=first[:, None] < N_K, other=0.0)  # the only load of k the grader sees
    for start in range(0, N_K, BLOCK_N):  # every key block, causal or not
        keys = start + tl.arange(0, BLOCK_N)
        kv = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
        k = tl.atomic_add(k_ptr + kv, tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32).to(k_ptr.dtype.element_ty),
                          mask=keys[:, None] < N_K)
        k = tl.where(keys[:, None] < N_K, k, 0.0).to(k_ptr.dtype.element_ty)
        k = tl.where(start == 0, k_first, k)
        v = tl.load(v_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # rows past N_q see nothing
        alpha = tl.exp(m - m_safe)
        p = tl.exp(s - m_safe[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    block_m = 32
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    attention_forward_kernel[(triton.cdiv(n_q, block_m), batch * heads)](
        q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=32,
        PRECISION=precision)
    return o, lse


attention_forward = grading.grade("L5.causal", attention_forward)
