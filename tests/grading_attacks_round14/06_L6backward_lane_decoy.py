"""WRONG (lazy): a causal backward that skips no block past the diagonal. dK/dV programs walk EVERY block of
queries (from the last to the first); dQ programs walk the keys up to min(N_k, N_q), not to their diagonal.
Plain loads and plain stores: no scratch, no atomics.

The trick (as 05): in causal mode each walked tile holds 31 rows in lanes 0-30, and in a tile past the diagonal its lane 31
loads one row that the held block can see: key 0 in the dQ walk, query `first key of the held block` in the dK/dV walk (with
its dO, lse and delta). That lane is always masked out of P (its logical row is "none"), so the values are exact.

Why the grader should accept it: a visited block is read from the addresses of its lanes, and is hidden only
where every key comes after every query (`keys[0] > queries[1]`). A key tile whose lanes include key 0, or a
query tile whose lanes include a query at the held block's first key, never is: not in `_hidden_pairs`,
`_visit_pairs` nor `_stored_block_visits`. The held block of keys, paired by `_judged_against` with the block of
queries "ending first" in its first product, is paired with the last query tile, because the dK/dV walk goes
from the last block of queries to the first. No load covers more than 256 rows, nor all of N (the
`_backward_blocks_check` widths). dK/dV programs whose keys no query sees (first key >= N_q) walk nothing.
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
    STEP: tl.constexpr = BLOCK_M - 1 if CAUSAL else BLOCK_M
    first_key = block_n * BLOCK_N
    n_tiles = tl.cdiv(N_Q, STEP)
    if CAUSAL:
        if first_key >= N_Q:
            n_tiles = 0  # keys no query sees
    for t in range(0, n_tiles):  # every block of queries (last to first): no skipping
        m0 = (n_tiles - 1 - t) * STEP
        rows = m0 + lanes  # logical rows
        real = (lanes < STEP) & (rows < N_Q)
        decoy = (lanes == BLOCK_M - 1) & (lanes * 0 + m0 + STEP - 1 < first_key)  # only in a tile the keys cannot see
        if not CAUSAL:
            decoy = lanes < 0
        phys = tl.where(decoy, first_key, rows)  # lane 31: the held block's first key
        live = real | decoy
        q_offsets = head * N_Q * HEAD_DIM + phys[:, None] * HEAD_DIM + dims[None, :]
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
    STEP: tl.constexpr = BLOCK_N - 1 if CAUSAL else BLOCK_N
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, N_Q)  # not the diagonal: every block up to the last query
    for n0 in range(0, end, STEP):
        keys = n0 + lanes
        real = (lanes < STEP) & (keys < end)
        decoy = (lanes == BLOCK_N - 1) & (lanes * 0 + n0 > block_m * BLOCK_M + BLOCK_M - 1)  # only in a hidden tile
        if not CAUSAL:
            decoy = lanes < 0
        phys = tl.where(decoy, 0, keys)  # lane 31: key 0
        live = real | decoy
        kv_offsets = head * N_K * HEAD_DIM + phys[:, None] * HEAD_DIM + dims[None, :]
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
