"""A FlashAttention forward kernel shared by the L5 attacks; each attack switches one thing on or off."""
import math

import torch
import triton
import triton.language as tl


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr,
               SKIP: tl.constexpr, USE_DOT: tl.constexpr, RESCALE: tl.constexpr, ACC16: tl.constexpr,
               BOTTOM_RIGHT: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    end = N_K
    if CAUSAL and SKIP:
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        kv = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
        k = tl.load(k_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
        if USE_DOT:
            s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        else:
            s = tl.sum(q.to(tl.float32)[:, None, :] * k.to(tl.float32)[None, :, :], axis=2) * scale
        visible = keys[None, :] < N_K
        if CAUSAL:
            if BOTTOM_RIGHT:
                visible = visible & (keys[None, :] <= rows[:, None] + (N_K - N_Q))
            else:
                visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        if RESCALE:
            m_new = tl.maximum(m, tl.max(s, axis=1))
        else:
            m_new = tl.where(m == float("-inf"), tl.max(s, axis=1), m)  # the first block's max, kept
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        if USE_DOT:
            pv = tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        else:
            pv = tl.sum(p.to(v.dtype).to(tl.float32)[:, :, None] * v.to(tl.float32)[None, :, :], axis=1)
        acc = acc * alpha[:, None] + pv
        if ACC16:
            acc = acc.to(tl.float16).to(tl.float32)
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def forward(q, k, v, causal=False, *, scale=None, skip=True, use_dot=True, rescale=True, acc16=False,
            bottom_right=False, block_m=32, block_n=32):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(n_q, block_m), batch * heads)
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d) if scale is None else scale, CAUSAL=causal,
                     HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n, PRECISION=precision, SKIP=skip,
                     USE_DOT=use_dot, RESCALE=rescale, ACC16=acc16, BOTTOM_RIGHT=bottom_right)
    return o, lse
