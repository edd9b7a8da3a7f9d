# exercise: L5.forward
# family: algorithm
# What it does wrong: no FlashAttention at all: each program loads ALL the keys at once, as K^T in one
# (d, next_power_of_2(N_k)) tile, computes the whole row of scores, and takes a plain softmax (max, exp, sum)
# over it; no blocks of keys, no running max. The grader reads the key-block size from the first dimension of
# the loads of k, which for K loaded transposed is d (16), not the N_k keys it holds.
import gpuperf.kernels  # first: without a GPU it switches Triton to its CPU interpreter
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, HEAD_DIM: tl.constexpr,
               BLOCK_M: tl.constexpr, ALL_K: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    keys = tl.arange(0, ALL_K)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    kt = tl.load(k_ptr + head * N_K * HEAD_DIM + keys[None, :] * HEAD_DIM + dims[:, None], mask=keys[None, :] < N_K, other=0.0)
    v = tl.load(v_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
    s = tl.dot(q, kt, input_precision="ieee") * scale  # every score of these rows at once
    s = tl.where(keys[None, :] < N_K, s, float("-inf"))
    m = tl.max(s, axis=1)
    p = tl.exp(s - m[:, None])
    l = tl.sum(p, axis=1)
    o = tl.dot(p.to(v.dtype), v, input_precision="ieee") / l[:, None]
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    b, h, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((b, h, n_q), dtype=torch.float32, device=q.device)
    grid = (triton.cdiv(n_q, 16), b * h)
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), HEAD_DIM=d, BLOCK_M=16,
                     ALL_K=max(16, triton.next_power_of_2(n_k)))
    return o, lse


attention_forward = grading.grade("L5.forward", attention_forward)
