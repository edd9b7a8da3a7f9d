"""WRONG (two passes over K): a first kernel walks K once for each block of queries to find its rows' maxima (m),
and while it walks it stores K times the softmax scale, read from a one-element buffer, into a scratch copy of
its own (one per block of queries). A second kernel walks that scaled copy of K, with V, for the sum and the
output, using the stored m: each block of queries reads every key twice (once as K, once as K * scale), the
two-pass softmax the lab replaces. The grader counted K * scale as a tensor of the function's own (a value
computed from K and a loaded scale is no copy of K), so the second pass cost nothing in its count."""
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def max_kernel(q_ptr, k_ptr, scale_ptr, m_ptr, ks_ptr, N_Q, N_K, N_BLOCKS,
               D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    scale = tl.load(scale_ptr)
    q = tl.load(q_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    ks_head = ks_ptr + (head * N_BLOCKS + block_m) * N_K * D  # this block's own copy
    m = tl.full((BM,), float("-inf"), dtype=tl.float32)
    for start in range(0, N_K, BN):
        keys = start + tl.arange(0, BN)
        k = tl.load(k_ptr + head * N_K * D + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        ks = k * scale
        tl.store(ks_head + keys[:, None] * D + dims[None, :], ks, mask=keys[:, None] < N_K)
        s = tl.dot(q.to(tl.float32), tl.trans(ks), input_precision="ieee")
        s = tl.where(keys[None, :] < N_K, s, float("-inf"))
        m = tl.maximum(m, tl.max(s, axis=1))
    tl.store(m_ptr + head * N_Q + rows, m, mask=rows < N_Q)


@triton.jit
def sum_kernel(q_ptr, ks_ptr, v_ptr, m_ptr, o_ptr, lse_ptr, N_Q, N_K, N_BLOCKS,
               D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m = tl.load(m_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    ks_head = ks_ptr + (head * N_BLOCKS + block_m) * N_K * D
    l = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    for start in range(0, N_K, BN):
        keys = start + tl.arange(0, BN)
        ks = tl.load(ks_head + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + head * N_K * D + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q.to(tl.float32), tl.trans(ks), input_precision="ieee")
        p = tl.where(keys[None, :] < N_K, tl.exp(s - m[:, None]), 0.0)
        l += tl.sum(p, axis=1)
        acc += tl.dot(p.to(v.dtype), v, input_precision="ieee")
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
    m = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    blocks = triton.cdiv(n_q, 64)
    ks = torch.empty((batch * heads * blocks, n_k, d), dtype=torch.float32, device=k.device)
    scale = torch.full((1,), 1.0 / math.sqrt(d), dtype=torch.float32, device=q.device)
    grid = (blocks, batch * heads)
    max_kernel[grid](q, k, scale, m, ks, n_q, n_k, blocks, D=d, BM=64, BN=64)
    sum_kernel[grid](q, ks, v, m, o, lse, n_q, n_k, blocks, D=d, BM=64, BN=64)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
