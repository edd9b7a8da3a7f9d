# exercise: L5.causal
# family: algorithm
# What is wrong: no causal block skipping: every program walks every key block and only masks the scores.
# It gets past the grader's skip count by choosing BLOCK_M = min(512, next_power_of_2(N_q)): at the grader's
# N = 512 one program holds all the queries of a head, so "stop at the diagonal" and "visit every block"
# load the same keys and the count cannot tell them apart. (At N = 4096 on a GPU this kernel would do
# twice the work of a skipping one, and a 512-row tile does not fit on chip anyway.)
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
    for start in range(0, N_K, BLOCK_N):  # every key block, causal or not
        keys = start + tl.arange(0, BLOCK_N)
        kv = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
        k = tl.load(k_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
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
    block_m = max(16, min(512, triton.next_power_of_2(n_q)))
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    attention_forward_kernel[(triton.cdiv(n_q, block_m), batch * heads)](
        q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=32,
        PRECISION=precision)
    return o, lse


attention_forward = grading.grade("L5.causal", attention_forward)
