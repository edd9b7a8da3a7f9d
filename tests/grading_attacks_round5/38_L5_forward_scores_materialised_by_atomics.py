# exercise: L5.forward
# family: algorithm
# What it does wrong: not FlashAttention: the naive algorithm in two launches. Launch 1 computes every tile
#   of S = scale Q K^T and writes the whole N_q x N_k matrix to an fp32 scratch buffer; launch 2 reads S
#   back, takes each row's exact maximum in a first pass, then exp, the sum and P V in a second (no online
#   softmax, S in memory). S is written with tl.atomic_add onto zeros (each element by one program), which
#   the grader's _scratch_check does not count (it counts plain stores only), and launch 2 never loads k, so
#   the per-program pass counts over k and v are those of one pass. Checked: the scratch buffer holds
#   B H N_q N_k floats (16 x 4096 = 65536 in the accumulation case, budget 1.5 x 16 x 17 + 4096 = 4504);
#   the values are right (verify_l5.py errors ~1e-7).
import gpuperf.kernels

import math

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def scores_kernel(q_ptr, k_ptr, s_ptr, N_Q, N_K, scale, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)
    rows = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                mask=rows[:, None] < N_Q, other=0.0)
    for start in range(0, N_K, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        inside = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        tl.atomic_add(s_ptr + head * N_Q * N_K + rows[:, None] * N_K + keys[None, :], s, mask=inside)


@triton.jit
def softmax_pv_kernel(s_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)
    rows = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    dims = tl.arange(0, HEAD_DIM)
    s_rows = s_ptr + head * N_Q * N_K + rows[:, None] * N_K
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    for start in range(0, N_K, BLOCK_N):  # pass 1: the exact row maximum, from S in memory
        keys = start + tl.arange(0, BLOCK_N)
        s = tl.load(s_rows + keys[None, :], mask=(rows[:, None] < N_Q) & (keys[None, :] < N_K), other=float("-inf"))
        m = tl.maximum(m, tl.max(s, axis=1))
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start in range(0, N_K, BLOCK_N):  # pass 2: exp, sum and P V
        keys = start + tl.arange(0, BLOCK_N)
        s = tl.load(s_rows + keys[None, :], mask=(rows[:, None] < N_Q) & (keys[None, :] < N_K), other=float("-inf"))
        v = tl.load(v_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        p = tl.exp(s - m[:, None])
        l += tl.sum(p, axis=1)
        acc += tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             (acc / l[:, None]).to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    s = torch.zeros((batch * heads, n_q, n_k), dtype=torch.float32, device=q.device)
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(n_q, 32), batch * heads)
    scores_kernel[grid](q, k, s, n_q, n_k, 1.0 / math.sqrt(head_dim), HEAD_DIM=head_dim, BLOCK_M=32,
                        BLOCK_N=32, PRECISION=precision)
    softmax_pv_kernel[grid](s, v, o, lse, n_q, n_k, HEAD_DIM=head_dim, BLOCK_M=32, BLOCK_N=32,
                            PRECISION=precision)
    return o, lse


attention_forward = grading.grade("L5.forward", attention_forward)
