"""WRONG (lazy): the whole dK/dV of a head in ONE program (grid (1, heads)): the program takes every block of keys
in turn and walks the queries from its diagonal. On a GPU one SM does all of dK and dV while the others idle: the
half-head rule (`_whole_head_program`, round 13 finding 2) exists to refuse exactly this. dQ is the course's
kernel. Causal skipping is done correctly. No scratch (unlike 03).

The trick (as 11, 12): the dK/dV launch's FIRST argument is `kw = k.view(torch.int16)` (fp16: `torch.int8`),
a view of k's memory with a smaller element, never read.

Why the grader should accept it: every load this launch makes of k is booked to `kw` (`split`: the first
argument whose range holds the lane), which `_rows_in` does not take for k (`_same_memory` wants the same
element size). `_whole_head_program` then finds no rows of k in any of the program's products and counts no
pair; the K-once rule counts no K; the skip checks judge only the dQ walk (honest); `_uncovered(k)` is
satisfied by the dQ kernel's loads.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


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
def dkdv_head_kernel(kw_ptr, q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, N_Q, N_K,
                     scale, CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)
    dims = tl.arange(0, HEAD_DIM)
    n_blocks = tl.cdiv(N_K, BLOCK_N)
    for j in range(0, n_blocks):  # every block of keys of the head, in this one program, last to first
        block_n = n_blocks - 1 - j
        keys = block_n * BLOCK_N + tl.arange(0, BLOCK_N)
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
        tl.store(dk_ptr + kv_offsets, (dk * scale).to(dk_ptr.dtype.element_ty), mask=keys[:, None] < N_K)
        tl.store(dv_ptr + kv_offsets, dv.to(dv_ptr.dtype.element_ty), mask=keys[:, None] < N_K)


@triton.jit
def dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, N_Q, N_K, scale,
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
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
        dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k, input_precision=PRECISION)
    tl.store(dq_ptr + q_offsets, (dq * scale).to(dq_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)


def attention_backward(q, k, v, o, lse, do, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    lse = lse.float().contiguous()
    delta = torch.empty_like(lse)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    block = 32
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    scale = 1.0 / math.sqrt(head_dim)
    heads_total = batch * heads
    row_dot_kernel[(triton.cdiv(n_q, block), heads_total)](o, do, delta, n_q, HEAD_DIM=head_dim, BLOCK_M=block)
    common = dict(CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=block, BLOCK_N=block, PRECISION=precision)
    kw = k.view(torch.int16 if k.element_size() == 4 else torch.int8)
    dkdv_head_kernel[(1, heads_total)](kw, q, k, v, do, lse, delta, dk, dv, n_q, n_k, scale, **common)
    dq_kernel[(triton.cdiv(n_q, block), heads_total)](q, k, v, do, lse, delta, dq, n_q, n_k, scale, **common)
    return dq, dk, dv


result = grading.grade("L6.backward", attention_backward)
