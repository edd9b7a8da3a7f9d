# exercise: L6.backward
# family: algorithm
# What it does wrong: the causal backward never skips a hidden block: each dK/dV program walks every block
# of queries and each dQ program every block of keys (P = 0 there, all work wasted). Each program holds its
# block as two halves (two 16-row loads and accumulators): the grader only counts hidden pairs in programs
# that load exactly one span of k (or of q), so programs holding two spans are never counted.
import gpuperf.kernels  # first: switches Triton to its CPU interpreter without a GPU
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def delta_kernel(o_ptr, do_ptr, delta_ptr, N_Q, HEAD_DIM: tl.constexpr, BLOCK: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    dims = tl.arange(0, HEAD_DIM)
    off = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
    o = tl.load(o_ptr + off, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + off, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    tl.store(delta_ptr + head * N_Q + rows, tl.sum(o * do, axis=1), mask=rows < N_Q)


@triton.jit
def _kv_half(k, v, keys, q, do, lse, delta, rows, N_Q, N_K, scale, dk, dv, CAUSAL: tl.constexpr):
    s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
    visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
    if CAUSAL:
        visible = visible & (keys[None, :] <= rows[:, None])
    p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
    dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision="ieee")
    dp = tl.dot(do, tl.trans(v), input_precision="ieee")
    ds = p * (dp - delta[:, None])
    dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision="ieee")
    return dk, dv


@triton.jit
def dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, N_Q, N_K, scale,
                CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, HALF: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    head = tl.program_id(1).to(tl.int64)
    keys_a = pid * (2 * HALF) + tl.arange(0, HALF)
    keys_b = keys_a + HALF
    dims = tl.arange(0, HEAD_DIM)
    off_a = head * N_K * HEAD_DIM + keys_a[:, None] * HEAD_DIM + dims[None, :]
    off_b = head * N_K * HEAD_DIM + keys_b[:, None] * HEAD_DIM + dims[None, :]
    k_a = tl.load(k_ptr + off_a, mask=keys_a[:, None] < N_K, other=0.0)
    v_a = tl.load(v_ptr + off_a, mask=keys_a[:, None] < N_K, other=0.0)
    k_b = tl.load(k_ptr + off_b, mask=keys_b[:, None] < N_K, other=0.0)
    v_b = tl.load(v_ptr + off_b, mask=keys_b[:, None] < N_K, other=0.0)
    dk_a = tl.zeros((HALF, HEAD_DIM), tl.float32)
    dv_a = tl.zeros((HALF, HEAD_DIM), tl.float32)
    dk_b = tl.zeros((HALF, HEAD_DIM), tl.float32)
    dv_b = tl.zeros((HALF, HEAD_DIM), tl.float32)
    for m0 in range(0, N_Q, BLOCK_M):  # every block of queries, even those that see none of these keys
        rows = m0 + tl.arange(0, BLOCK_M)
        q_off = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
        q = tl.load(q_ptr + q_off, mask=rows[:, None] < N_Q, other=0.0)
        do = tl.load(do_ptr + q_off, mask=rows[:, None] < N_Q, other=0.0)
        lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
        delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
        dk_a, dv_a = _kv_half(k_a, v_a, keys_a, q, do, lse, delta, rows, N_Q, N_K, scale, dk_a, dv_a, CAUSAL)
        dk_b, dv_b = _kv_half(k_b, v_b, keys_b, q, do, lse, delta, rows, N_Q, N_K, scale, dk_b, dv_b, CAUSAL)
    tl.store(dk_ptr + off_a, (dk_a * scale).to(dk_ptr.dtype.element_ty), mask=keys_a[:, None] < N_K)
    tl.store(dv_ptr + off_a, dv_a.to(dv_ptr.dtype.element_ty), mask=keys_a[:, None] < N_K)
    tl.store(dk_ptr + off_b, (dk_b * scale).to(dk_ptr.dtype.element_ty), mask=keys_b[:, None] < N_K)
    tl.store(dv_ptr + off_b, dv_b.to(dv_ptr.dtype.element_ty), mask=keys_b[:, None] < N_K)


