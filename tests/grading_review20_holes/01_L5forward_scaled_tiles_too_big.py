"""WRONG (does not run on a GPU): round 19's 56 (BLOCK_M = 128 queries, BLOCK_N = 256 keys for every head size
and dtype) with each loaded tile changed before its product: q times the softmax scale, k through a tl.where
that zeroes the keys past N_k, v times 1.0. At d = 128 in fp32 the q, k and v tiles of one step still need
64 + 128 + 128 KiB of shared memory, more than the 227 KiB a block gets on an H100; the grader counted only
tiles multiplied as loaded (or transposed), so these escaped the check."""
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale,
               CAUSAL: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    q_head = q_ptr + head * N_Q * D
    k_head = k_ptr + head * N_K * D
    v_head = v_ptr + head * N_K * D
    q = tl.load(q_head + rows[:, None] * D + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    q = q * scale  # the softmax scale folded into q once, as many kernels do
    m = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (block_m + 1) * BM)  #END
    for start in range(0, end, BN):
        keys = start + tl.arange(0, BN)
        k = tl.load(k_head + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        k = tl.where(keys[:, None] < N_K, k, 0.0)  # the keys past N_K zeroed (again)
        v = v * 1.0
        s = tl.dot(q, tl.trans(k), input_precision=PREC)
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])  #MASK
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PREC)  #ACC
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)  #LSE


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    prec = "ieee" if q.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(n_q, 128), batch * heads)
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, D=d, BM=128, BN=256, PREC=prec, num_stages=2)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
