# what: honest: two heads a program, every tile three-dimensional (heads, rows, columns) and multiplied by a batched 3-D tl.dot, rescaled with alpha[:, :, None] (round 29's review: the lane-by-lane rule for 3-D tiles would have refused it)
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, HEADS, N_Q, N_K, scale,
               CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               PAIR: tl.constexpr, PRECISION: tl.constexpr):
    block_m = tl.program_id(0)
    first = tl.program_id(1).to(tl.int64) * PAIR  # the first of this program's heads (batch and head flattened)
    hs = first + tl.arange(0, PAIR).to(tl.int64)
    h_ok = hs < HEADS
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    h3 = hs[:, None, None]
    ok_q = h_ok[:, None, None] & (rows[None, :, None] < N_Q)
    q = tl.load(q_ptr + h3 * N_Q * HEAD_DIM + rows[None, :, None] * HEAD_DIM + dims[None, None, :], mask=ok_q,
                other=0.0)
    m = tl.full((PAIR, BLOCK_M), float("-inf"), dtype=tl.float32)
    l = tl.zeros((PAIR, BLOCK_M), dtype=tl.float32)
    acc = tl.zeros((PAIR, BLOCK_M, HEAD_DIM), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        ok_k = h_ok[:, None, None] & (keys[None, :, None] < N_K)
        k = tl.load(k_ptr + h3 * N_K * HEAD_DIM + keys[None, :, None] * HEAD_DIM + dims[None, None, :], mask=ok_k,
                    other=0.0)
        v = tl.load(v_ptr + h3 * N_K * HEAD_DIM + keys[None, :, None] * HEAD_DIM + dims[None, None, :], mask=ok_k,
                    other=0.0)
        s = tl.dot(q, tl.permute(k, (0, 2, 1)), input_precision=PRECISION) * scale
        visible = keys[None, None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, None, :] <= rows[None, :, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=2))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, :, None])
        l = l * alpha + tl.sum(p, axis=2)
        acc = acc * alpha[:, :, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m = m_new
    o = acc / l[:, :, None]
    tl.store(o_ptr + h3 * N_Q * HEAD_DIM + rows[None, :, None] * HEAD_DIM + dims[None, None, :],
             o.to(o_ptr.dtype.element_ty), mask=ok_q)
    tl.store(lse_ptr + hs[:, None] * N_Q + rows[None, :], m + tl.log(l), mask=h_ok[:, None] & (rows[None, :] < N_Q))


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    pair = 2
    grid = (triton.cdiv(n_q, 16), triton.cdiv(batch * heads, pair))
    fwd_kernel[grid](q, k, v, o, lse, batch * heads, n_q, n_k, 1.0 / math.sqrt(head_dim),
                     CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=16, BLOCK_N=16, PAIR=pair, PRECISION=precision)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
