# WRONG (cheat): a torch.autograd.Function joining 02's forward and 03's backward: every tile product of O,
# dV and dQ made element by element (operands broadcast to 3-D and reshaped to flat 2-D tiles before the
# multiply), each beside a tl.dot on a decoy whose element-by-element twin is subtracted.
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def _flat(x, y, R: tl.constexpr, T: tl.constexpr, C: tl.constexpr):
    x2 = tl.reshape(tl.broadcast_to(x.to(tl.float32)[:, None, :], (R, T, C)), (R * T, C))
    y2 = tl.reshape(tl.broadcast_to(y.to(tl.float32)[None, :, :], (R, T, C)), (R * T, C))
    return tl.reshape(tl.sum(x2 * y2, axis=1), (R, T))


@triton.jit
def _perm(x, R: tl.constexpr, C: tl.constexpr):
    return tl.reshape(tl.permute(tl.reshape(x, (R, 2, C // 2)), (0, 2, 1)), (R, C))




@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale,
               CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
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
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        kr = _perm(k, BLOCK_N, HEAD_DIM)  # decoys: the head dimension's halves interleaved, in registers
        vr = _perm(v, BLOCK_N, HEAD_DIM)
        d1 = tl.dot(q, tl.trans(kr), input_precision=PRECISION)
        s = (_flat(q, k, BLOCK_M, BLOCK_N, HEAD_DIM) + (d1 - _flat(q, kr, BLOCK_M, BLOCK_N, HEAD_DIM))) * scale
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        p16 = p.to(v.dtype)
        d2 = tl.dot(p16, vr, input_precision=PRECISION)
        pv = _flat(p16, tl.trans(v), BLOCK_M, HEAD_DIM, BLOCK_N) + \
            (d2 - _flat(p16, tl.trans(vr), BLOCK_M, HEAD_DIM, BLOCK_N))
        acc = acc * alpha[:, None] + pv
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    BM, BN = 16, 16
    grid = (triton.cdiv(n_q, BM), batch * heads)
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(head_dim), CAUSAL=causal, HEAD_DIM=head_dim,
                     BLOCK_M=BM, BLOCK_N=BN, PRECISION=precision)
    return o, lse


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
    start = 0
    if CAUSAL:  # queries before this key block's first key cannot see it
        start = (block_n * BLOCK_N // BLOCK_M) * BLOCK_M
    for m0 in range(start, N_Q, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        q_offsets = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
        q = tl.load(q_ptr + q_offsets, mask=rows[:, None] < N_Q, other=0.0)
        do = tl.load(do_ptr + q_offsets, mask=rows[:, None] < N_Q, other=0.0)
        lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
        delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
        # recompute this tile of P from the log-sum-exp
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
        pt = tl.trans(p.to(do.dtype))
        dv += _flat(pt, tl.trans(do), BLOCK_N, HEAD_DIM, BLOCK_M) + (
            tl.dot(pt, _perm(do, BLOCK_M, HEAD_DIM), input_precision=PRECISION)
            - _flat(pt, tl.trans(_perm(do, BLOCK_M, HEAD_DIM)), BLOCK_N, HEAD_DIM, BLOCK_M))
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
    if CAUSAL:  # keys right of this query block's last row are hidden
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
        dsk = ds.to(k.dtype)
        dq += _flat(dsk, tl.trans(k), BLOCK_M, HEAD_DIM, BLOCK_N) + (
            tl.dot(dsk, _perm(k, BLOCK_N, HEAD_DIM), input_precision=PRECISION)
            - _flat(dsk, tl.trans(_perm(k, BLOCK_N, HEAD_DIM)), BLOCK_M, HEAD_DIM, BLOCK_N))
    tl.store(dq_ptr + q_offsets, (dq * scale).to(dq_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)


def attention_backward(q, k, v, o, lse, do, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    lse = lse.float().contiguous()
    delta = torch.empty_like(lse)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    on_gpu = False
    sm80 = on_gpu and torch.cuda.get_device_capability(q.device)[0] >= 8
    block = 16
    if on_gpu and not sm80 and head_dim > 64:  # a T4 (sm_75) has 64 KB of shared
        block //= 2  # memory: halve the d = 128 tiles (dkdv_kernel holds five)
    stages = 2 if sm80 else 1  # pipelined loads take shared memory: one stage on a T4
    precision = "ieee" if q.dtype == torch.float32 else "tf32"  # fp32 means fp32
    scale = 1.0 / math.sqrt(head_dim)
    heads_total = batch * heads
    row_dot_kernel[(triton.cdiv(n_q, block), heads_total)](
        o, do, delta, n_q, HEAD_DIM=head_dim, BLOCK_M=block)
    common = dict(CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=block, BLOCK_N=block,
                  PRECISION=precision, num_stages=stages)
    dkdv_kernel[(triton.cdiv(n_k, block), heads_total)](
        q, k, v, do, lse, delta, dk, dv, n_q, n_k, scale, **common)
    dq_kernel[(triton.cdiv(n_q, block), heads_total)](
        q, k, v, do, lse, delta, dq, n_q, n_k, scale, **common)
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
