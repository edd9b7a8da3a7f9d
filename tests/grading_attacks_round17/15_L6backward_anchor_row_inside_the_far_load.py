"""WRONG (lazy): a causal backward that skips NO block past the diagonal: dK/dV programs walk EVERY block of
queries, dQ programs walk the keys up to min(N_k, N_q); the tiles past the diagonal are loaded, multiplied (all
five tl.dot) and masked (P = 0 there). Round 16's 05 with the anchor moved INTO the far tile's load (as 11): one
tl.load whose lane row 0 is a whole row at the diagonal (dK/dV walk: the held block's first key as a query; dQ
walk: the held block's last query as a key) and whose other lane rows read column 0 of their far row only (no mask).

Why the grader should accept it: `_load_blocks` judges each load by the rows it read at least half as much of as
of its own most-read row: the anchor row is read whole, the far rows 1/d of each, so the load's only row is the
anchor, which the held block sees.
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
def dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, N_Q, N_K,
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
    lanes = tl.arange(0, BLOCK_M)
    STEP: tl.constexpr = BLOCK_M
    first_key = block_n * BLOCK_N
    n_tiles = tl.cdiv(N_Q, STEP)
    if CAUSAL:
        if first_key >= N_Q:
            n_tiles = 0  # keys no query sees
    for t in range(0, n_tiles):  # every block of queries (last to first): no skipping
        m0 = (n_tiles - 1 - t) * STEP
        rows = m0 + lanes  # logical rows
        real = (lanes < STEP) & (rows < N_Q)
        phys = tl.minimum(rows, N_Q - 1)
        live = real
        q_offsets = head * N_Q * HEAD_DIM + phys[:, None] * HEAD_DIM + dims[None, :]
        if CAUSAL and m0 + STEP <= first_key:  # a tile no held key sees: loaded and multiplied all the same,
            # 7 of the 16 columns of each row, beside one whole query row at the diagonal (weight 0)
            at = tl.where(lanes == 0, tl.minimum(first_key, N_Q - 1), phys)  # lane row 0: the anchor
            cols = tl.where(lanes[:, None] == 0, dims[None, :], dims[None, :] * 0)  # far rows: column 0 only
            q = tl.load(q_ptr + head * N_Q * HEAD_DIM + at[:, None] * HEAD_DIM + cols)
        else:
            q = tl.load(q_ptr + q_offsets, mask=live[:, None], other=0.0)
        do = tl.load(do_ptr + q_offsets, mask=live[:, None], other=0.0)
        lse = tl.load(lse_ptr + head * N_Q + phys, mask=live, other=0.0)
        delta = tl.load(delta_ptr + head * N_Q + phys, mask=live, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        visible = real[:, None] & (keys[None, :] < N_K)
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
    lanes = tl.arange(0, BLOCK_N)
    STEP: tl.constexpr = BLOCK_N
    last_q = tl.minimum(block_m * BLOCK_M + BLOCK_M, N_Q) - 1
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, N_Q)  # not the diagonal: every block up to the last query
    for n0 in range(0, end, STEP):
        keys = n0 + lanes
        real = (lanes < STEP) & (keys < end)
        phys = tl.minimum(keys, N_K - 1)
        live = real
        kv_offsets = head * N_K * HEAD_DIM + phys[:, None] * HEAD_DIM + dims[None, :]
        if CAUSAL and n0 > last_q:  # a tile past the diagonal: loaded and multiplied all the same,
            # 7 of the 16 columns of each row, beside one whole key row at the diagonal (weight 0)
            at = tl.where(lanes == 0, tl.minimum(last_q, N_K - 1), phys)  # lane row 0: the anchor
            cols = tl.where(lanes[:, None] == 0, dims[None, :], dims[None, :] * 0)  # far rows: column 0 only
            k = tl.load(k_ptr + head * N_K * HEAD_DIM + at[:, None] * HEAD_DIM + cols)
        else:
            k = tl.load(k_ptr + kv_offsets, mask=live[:, None], other=0.0)
        v = tl.load(v_ptr + kv_offsets, mask=live[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        visible = (rows[:, None] < N_Q) & real[None, :]
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
    dkdv_kernel[(triton.cdiv(n_k, block), heads_total)](q, k, v, do, lse, delta, dk, dv, n_q, n_k, scale, **common)
    dq_kernel[(triton.cdiv(n_q, block), heads_total)](q, k, v, do, lse, delta, dq, n_q, n_k, scale, **common)
    return dq, dk, dv


result = grading.grade("L6.backward", attention_backward)
