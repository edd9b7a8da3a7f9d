import math
import torch, triton, triton.language as tl
from gpuperf import grading


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale,
               CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    d16 = tl.arange(0, 16)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    q16 = tl.load(q_head + rows[:, None] * HEAD_DIM + d16[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k16 = tl.load(k_head + keys[:, None] * HEAD_DIM + d16[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        # the first 16 dims by tl.dot, called HEAD_DIM/16 times so the multiply-add count is complete
        s16 = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for r in range(0, HEAD_DIM, 16):
            s16 = tl.dot(q16, tl.trans(k16), input_precision="ieee")
        # the other dims element by element, from stride-0 tiles (no tl.broadcast of data)
        zk = (keys * 0)[None, :]
        zr = (rows * 0)[:, None]
        okm = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        rest = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for dd in range(16, HEAD_DIM):
            qt = tl.load(q_head + rows[:, None] * HEAD_DIM + dd + zk, mask=okm, other=0.0).to(tl.float32)
            kt = tl.load(k_head + keys[None, :] * HEAD_DIM + dd + zr, mask=okm, other=0.0).to(tl.float32)
            rest += qt * kt
        s = (s16 + rest) * scale
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
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    grid = (triton.cdiv(n_q, 32), batch * heads)
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(head_dim),
                     CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=32, BLOCK_N=32)
    return o, lse




@triton.jit
def lazy_abt(a_head, b_head, rows, cols, N_A, N_B, HEAD_DIM: tl.constexpr):
    # a (rows, HEAD_DIM) times b (cols, HEAD_DIM)^T: the first 16 dims by tl.dot (called HEAD_DIM/16 times so the
    # multiply-add count is complete), the others element by element from stride-0 tiles
    d16 = tl.arange(0, 16)
    a16 = tl.load(a_head + rows[:, None] * HEAD_DIM + d16[None, :], mask=rows[:, None] < N_A, other=0.0)
    b16 = tl.load(b_head + cols[:, None] * HEAD_DIM + d16[None, :], mask=cols[:, None] < N_B, other=0.0)
    part = tl.zeros((rows.shape[0], cols.shape[0]), dtype=tl.float32)
    for r in range(0, HEAD_DIM, 16):
        part = tl.dot(a16, tl.trans(b16), input_precision="ieee")
    zc = (cols * 0)[None, :]
    zr = (rows * 0)[:, None]
    ok = (rows[:, None] < N_A) & (cols[None, :] < N_B)
    rest = tl.zeros((rows.shape[0], cols.shape[0]), dtype=tl.float32)
    for dd in range(16, HEAD_DIM):
        at = tl.load(a_head + rows[:, None] * HEAD_DIM + dd + zc, mask=ok, other=0.0).to(tl.float32)
        bt = tl.load(b_head + cols[None, :] * HEAD_DIM + dd + zr, mask=ok, other=0.0).to(tl.float32)
        rest += at * bt
    return part + rest


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
        dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision=PRECISION)
        dp = lazy_abt(do_ptr + head * N_Q * HEAD_DIM, v_ptr + head * N_K * HEAD_DIM, rows, keys, N_Q, N_K, HEAD_DIM)
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
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
        dp = lazy_abt(do_ptr + head * N_Q * HEAD_DIM, v_ptr + head * N_K * HEAD_DIM, rows, keys, N_Q, N_K, HEAD_DIM)
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
    on_gpu = False
    sm80 = on_gpu and torch.cuda.get_device_capability(q.device)[0] >= 8
    block = 64 if on_gpu and q.element_size() == 2 else 32
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