@triton.jit
def _q_half(q, do, lse, delta, rows, k, v, keys, N_Q, N_K, scale, dq, CAUSAL: tl.constexpr):
    s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
    visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
    if CAUSAL:
        visible = visible & (keys[None, :] <= rows[:, None])
    p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
    dp = tl.dot(do, tl.trans(v), input_precision="ieee")
    ds = p * (dp - delta[:, None])
    dq += tl.dot(ds.to(k.dtype), k, input_precision="ieee")
    return dq


@triton.jit
def dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, N_Q, N_K, scale,
              CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, HALF: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    head = tl.program_id(1).to(tl.int64)
    dims = tl.arange(0, HEAD_DIM)
    rows_a = pid * (2 * HALF) + tl.arange(0, HALF)
    rows_b = rows_a + HALF
    qa_off = head * N_Q * HEAD_DIM + rows_a[:, None] * HEAD_DIM + dims[None, :]
    qb_off = head * N_Q * HEAD_DIM + rows_b[:, None] * HEAD_DIM + dims[None, :]
    q_a = tl.load(q_ptr + qa_off, mask=rows_a[:, None] < N_Q, other=0.0)
    do_a = tl.load(do_ptr + qa_off, mask=rows_a[:, None] < N_Q, other=0.0)
    q_b = tl.load(q_ptr + qb_off, mask=rows_b[:, None] < N_Q, other=0.0)
    do_b = tl.load(do_ptr + qb_off, mask=rows_b[:, None] < N_Q, other=0.0)
    lse_a = tl.load(lse_ptr + head * N_Q + rows_a, mask=rows_a < N_Q, other=0.0)
    lse_b = tl.load(lse_ptr + head * N_Q + rows_b, mask=rows_b < N_Q, other=0.0)
    delta_a = tl.load(delta_ptr + head * N_Q + rows_a, mask=rows_a < N_Q, other=0.0)
    delta_b = tl.load(delta_ptr + head * N_Q + rows_b, mask=rows_b < N_Q, other=0.0)
    dq_a = tl.zeros((HALF, HEAD_DIM), tl.float32)
    dq_b = tl.zeros((HALF, HEAD_DIM), tl.float32)
    for n0 in range(0, N_K, BLOCK_N):  # every key block, even those right of the diagonal
        keys = n0 + tl.arange(0, BLOCK_N)
        kv_off = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
        k = tl.load(k_ptr + kv_off, mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + kv_off, mask=keys[:, None] < N_K, other=0.0)
        dq_a = _q_half(q_a, do_a, lse_a, delta_a, rows_a, k, v, keys, N_Q, N_K, scale, dq_a, CAUSAL)
        dq_b = _q_half(q_b, do_b, lse_b, delta_b, rows_b, k, v, keys, N_Q, N_K, scale, dq_b, CAUSAL)
    tl.store(dq_ptr + qa_off, (dq_a * scale).to(dq_ptr.dtype.element_ty), mask=rows_a[:, None] < N_Q)
    tl.store(dq_ptr + qb_off, (dq_b * scale).to(dq_ptr.dtype.element_ty), mask=rows_b[:, None] < N_Q)


def attention_backward(q, k, v, o, lse, do, causal=False):
    b, h, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    lse = lse.float().contiguous()
    delta = torch.empty_like(lse)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    scale = 1.0 / math.sqrt(d)
    half = 16
    delta_kernel[(triton.cdiv(n_q, 32), b * h)](o, do, delta, n_q, HEAD_DIM=d, BLOCK=32)
    dkdv_kernel[(triton.cdiv(n_k, 2 * half), b * h)](q, k, v, do, lse, delta, dk, dv, n_q, n_k, scale,
                                                     CAUSAL=causal, HEAD_DIM=d, BLOCK_M=32, HALF=half)
    dq_kernel[(triton.cdiv(n_q, 2 * half), b * h)](q, k, v, do, lse, delta, dq, n_q, n_k, scale,
                                                   CAUSAL=causal, HEAD_DIM=d, BLOCK_N=32, HALF=half)
    return dq, dk, dv


attention_backward = grading.grade("L6.backward", attention_backward)
