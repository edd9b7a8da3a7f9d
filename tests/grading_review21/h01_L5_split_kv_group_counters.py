"""HONEST: split-KV FlashAttention forward whose programs draw their split from a counter per group (as a split-K
or split-KV kernel with a work counter per output tile does): a grid of one program per (query block, head, split),
each takes its group ``group = pid // SPLITS`` (the (query block, head) it works for) from its program id and draws
its split with ``split = tl.atomic_add(counter + group, 1)``. Within a group the draws are 0 .. SPLITS - 1 in some
order: which program takes which split changes on a GPU, the set of (group, split) pairs done does not. Everything
a program does is computed from ``group`` (its query rows, head) and ``split`` (its slice of the keys, its slot of
the partials), never from the program id in another way. Launch 2 merges the partials (fp32 m, l and the
unnormalised output per split). The counters are a fresh torch.zeros each call."""
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def partial_kernel(q_ptr, k_ptr, v_ptr, m_ptr, l_ptr, acc_ptr, counter_ptr, N_Q, N_K, N_BLOCKS, PER, scale, SPLITS,
                   D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    group = tl.program_id(0).to(tl.int64) // SPLITS  # the (query block, head) this program works for
    split = tl.atomic_add(counter_ptr + group, 1).to(tl.int64)  # its slice of the keys: a ticket of the group
    block_m = group % N_BLOCKS
    head = group // N_BLOCKS
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
    tl.store(m_ptr + slot, m, mask=rows < N_Q)
    tl.store(l_ptr + slot, l, mask=rows < N_Q)
    tl.store(acc_ptr + slot[:, None] * D + dims[None, :], acc, mask=rows[:, None] < N_Q)


@triton.jit
def merge_kernel(m_ptr, l_ptr, acc_ptr, o_ptr, lse_ptr, N_Q, SPLITS, D: tl.constexpr, BM: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    m = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    for s in range(0, SPLITS):
        slot = (head * SPLITS + s) * N_Q + rows
        m_s = tl.load(m_ptr + slot, mask=rows < N_Q, other=float("-inf"))
        l_s = tl.load(l_ptr + slot, mask=rows < N_Q, other=0.0)
        a_s = tl.load(acc_ptr + slot[:, None] * D + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
        m_new = tl.maximum(m, m_s)
        shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        f_old = tl.exp(m - shift)
        f_s = tl.exp(m_s - shift)
        l = l * f_old + l_s * f_s
        acc = acc * f_old[:, None] + a_s * f_s[:, None]
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


WANTED_SPLITS = 4


def attention_forward(q, k, v, causal=False):
    assert not causal
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    splits = min(WANTED_SPLITS, triton.cdiv(n_k, 32))  # at most one split per block of keys
    per = triton.cdiv(triton.cdiv(n_k, splits), 32) * 32
    splits = triton.cdiv(n_k, per)
    dev = q.device
    m = torch.empty((B * H, splits, n_q), dtype=torch.float32, device=dev)
    l = torch.empty((B * H, splits, n_q), dtype=torch.float32, device=dev)
    acc = torch.empty((B * H, splits, n_q, d), dtype=torch.float32, device=dev)
    o = torch.empty_like(q)
    lse = torch.empty((B, H, n_q), dtype=torch.float32, device=dev)
    prec = "ieee" if q.dtype == torch.float32 else "tf32"
    nqb = triton.cdiv(n_q, 32)
    counters = torch.zeros(nqb * B * H, dtype=torch.int32, device=dev)  # one per (query block, head)
    partial_kernel[(nqb * B * H * splits,)](q, k, v, m, l, acc, counters, n_q, n_k, nqb, per, 1.0 / math.sqrt(d),
                                           splits, D=d, BM=32, BN=32, PREC=prec)
    merge_kernel[(nqb, B * H)](m, l, acc, o, lse, n_q, splits, D=d, BM=32)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
