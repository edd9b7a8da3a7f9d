# exercise: L5.forward
# family: algorithm
# What is wrong: not FlashAttention. A first kernel writes the whole N_q x N_k score matrix S = scale Q K^T
# to a scratch buffer in global memory (fp32), a second kernel reads S back, row block by row block, for the
# max and the sum (two passes over S), then a third pass over S computes P V. The N x N scores leave the
# chip (O(N^2) memory and traffic), which is exactly what FlashAttention avoids. K is still loaded in
# blocks of 32 keys, so the only algorithm check of L5.forward (the widest block of K loaded) is happy.
import math

import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def scores_kernel(q_ptr, k_ptr, s_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    bm = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = bm * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                mask=rows[:, None] < N_Q, other=0.0)
    for start in range(0, N_K, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        if CAUSAL:
            s = tl.where(keys[None, :] <= rows[:, None], s, float("-inf"))
        tl.store(s_ptr + head * N_Q * N_K + rows[:, None].to(tl.int64) * N_K + keys[None, :], s,
                 mask=(rows[:, None] < N_Q) & (keys[None, :] < N_K))


@triton.jit
def softmax_pv_kernel(s_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, HEAD_DIM: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    bm = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = bm * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    s_rows = s_ptr + head * N_Q * N_K + rows[:, None].to(tl.int64) * N_K
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    for start in range(0, N_K, BLOCK_N):  # pass 1 over S: the max
        keys = start + tl.arange(0, BLOCK_N)
        s = tl.load(s_rows + keys[None, :], mask=(rows[:, None] < N_Q) & (keys[None, :] < N_K),
                    other=float("-inf"))
        m = tl.maximum(m, tl.max(s, axis=1))
    m = tl.where(rows < N_Q, m, 0.0)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start in range(0, N_K, BLOCK_N):  # pass 2 over S: the sum and P V
        keys = start + tl.arange(0, BLOCK_N)
        s = tl.load(s_rows + keys[None, :], mask=(rows[:, None] < N_Q) & (keys[None, :] < N_K),
                    other=float("-inf"))
        p = tl.exp(s - m[:, None])
        l += tl.sum(p, axis=1)
        v = tl.load(v_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        acc += tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
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
    s = torch.empty((batch * heads, n_q, n_k), dtype=torch.float32, device=q.device)  # N x N in HBM
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(n_q, 32), batch * heads)
    scores_kernel[grid](q, k, s, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, HEAD_DIM=d, BLOCK_M=32,
                        BLOCK_N=32, PRECISION=precision)
    softmax_pv_kernel[grid](s, v, o, lse, n_q, n_k, HEAD_DIM=d, BLOCK_M=32, BLOCK_N=32, PRECISION=precision)
    return o, lse


attention_forward = grading.grade("L5.forward", attention_forward)
