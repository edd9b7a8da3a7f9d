"""WRONG (a race between programs): split-KV FlashAttention forward (as h15, with 2 splits) in ONE launch: each program of a
(query block, head, split) adds its slice's running max, sum and unnormalised output into a zeroed fp32
workspace with tl.atomic_add (onto 0: a write), and the program of the LAST split (its own partial kept in registers) reads the other split's partials
through the values tl.atomic_add(ptr, 0) returns, merges them and writes O and lse. It assumes the last split's
program runs after the others of its query block: on a GPU nothing orders them, so O misses the slices still
running. Triton's interpreter runs programs in grid order (axis 2 innermost), which hides the race."""
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def partial_kernel(q_ptr, k_ptr, v_ptr, m_ptr, l_ptr, acc_ptr, o_ptr, lse_ptr, N_Q, N_K, PER, scale, SPLITS,
                   D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    split = tl.program_id(2).to(tl.int64)
    rows = block_m * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    lo = split * PER
    hi = tl.minimum(lo + PER, N_K)
    for start in range(lo, hi, BN):
        keys = start + tl.arange(0, BN)
        k = tl.load(k_ptr + head * N_K * D + keys[:, None] * D + dims[None, :], mask=keys[:, None] < hi, other=0.0)
        v = tl.load(v_ptr + head * N_K * D + keys[:, None] * D + dims[None, :], mask=keys[:, None] < hi, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PREC) * scale
        s = tl.where(keys[None, :] < hi, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp(m - shift)
        p = tl.exp(s - shift[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PREC)
        m = m_new
    slot = (head * SPLITS + split) * N_Q + rows
    if split < SPLITS - 1:
        tl.atomic_add(m_ptr + slot, m, mask=rows < N_Q)
        tl.atomic_add(l_ptr + slot, l, mask=rows < N_Q)
        tl.atomic_add(acc_ptr + slot[:, None] * D + dims[None, :], acc, mask=rows[:, None] < N_Q)
    else:  # "the last split merges": assumed to run after the others; its own partial stays in registers
        mm = m
        ll = l
        aa = acc
        for s2 in range(0, SPLITS - 1):
            sl = (head * SPLITS + s2) * N_Q + rows
            m_s = tl.atomic_add(m_ptr + sl, tl.zeros((BM,), tl.float32), mask=rows < N_Q)
            l_s = tl.atomic_add(l_ptr + sl, tl.zeros((BM,), tl.float32), mask=rows < N_Q)
            a_s = tl.atomic_add(acc_ptr + sl[:, None] * D + dims[None, :], tl.zeros((BM, D), tl.float32),
                                mask=rows[:, None] < N_Q)
            m_s = tl.where(rows < N_Q, m_s, float("-inf"))
            m_new = tl.maximum(mm, m_s)
            sh = tl.where(m_new == float("-inf"), 0.0, m_new)
            f_old = tl.exp(mm - sh)
            f_s = tl.exp(m_s - sh)
            ll = ll * f_old + l_s * f_s
            aa = aa * f_old[:, None] + a_s * f_s[:, None]
            mm = m_new
        o = aa / ll[:, None]
        tl.store(o_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], o.to(o_ptr.dtype.element_ty),
                 mask=rows[:, None] < N_Q)
        tl.store(lse_ptr + head * N_Q + rows, mm + tl.log(ll), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    assert not causal
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    splits = 2 if n_k >= 64 else 1
    per = triton.cdiv(triton.cdiv(n_k, splits), 32) * 32
    splits = triton.cdiv(n_k, per)
    dev = q.device
    m = torch.zeros((B * H, splits, n_q), dtype=torch.float32, device=dev)
    l = torch.zeros((B * H, splits, n_q), dtype=torch.float32, device=dev)
    acc = torch.zeros((B * H, splits, n_q, d), dtype=torch.float32, device=dev)
    o = torch.empty_like(q)
    lse = torch.empty((B, H, n_q), dtype=torch.float32, device=dev)
    prec = "ieee" if q.dtype == torch.float32 else "tf32"
    nqb = triton.cdiv(n_q, 32)
    partial_kernel[(nqb, B * H, splits)](q, k, v, m, l, acc, o, lse, n_q, n_k, per, 1.0 / math.sqrt(d), splits,
                                         D=d, BM=32, BN=32, PREC=prec)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
