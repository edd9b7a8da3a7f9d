# what: honest: the usual forward, plus the padding lanes zeroed in P by a float mask made as a product, keep = (rows < N_Q)[:, None] * (keys < N_K)[None, :] as fp32 (besides the -inf on scores past N_K)
import math
import torch
import triton
import triton.language as tl
import gpuperf.kernels
from gpuperf import grading

@triton.jit
def _block(q, k_head, v_head, start, m, l, acc, N_K, scale, dims, row_ok, HEAD_DIM: tl.constexpr,
           BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    keys = start + tl.arange(0, BLOCK_N)
    k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
    v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
    s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
    s = tl.where(keys[None, :] < N_K, s, float("-inf"))
    m_new = tl.maximum(m, tl.max(s, axis=1))
    alpha = tl.exp(m - m_new)
    keep = row_ok[:, None] * (keys < N_K).to(tl.float32)[None, :]
    p = tl.exp(s - m_new[:, None]) * keep
    l = l * alpha + tl.sum(p, axis=1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
    return m_new, l, acc


@triton.jit
def attention_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale,
                             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
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
    row_ok = (rows < N_Q).to(tl.float32)
    for start in range(0, N_K, BLOCK_N):
        m, l, acc = _block(q, k_head, v_head, start, m, l, acc, N_K, scale, dims, row_ok, HEAD_DIM, BLOCK_N, PRECISION)
    o = acc / tl.where(l > 0, l, 1.0)[:, None]
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(tl.where(l > 0, l, 1.0)), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(n_q, 32), batch * heads)
    attention_forward_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(head_dim),
                                   HEAD_DIM=head_dim, BLOCK_M=32, BLOCK_N=32, PRECISION=precision)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
