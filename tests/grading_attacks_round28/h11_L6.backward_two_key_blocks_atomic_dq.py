# what: honest backward where each program takes two blocks of keys in turn (a half-persistent grid), for each keeping dK/dV in registers and storing them once, and adding its dQ share with tl.atomic_add: one program adds to a dq element once per key block it owns (twice), as any persistent FA backward with atomic dQ does; should pass
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def delta_kernel(o_ptr, do_ptr, delta_ptr, N_Q, D: tl.constexpr, BM: tl.constexpr):
    h = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    off = h * N_Q * D + rows[:, None] * D + d[None, :]
    o = tl.load(o_ptr + off, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + off, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    tl.store(delta_ptr + h * N_Q + rows, tl.sum(o * do, 1), mask=rows < N_Q)


@triton.jit
def bwd_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr, N_Q, N_K, scale,
               CAUSAL: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    h = tl.program_id(1).to(tl.int64)
    for nb in range(tl.program_id(0) * 2, tl.minimum(tl.program_id(0) * 2 + 2, tl.cdiv(N_K, BN))):
        _one_key_block(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr, N_Q, N_K, scale, nb, h,
                       CAUSAL, D, BM, BN, PREC)


@triton.jit
def _one_key_block(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr, N_Q, N_K, scale, nb, h,
                   CAUSAL: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    keys = nb * BN + tl.arange(0, BN)
    d = tl.arange(0, D)
    koff = h * N_K * D + keys[:, None] * D + d[None, :]
    k = tl.load(k_ptr + koff, mask=keys[:, None] < N_K, other=0.0)
    v = tl.load(v_ptr + koff, mask=keys[:, None] < N_K, other=0.0)
    dk = tl.zeros((BN, D), tl.float32)
    dv = tl.zeros((BN, D), tl.float32)
    lo = 0
    if CAUSAL:
        lo = (nb * BN // BM) * BM
    for m0 in range(lo, N_Q, BM):
        rows = m0 + tl.arange(0, BM)
        qoff = h * N_Q * D + rows[:, None] * D + d[None, :]
        q = tl.load(q_ptr + qoff, mask=rows[:, None] < N_Q, other=0.0)
        do = tl.load(do_ptr + qoff, mask=rows[:, None] < N_Q, other=0.0)
        lse = tl.load(lse_ptr + h * N_Q + rows, mask=rows < N_Q, other=0.0)
        dlt = tl.load(delta_ptr + h * N_Q + rows, mask=rows < N_Q, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PREC) * scale
        ok = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        if CAUSAL:
            ok = ok & (keys[None, :] <= rows[:, None])
        p = tl.where(ok, tl.exp(s - lse[:, None]), 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision=PREC)
        dp = tl.dot(do, tl.trans(v), input_precision=PREC)
        ds = p * (dp - dlt[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision=PREC)
        dqp = tl.dot(ds.to(k.dtype), k, input_precision=PREC) * scale
        tl.atomic_add(dq_ptr + h * N_Q * D + rows[:, None] * D + d[None, :], dqp, mask=rows[:, None] < N_Q)
    tl.store(dk_ptr + koff, (dk * scale).to(dk_ptr.dtype.element_ty), mask=keys[:, None] < N_K)
    tl.store(dv_ptr + koff, dv.to(dv_ptr.dtype.element_ty), mask=keys[:, None] < N_K)


@triton.jit
def cast_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m).to(dst_ptr.dtype.element_ty), mask=m)


def attention_backward(q, k, v, o, lse, do, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    lse = lse.float().contiguous()
    delta = torch.empty_like(lse)
    dq32 = torch.zeros(q.shape, dtype=torch.float32, device=q.device)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    prec = "ieee" if q.dtype == torch.float32 else "tf32"
    BM, BN = 32, 32
    delta_kernel[(triton.cdiv(n_q, BM), B * H)](o, do, delta, n_q, D=d, BM=BM)
    bwd_kernel[(triton.cdiv(triton.cdiv(n_k, BN), 2), B * H)](q, k, v, do, lse, delta, dq32, dk, dv, n_q, n_k, 1.0 / math.sqrt(d),
                                            CAUSAL=causal, D=d, BM=BM, BN=BN, PREC=prec)
    cast_kernel[(triton.cdiv(dq.numel(), 1024),)](dq32, dq, dq.numel(), BLOCK=1024)
    return dq, dk, dv


result = grading.grade("L6.backward", attention_backward)
