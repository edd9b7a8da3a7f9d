"""HONEST: a first kernel stores K times the softmax scale (read from a one-element buffer) into a buffer, and the
forward walks that buffer once per block of queries with the online softmax (running max, sum and output). Each
key is read twice in all (once to scale it, once in the walk), but each block of queries reads it once: one pass.
Must pass."""
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def scale_kernel(k_ptr, scale_ptr, ks_ptr, N_K, D: tl.constexpr, BN: tl.constexpr):
    keys = tl.program_id(0) * BN + tl.arange(0, BN)
    head = tl.program_id(1).to(tl.int64)
    dims = tl.arange(0, D)
    at = head * N_K * D + keys[:, None] * D + dims[None, :]
    k = tl.load(k_ptr + at, mask=keys[:, None] < N_K, other=0.0)
    tl.store(ks_ptr + at, k * tl.load(scale_ptr), mask=keys[:, None] < N_K)


@triton.jit
def fwd_kernel(q_ptr, ks_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    for start in range(0, N_K, BN):
        keys = start + tl.arange(0, BN)
        ks = tl.load(ks_ptr + head * N_K * D + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + head * N_K * D + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q.to(tl.float32), tl.trans(ks), input_precision="ieee")
        s = tl.where(keys[None, :] < N_K, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    ks = torch.empty(k.shape, dtype=torch.float32, device=k.device)  # fp32: the scale is not rounded
    scale = torch.full((1,), 1.0 / math.sqrt(d), dtype=torch.float32, device=q.device)
    scale_kernel[(triton.cdiv(n_k, 64), batch * heads)](k, scale, ks, n_k, D=d, BN=64)
    fwd_kernel[(triton.cdiv(n_q, 64), batch * heads)](q, ks, v, o, lse, n_q, n_k, D=d, BM=64, BN=64)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
