"""WRONG (lazy): L6.autograd with no causal block skipping in the forward (every program walks the keys up to
min(N_k, N_q)) nor in the backward (dK/dV programs walk every block of queries; dQ programs walk keys up to
min(N_k, N_q)). The forward is 01's, the backward 02's.

Why the grader should accept it: as 01 and 02. Each program bounces the block it holds through its own scratch
tile, so its tl.dot products take rows of the walked tensor only (`_gpuperf_loads` does not cross memory); each
visit is then judged by `_paired_visits`' fallback against one-element decoy loads (query N_q - 1, key 0) that
see everything; O, dK and dQ are written with tl.atomic_add onto zeros, so `_stored_block_visits` has no
store marks to judge against.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, scr_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    slot = (head * tl.num_programs(0) + block_m.to(tl.int64)) * (BLOCK_M * HEAD_DIM)
    tile = tl.arange(0, BLOCK_M)[:, None] * HEAD_DIM + dims[None, :]
    q_direct = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    tl.store(scr_ptr + slot + tile, q_direct, mask=rows[:, None] < N_Q)
    q = tl.load(scr_ptr + slot + tile, mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, N_Q)  # no skipping of the blocks past the diagonal
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        if CAUSAL:
            decoy = tl.load(q_head + (N_Q - 1) * HEAD_DIM)  # one element of the head's last query row, unused
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
    tl.atomic_add(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                  o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.zeros_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    block_m, block_n = 32, 32
    grid = (triton.cdiv(n_q, block_m), batch * heads)
    scr = torch.empty(grid[0] * grid[1] * block_m * d, dtype=q.dtype, device=q.device)
    fwd_kernel[grid](q, k, v, o, lse, scr, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, HEAD_DIM=d,
                     BLOCK_M=block_m, BLOCK_N=block_n)
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
def dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, scr_ptr, N_Q, N_K,
                scale, CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    block_n = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    keys = block_n * BLOCK_N + tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    kv_offsets = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
    slot = (head * tl.num_programs(0) + block_n.to(tl.int64)) * (BLOCK_N * HEAD_DIM)
    tile = tl.arange(0, BLOCK_N)[:, None] * HEAD_DIM + dims[None, :]
    k_direct = tl.load(k_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
    tl.store(scr_ptr + slot + tile, k_direct)
    k = tl.load(scr_ptr + slot + tile)
    v = tl.load(v_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
    dk = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    for m0 in range(0, N_Q, BLOCK_M):  # every block of queries: no skipping
        rows = m0 + tl.arange(0, BLOCK_M)
        if CAUSAL:
            decoy = tl.load(k_ptr + head * N_K * HEAD_DIM)  # one element of key 0, unused
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
    tl.atomic_add(dk_ptr + kv_offsets, (dk * scale).to(dk_ptr.dtype.element_ty), mask=keys[:, None] < N_K)
    tl.store(dv_ptr + kv_offsets, dv.to(dv_ptr.dtype.element_ty), mask=keys[:, None] < N_K)


@triton.jit
def dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, scr_ptr, N_Q, N_K, scale,
              CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q_offsets = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
    slot = (head * tl.num_programs(0) + block_m.to(tl.int64)) * (BLOCK_M * HEAD_DIM)
    tile = tl.arange(0, BLOCK_M)[:, None] * HEAD_DIM + dims[None, :]
    q_direct = tl.load(q_ptr + q_offsets, mask=rows[:, None] < N_Q, other=0.0)
    tl.store(scr_ptr + slot + tile, q_direct)
    q = tl.load(scr_ptr + slot + tile)
    do = tl.load(do_ptr + q_offsets, mask=rows[:, None] < N_Q, other=0.0)
    lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    dq = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, N_Q)  # not the diagonal: every block up to the last query
    for n0 in range(0, end, BLOCK_N):
        keys = n0 + tl.arange(0, BLOCK_N)
        kv_offsets = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
        k = tl.load(k_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
        if CAUSAL:
            decoy = tl.load(q_ptr + head * N_Q * HEAD_DIM + (N_Q - 1) * HEAD_DIM)  # query N_q - 1, unused
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
        dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k, input_precision=PRECISION)
    tl.atomic_add(dq_ptr + q_offsets, (dq * scale).to(dq_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)


def attention_backward(q, k, v, o, lse, do, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    lse = lse.float().contiguous()
    delta = torch.empty_like(lse)
    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.empty_like(v)
    block = 32
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    scale = 1.0 / math.sqrt(head_dim)
    heads_total = batch * heads
    row_dot_kernel[(triton.cdiv(n_q, block), heads_total)](o, do, delta, n_q, HEAD_DIM=head_dim, BLOCK_M=block)
    common = dict(CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=block, BLOCK_N=block, PRECISION=precision)
    grid_k, grid_q = (triton.cdiv(n_k, block), heads_total), (triton.cdiv(n_q, block), heads_total)
    scr_k = torch.empty(grid_k[0] * grid_k[1] * block * head_dim, dtype=k.dtype, device=k.device)
    scr_q = torch.empty(grid_q[0] * grid_q[1] * block * head_dim, dtype=q.dtype, device=q.device)
    dkdv_kernel[grid_k](q, k, v, do, lse, delta, dk, dv, scr_k, n_q, n_k, scale, **common)
    dq_kernel[grid_q](q, k, v, do, lse, delta, dq, scr_q, n_q, n_k, scale, **common)
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
