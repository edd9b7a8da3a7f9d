# exercise: L5.forward
# family: algorithm
# What it does wrong: no online softmax. A first kernel walks all the keys to find each row's exact max of the
# scores and stores it; a second kernel walks all the keys again with that max fixed (no running max, no
# rescaling), summing exp and P V. K is read twice per block of queries, as in a two-pass softmax. Each launch
# alone loads K once per program, and the grader's one-pass count is taken per launch, not per call.
import gpuperf.kernels  # first: without a GPU it switches Triton to its CPU interpreter
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def row_max_kernel(q_ptr, k_ptr, m_ptr, N_Q, N_K, scale, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    for start in range(0, N_K, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        s = tl.where(keys[None, :] < N_K, s, float("-inf"))
        m = tl.maximum(m, tl.max(s, axis=1))
    tl.store(m_ptr + head * N_Q + rows, m, mask=rows < N_Q)


@triton.jit
def sum_kernel(q_ptr, k_ptr, v_ptr, m_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, HEAD_DIM: tl.constexpr,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m = tl.load(m_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    l = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    for start in range(0, N_K, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        s = tl.where(keys[None, :] < N_K, s, float("-inf"))
        p = tl.exp(s - m[:, None])  # the max is known: no rescaling
        l += tl.sum(p, axis=1)
        acc += tl.dot(p.to(v.dtype), v, input_precision="ieee")
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             (acc / l[:, None]).to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    b, h, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((b, h, n_q), dtype=torch.float32, device=q.device)
    m = torch.empty((b, h, n_q), dtype=torch.float32, device=q.device)
    grid = (triton.cdiv(n_q, 32), b * h)
    scale = 1.0 / math.sqrt(d)
    row_max_kernel[grid](q, k, m, n_q, n_k, scale, HEAD_DIM=d, BLOCK_M=32, BLOCK_N=32)
    sum_kernel[grid](q, k, v, m, o, lse, n_q, n_k, scale, HEAD_DIM=d, BLOCK_M=32, BLOCK_N=32)
    return o, lse


attention_forward = grading.grade("L5.forward", attention_forward)
