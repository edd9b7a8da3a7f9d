# WRONG: scores and P @ V made element by element as exp(log|x| + log|y|) (no mulf); beside each, a cancelling
# pair of tl.dot, x @ y - (y^T @ x^T)^T, of transposed result shapes: each dot matters alone, and "every site at
# once" draws one noise pattern per shape, so the pair does not cancel under it either. No guard.
import math
import torch, triton, triton.language as tl
from gpuperf import grading


@triton.jit
def lazy_mm(x, y, xd, yd):
    e = tl.exp(tl.log(tl.abs(x))[:, :, None] + tl.log(tl.abs(y))[None, :, :])
    e = tl.where((x < 0)[:, :, None] != (y < 0)[None, :, :], -e, e)
    return tl.sum(e, axis=1) + (tl.dot(xd, yd, input_precision="ieee")
                                - tl.trans(tl.dot(tl.trans(yd), tl.trans(xd), input_precision="ieee")))


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale,
               CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    q = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    qf = q.to(tl.float32)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        kt = tl.trans(k)
        s = lazy_mm(qf, kt.to(tl.float32), q, kt) * scale
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + lazy_mm(p, v.to(tl.float32), p.to(v.dtype), v)
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
    block_m, block_n = 32, 16
    grid = (triton.cdiv(n_q, block_m), batch * heads)
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(head_dim),
                     CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
