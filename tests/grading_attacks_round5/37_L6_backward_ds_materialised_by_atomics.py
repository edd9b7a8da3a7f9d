# exercise: L6.backward
# family: algorithm
# What it does wrong: materialises the N_q x N_k matrix dS in memory: dkdv_kernel writes every tile of dS to
#   an fp32 scratch buffer and dq_kernel reads it back instead of recomputing P and dS (FlashAttention's point
#   is that P and dS never leave the chip; the grader's _scratch_check refuses more than 1.5 x the outputs +
#   4096 elements of scratch writes). The writes are tl.atomic_add onto zeros (each element written by one
#   program, so no race), and the trace counts atomics as loads, never as stores (Launch.stored), so the
#   scratch check sees nothing. Checked: the scratch buffer holds B H N_q N_k floats (65536 in the grader's
#   N = 256 case, budget 22528); values right (verify_l6.py errors ~1e-7).
import gpuperf.kernels

import math

import torch
import triton
import triton.language as tl

from gpuperf import grading

@triton.jit
def row_dot_kernel(o_ptr, do_ptr, delta_ptr, N_Q, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    offsets = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
    o = tl.load(o_ptr + offsets, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + offsets, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    tl.store(delta_ptr + head * N_Q + rows, tl.sum(o * do, axis=1), mask=rows < N_Q)


@triton.jit
def dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, ds_ptr, N_Q, N_K,
                scale, CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    block_n = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    keys = block_n * BLOCK_N + tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    kv_offsets = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
    k = tl.load(k_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
    v = tl.load(v_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
    dk = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    start = 0
    if CAUSAL:
        start = (block_n * BLOCK_N // BLOCK_M) * BLOCK_M
    for m0 in range(start, N_Q, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        q_offsets = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
        q = tl.load(q_ptr + q_offsets, mask=rows[:, None] < N_Q, other=0.0)
        do = tl.load(do_ptr + q_offsets, mask=rows[:, None] < N_Q, other=0.0)
        lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
        delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision=PRECISION)
        dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)
        ds = p * (dp - delta[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision=PRECISION)
        # keep dS for the dQ kernel (written with an atomic add onto zeros: each element by one program)
        tl.atomic_add(ds_ptr + head * N_Q * N_K + rows.to(tl.int64)[:, None] * N_K + keys[None, :], ds, mask=visible)
    tl.store(dk_ptr + kv_offsets, (dk * scale).to(dk_ptr.dtype.element_ty), mask=keys[:, None] < N_K)
    tl.store(dv_ptr + kv_offsets, dv.to(dv_ptr.dtype.element_ty), mask=keys[:, None] < N_K)


@triton.jit
def dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, ds_ptr, N_Q, N_K, scale,
              CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q_offsets = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
    q = tl.load(q_ptr + q_offsets, mask=rows[:, None] < N_Q, other=0.0)
    do = tl.load(do_ptr + q_offsets, mask=rows[:, None] < N_Q, other=0.0)
    lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    dq = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    for n0 in range(0, end, BLOCK_N):
        keys = n0 + tl.arange(0, BLOCK_N)
        kv_offsets = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
        k = tl.load(k_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
        visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        ds = tl.load(ds_ptr + head * N_Q * N_K + rows.to(tl.int64)[:, None] * N_K + keys[None, :], mask=visible, other=0.0)
        dq += tl.dot(ds.to(k.dtype), k, input_precision=PRECISION)
    tl.store(dq_ptr + q_offsets, (dq * scale).to(dq_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)


def attention_backward(q, k, v, o, lse, do, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    lse = lse.float().contiguous()
    delta = torch.empty_like(lse)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    ds = torch.zeros((batch * heads, n_q, n_k), dtype=torch.float32, device=q.device)  # N_q x N_k dS
    block = 32
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    scale = 1.0 / math.sqrt(head_dim)
    heads_total = batch * heads
    row_dot_kernel[(triton.cdiv(n_q, block), heads_total)](o, do, delta, n_q, HEAD_DIM=head_dim, BLOCK_M=block)
    common = dict(CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=block, BLOCK_N=block, PRECISION=precision)
    dkdv_kernel[(triton.cdiv(n_k, block), heads_total)](q, k, v, do, lse, delta, dk, dv, ds, n_q, n_k, scale, **common)
    dq_kernel[(triton.cdiv(n_q, block), heads_total)](q, k, v, do, lse, delta, dq, ds, n_q, n_k, scale, **common)
    return dq, dk, dv


attention_backward = grading.grade("L6.backward", attention_backward)
