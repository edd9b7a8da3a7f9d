# exercise: L5.causal
# family: algorithm
# What it does wrong: no running maximum at all: p = exp(s) is computed in float64 (whose exp overflows only
#   past 709), l and acc are summed in float64, o = acc / l and lse = log(l). The exercise's point (and the
#   grader's claim: "scores that overflow exp without the running max") is the online softmax; the grader's
#   scores stay within about +-200 (large: q x 30; shifted: about -200), where float64 needs no max. Wrong on
#   legitimate inputs: scores above 709 (or all below -745) give inf/NaN or 0/0; on a GPU float64 also runs at
#   a fraction of the fp32 rate. Checked: verify_32.py, q scaled so that the scores reach about +-900: NaN;
#   with the grader's ranges the values are right. Same kernel as 32 (its causal branches skip blocks).
import gpuperf.kernels

import math

import torch
import triton
import triton.language as tl

from gpuperf import grading

@triton.jit
def attention_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale,
                             CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    q = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    l = tl.zeros((BLOCK_M,), dtype=tl.float64)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float64)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf")).to(tl.float64)
        p = tl.exp(s)  # fp64 holds exp(s) for |s| < 709: no max needed
        l += tl.sum(p, axis=1)
        acc += tl.dot(p, v.to(tl.float64))
    o = (acc / l[:, None]).to(tl.float32)
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, tl.log(l).to(tl.float32), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    block_m, block_n = 32, 32
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(n_q, block_m), batch * heads)
    attention_forward_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(head_dim),
                                   CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=block_m,
                                   BLOCK_N=block_n, PRECISION=precision)
    return o, lse


attention_forward = grading.grade("L5.causal", attention_forward)
