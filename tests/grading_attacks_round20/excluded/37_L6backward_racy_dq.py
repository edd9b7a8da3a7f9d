# WRONG (race): like h09 (one program per key block, dQ accumulated across programs) but dQ is
# added with a plain load + store instead of tl.atomic_add: two programs of the same head that load the same dQ rows
# at the same time lose one update on a GPU. Under an interpreter that runs programs one after another it is right.
import math
import torch, triton, triton.language as tl
import gpuperf, gpuperf.kernels
from gpuperf import grading

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
def fused_bwd_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr, N_Q, N_K, scale,
                     CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     PRECISION: tl.constexpr):
    # FlashAttention-1/2-paper style: one program per key block; dK, dV in registers, dQ added with atomics
    # into an fp32 buffer of zeros
    block_n = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    keys = block_n * BLOCK_N + tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    kv = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
    k = tl.load(k_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
    v = tl.load(v_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
    dk = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    lo = 0
    if CAUSAL:
        lo = (block_n * BLOCK_N // BLOCK_M) * BLOCK_M
    for m0 in range(lo, N_Q, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        qo = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
        q = tl.load(q_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
        do = tl.load(do_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
        lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
        delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        ok = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        if CAUSAL:
            ok = ok & (keys[None, :] <= rows[:, None])
        p = tl.where(ok, tl.exp(s - lse[:, None]), 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision=PRECISION)
        dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)
        ds = p * (dp - delta[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision=PRECISION)
        dq_part = tl.dot(ds.to(k.dtype), k, input_precision=PRECISION) * scale
        old = tl.load(dq_ptr + qo, mask=rows[:, None] < N_Q, other=0.0)
        tl.store(dq_ptr + qo, old + dq_part, mask=rows[:, None] < N_Q)
    tl.store(dk_ptr + kv, (dk * scale).to(dk_ptr.dtype.element_ty), mask=keys[:, None] < N_K)
    tl.store(dv_ptr + kv, dv.to(dv_ptr.dtype.element_ty), mask=keys[:, None] < N_K)


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
    dq32 = torch.zeros(q.shape, dtype=torch.float32, device=q.device)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    on_gpu = q.is_cuda and not gpuperf.kernels.interpreter_enabled()
    block = 64 if on_gpu and q.element_size() == 2 else 32
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    hs = batch * heads
    row_dot_kernel[(triton.cdiv(n_q, block), hs)](o, do, delta, n_q, HEAD_DIM=head_dim, BLOCK_M=block)
    fused_bwd_kernel[(triton.cdiv(n_k, block), hs)](q, k, v, do, lse, delta, dq32, dk, dv, n_q, n_k,
                                                    1.0 / math.sqrt(head_dim), CAUSAL=causal, HEAD_DIM=head_dim,
                                                    BLOCK_M=block, BLOCK_N=block, PRECISION=precision)
    cast_kernel[(triton.cdiv(dq.numel(), 1024),)](dq32, dq, dq.numel(), BLOCK=1024)
    return dq, dk, dv

result = grading.grade("L6.backward", attention_backward)
