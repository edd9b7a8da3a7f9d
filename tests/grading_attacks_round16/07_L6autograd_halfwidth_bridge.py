"""WRONG (lazy): 01 (a causal forward that skips no key block) and 02 (a causal backward that skips no block,
neither walk) joined in a torch.autograd.Function. Same "bridge" trick: each tile past the held block's diagonal
comes with one element per row of the walked tensor from the tile back to the diagonal, added times 0 to the
tile, so tile + bridge is one block of rows that reaches the diagonal (`_visit_rows`, `_merged_spans`,
`_judged_visits`): no visit is hidden.

Round 16: the bridge now loads columns 0..d/2-1 of each row (HALF the head dimension): `_dense_blocks`
keeps a row read at least half as much as the row read most (the tile's rows, d), so the bridge rows are
dense rows and still join the tile to the diagonal.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    q = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    lanes = tl.arange(0, BLOCK_N)
    end = N_K
    last_q = tl.minimum((block_m + 1) * BLOCK_M, N_Q) - 1
    if CAUSAL:
        end = tl.minimum(N_K, N_Q)  # NO skipping: every block up to N_q is walked
    wide = tl.arange(0, 256)
    for start in range(0, end, BLOCK_N):
        keys = start + lanes
        at = tl.minimum(keys, N_K - 1)  # tail lanes clamped to the last key (masked off anyway)
        k = tl.load(k_head + at[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        if CAUSAL:
            bridge_rows = last_q + wide
            bridge = tl.load(k_head + bridge_rows[:, None] * HEAD_DIM + tl.arange(0, HEAD_DIM // 2)[None, :], mask=bridge_rows[:, None] < start, other=0.0)
            k = k + tl.sum(tl.sum(bridge, axis=1), axis=0) * 0.0
        v = tl.load(v_head + at[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    grid = (triton.cdiv(n_q, 64), batch * heads)
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, HEAD_DIM=d,
                     BLOCK_M=64, BLOCK_N=32)
    return o, lse



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
    wide = tl.arange(0, 256)
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
        q = tl.load(q_ptr + q_offsets, mask=live[:, None], other=0.0)
        if CAUSAL:
            if m0 + STEP <= first_key:  # a tile the held keys cannot see: bridge it to the diagonal
                b_rows = m0 + STEP + wide
                b_at = tl.minimum(b_rows, first_key)
                bridge = tl.load(q_ptr + head * N_Q * HEAD_DIM + b_at[:, None] * HEAD_DIM + tl.arange(0, HEAD_DIM // 2)[None, :],
                                 mask=b_rows[:, None] <= first_key, other=0.0)
                q = q + tl.sum(tl.sum(bridge, axis=1), axis=0) * 0.0
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
    wide = tl.arange(0, 256)
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
        k = tl.load(k_ptr + kv_offsets, mask=live[:, None], other=0.0)
        if CAUSAL:
            if n0 > last_q:  # a tile past the diagonal: bridge it back to the last query
                b_rows = last_q + wide
                b_at = tl.minimum(b_rows, n0 - 1)
                bridge = tl.load(k_ptr + head * N_K * HEAD_DIM + b_at[:, None] * HEAD_DIM + tl.arange(0, HEAD_DIM // 2)[None, :], mask=b_rows[:, None] < n0, other=0.0)
                k = k + tl.sum(tl.sum(bridge, axis=1), axis=0) * 0.0
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
    common_dq = dict(common, BLOCK_N=128)  # wide key tiles: fewer bridges
    dq_kernel[(triton.cdiv(n_q, block), heads_total)](q, k, v, do, lse, delta, dq, n_q, n_k, scale, **common_dq)
    return dq, dk, dv



class FlashAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, causal=False):
        o, lse = attention_forward(q, k, v, causal)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.causal = causal
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        dq, dk, dv = attention_backward(q, k, v, o, lse, do, ctx.causal)
        return dq, dk, dv, None


result = grading.grade("L6.autograd", FlashAttention)
