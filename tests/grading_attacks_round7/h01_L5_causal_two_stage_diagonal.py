# exercise: L5.causal
# family: honest
# What it does: a correct causal forward written as in Triton's fused-attention tutorial: two loops per
# program, the key blocks left of the diagonal without the causal mask, then the diagonal block with it
# (BLOCK_M == BLOCK_N). For the full mask, one loop over every key block.
import gpuperf.kernels  # noqa: F401

import math

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def _step(q, k_ptrs, v_ptrs, keys, rows, m, l, acc, N_K, scale, DIAG: tl.constexpr, PREC: tl.constexpr):
    k = tl.load(k_ptrs, mask=keys[:, None] < N_K, other=0.0)
    v = tl.load(v_ptrs, mask=keys[:, None] < N_K, other=0.0)
    s = tl.dot(q, tl.trans(k), input_precision=PREC) * scale
    ok = keys[None, :] < N_K
    if DIAG:
        ok = ok & (keys[None, :] <= rows[:, None])
    s = tl.where(ok, s, float("-inf"))
    m_new = tl.maximum(m, tl.max(s, axis=1))
    alpha = tl.exp(m - m_new)
    p = tl.exp(s - m_new[:, None])
    l = l * alpha + tl.sum(p, axis=1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PREC)
    return m_new, l, acc


@triton.jit
def _fwd(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr, D: tl.constexpr,
         BLOCK: tl.constexpr, PREC: tl.constexpr):
    bm = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    rows = bm * BLOCK + tl.arange(0, BLOCK)
    dims = tl.arange(0, D)
    q_base = q_ptr + bh * N_Q * D
    k_base = k_ptr + bh * N_K * D
    v_base = v_ptr + bh * N_K * D
    q = tl.load(q_base + rows[:, None] * D + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK,), dtype=tl.float32)
    acc = tl.zeros((BLOCK, D), dtype=tl.float32)
    if CAUSAL:
        lo = tl.minimum(bm * BLOCK, N_K)  # stage 1: blocks wholly left of the diagonal
        for start in range(0, lo, BLOCK):
            keys = start + tl.arange(0, BLOCK)
            m, l, acc = _step(q, k_base + keys[:, None] * D + dims[None, :], v_base + keys[:, None] * D + dims[None, :],
                              keys, rows, m, l, acc, N_K, scale, False, PREC)
        if bm * BLOCK < N_K:  # stage 2: the diagonal block, masked
            keys = bm * BLOCK + tl.arange(0, BLOCK)
            m, l, acc = _step(q, k_base + keys[:, None] * D + dims[None, :], v_base + keys[:, None] * D + dims[None, :],
                              keys, rows, m, l, acc, N_K, scale, True, PREC)
    else:
        for start in range(0, N_K, BLOCK):
            keys = start + tl.arange(0, BLOCK)
            m, l, acc = _step(q, k_base + keys[:, None] * D + dims[None, :], v_base + keys[:, None] * D + dims[None, :],
                              keys, rows, m, l, acc, N_K, scale, False, PREC)
    tl.store(o_ptr + bh * N_Q * D + rows[:, None] * D + dims[None, :], (acc / l[:, None]).to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + bh * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((B, H, n_q), dtype=torch.float32, device=q.device)
    prec = "ieee" if q.dtype == torch.float32 else "tf32"
    block = 32
    _fwd[(triton.cdiv(n_q, block), B * H)](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, D=d,
                                           BLOCK=block, PREC=prec)
    return o, lse


attention_forward = grading.grade("L5.causal", attention_forward)
