"""HONEST: the FlashAttention-2 backward in one kernel (the FA2 paper's Algorithm 2, and Dao's original Triton
backward): one program per block of keys holds K_j, V_j and walks the blocks of queries that see it (causal:
from its diagonal), computing dV_j and dK_j on chip and adding each block's dQ_i contribution (dS_ij K_j) into
an fp32 dQ accumulator with tl.atomic_add (zeroed by torch.zeros; one accumulating atomic per element per visit:
no race). A small cast kernel writes dQ in the output's dtype (a later launch reads the sums). D = rowsum(dO * O)
first, as in the course. Five tl.dot per tile; K and V loaded once per program; lse used, not rebuilt.

Why the grader might refuse it: the atomics count as reads and as scratch writes (`_scratch_check`), dQ's
written rows are no tl.store of the program (`_stored_block_visits`), and the five products all live in one
kernel. Expected: accepted (it is a textbook FlashAttention backward).
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def row_dot_kernel(o_ptr, do_ptr, delta_ptr, N_Q, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    # D_i = sum over d of dO_id * O_id, one value per query row
    head = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    offsets = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
    o = tl.load(o_ptr + offsets, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + offsets, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    tl.store(delta_ptr + head * N_Q + rows, tl.sum(o * do, axis=1), mask=rows < N_Q)


@triton.jit
def fa2_bwd_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, dq_acc_ptr, N_Q, N_K,
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
        dq_part = tl.dot(ds.to(k.dtype), k, input_precision=PRECISION) * scale
        tl.atomic_add(dq_acc_ptr + q_offsets, dq_part, mask=rows[:, None] < N_Q)
    tl.store(dk_ptr + kv_offsets, (dk * scale).to(dk_ptr.dtype.element_ty), mask=keys[:, None] < N_K)
    tl.store(dv_ptr + kv_offsets, dv.to(dv_ptr.dtype.element_ty), mask=keys[:, None] < N_K)


@triton.jit
def cast_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src_ptr + offs, mask=offs < n, other=0.0)
    tl.store(dst_ptr + offs, x.to(dst_ptr.dtype.element_ty), mask=offs < n)


def attention_backward(q, k, v, o, lse, do, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    lse = lse.float().contiguous()
    delta = torch.empty_like(lse)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    dq_acc = torch.zeros(q.shape, dtype=torch.float32, device=q.device)
    block = 32
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    scale = 1.0 / math.sqrt(head_dim)
    heads_total = batch * heads
    row_dot_kernel[(triton.cdiv(n_q, block), heads_total)](o, do, delta, n_q, HEAD_DIM=head_dim, BLOCK_M=block)
    fa2_bwd_kernel[(triton.cdiv(n_k, block), heads_total)](
        q, k, v, do, lse, delta, dk, dv, dq_acc, n_q, n_k, scale, CAUSAL=causal, HEAD_DIM=head_dim,
        BLOCK_M=block, BLOCK_N=block, PRECISION=precision)
    n = dq.numel()
    cast_kernel[(triton.cdiv(n, 1024),)](dq_acc, dq, n, BLOCK=1024)
    return dq, dk, dv


result = grading.grade("L6.backward", attention_backward)
