# HONEST (causal): two heads a program, with batched (3-D) tl.dot for S = Q K^T and P V (FlashAttention's online softmax
# along the last axis); a missing second head (odd head count) is masked.
import math
import torch, triton, triton.language as tl
from gpuperf import grading


@triton.jit
def fwd2_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, HEADS, scale,
                CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    block_m = tl.program_id(0)
    hs = (tl.program_id(1) * 2 + tl.arange(0, 2)).to(tl.int64)  # two heads
    h_ok = hs < HEADS
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q_off = hs[:, None, None] * N_Q * HEAD_DIM + rows[None, :, None] * HEAD_DIM + dims[None, None, :]
    q_ok = h_ok[:, None, None] & (rows[None, :, None] < N_Q)
    q = tl.load(q_ptr + q_off, mask=q_ok, other=0.0)
    m = tl.full((2, BLOCK_M), float("-inf"), dtype=tl.float32)
    l = tl.zeros((2, BLOCK_M), dtype=tl.float32)
    acc = tl.zeros((2, BLOCK_M, HEAD_DIM), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    for start in range(0, end, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        kv_off = hs[:, None, None] * N_K * HEAD_DIM + keys[None, :, None] * HEAD_DIM + dims[None, None, :]
        kv_ok = h_ok[:, None, None] & (keys[None, :, None] < N_K)
        k = tl.load(k_ptr + kv_off, mask=kv_ok, other=0.0)
        v = tl.load(v_ptr + kv_off, mask=kv_ok, other=0.0)
        s = tl.dot(q, tl.permute(k, (0, 2, 1)), input_precision="ieee") * scale
        visible = keys[None, None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, None, :] <= rows[None, :, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=2))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, :, None])
        l = l * alpha + tl.sum(p, axis=2)
        acc = acc * alpha[:, :, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        m = m_new
    o = acc / l[:, :, None]
    tl.store(o_ptr + q_off, o.to(o_ptr.dtype.element_ty), mask=q_ok)
    lse_off = hs[:, None] * N_Q + rows[None, :]
    tl.store(lse_ptr + lse_off, m + tl.log(l), mask=h_ok[:, None] & (rows[None, :] < N_Q))


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    block_m, block_n = 32, 32
    total = batch * heads
    grid = (triton.cdiv(n_q, block_m), triton.cdiv(total, 2))
    fwd2_kernel[grid](q, k, v, o, lse, n_q, n_k, total, 1.0 / math.sqrt(head_dim),
                      CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n)
    return o, lse


result = grading.grade("L5.causal", attention_forward)
