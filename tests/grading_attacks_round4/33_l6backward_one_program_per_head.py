# exercise: L6.backward
# family: algorithm
# What it does wrong: one program per (batch, head) does the whole backward: it loops over every block of
# keys (dK, dV) and, inside, over every block of queries, then loops over every block of queries for dQ.
# The grid is (1, B*H): no parallelism over the sequence at all, and with the causal mask nothing is skipped.
# The grader's skip count only looks at programs that hold one block of k (or of q); these hold all of them.
import gpuperf.kernels  # first: without a GPU it switches Triton to its CPU interpreter
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def backward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, do_ptr, lse_ptr, dq_ptr, dk_ptr, dv_ptr, N_Q, N_K, scale,
                    CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)
    dims = tl.arange(0, HEAD_DIM)
    qh = head * N_Q * HEAD_DIM
    kh = head * N_K * HEAD_DIM
    for n0 in range(0, N_K, BLOCK_N):
        keys = (n0 + tl.arange(0, BLOCK_N)).to(tl.int64)
        kv = kh + keys[:, None] * HEAD_DIM + dims[None, :]
        k = tl.load(k_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
        dk = tl.zeros((BLOCK_N, HEAD_DIM), tl.float32)
        dv = tl.zeros((BLOCK_N, HEAD_DIM), tl.float32)
        for m0 in range(0, N_Q, BLOCK_M):
            rows = (m0 + tl.arange(0, BLOCK_M)).to(tl.int64)
            qo = qh + rows[:, None] * HEAD_DIM + dims[None, :]
            q = tl.load(q_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
            do = tl.load(do_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
            o = tl.load(o_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
            delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1)
            lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
            s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
            visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
            if CAUSAL:
                visible = visible & (keys[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
            dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision="ieee")
            dp = tl.dot(do, tl.trans(v), input_precision="ieee")
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision="ieee")
        tl.store(dk_ptr + kv, (dk * scale).to(dk_ptr.dtype.element_ty), mask=keys[:, None] < N_K)
        tl.store(dv_ptr + kv, dv.to(dv_ptr.dtype.element_ty), mask=keys[:, None] < N_K)
    for m0 in range(0, N_Q, BLOCK_M):
        rows = (m0 + tl.arange(0, BLOCK_M)).to(tl.int64)
        qo = qh + rows[:, None] * HEAD_DIM + dims[None, :]
        q = tl.load(q_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
        do = tl.load(do_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
        o = tl.load(o_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
        delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1)
        lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
        dq = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
        for n0 in range(0, N_K, BLOCK_N):
            keys = (n0 + tl.arange(0, BLOCK_N)).to(tl.int64)
            kv = kh + keys[:, None] * HEAD_DIM + dims[None, :]
            k = tl.load(k_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
            v = tl.load(v_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
            s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
            visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
            if CAUSAL:
                visible = visible & (keys[None, :] <= rows[:, None])
            p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
            dp = tl.dot(do, tl.trans(v), input_precision="ieee")
            ds = p * (dp - delta[:, None])
            dq += tl.dot(ds.to(k.dtype), k, input_precision="ieee")
        tl.store(dq_ptr + qo, (dq * scale).to(dq_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)


def attention_backward(q, k, v, o, lse, do, causal=False):
    b, h, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    lse = lse.float().contiguous()
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    backward_kernel[(1, b * h)](q, k, v, o, do, lse, dq, dk, dv, n_q, n_k, 1.0 / math.sqrt(d),
                                CAUSAL=causal, HEAD_DIM=d, BLOCK_M=32, BLOCK_N=32)
    return dq, dk, dv


attention_backward = grading.grade("L6.backward", attention_backward)
