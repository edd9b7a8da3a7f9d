# what: CHEAT (no block skipping): the causal loop walks every key block; past the diagonal it does not load K/V but multiplies tiles of zeros (full tile products, masked to -inf), so the tile products are not skipped, only the loads; should be refused (blocks past the diagonal must be skipped)
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
    m = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (block_m + 1) * BM)
    for start in range(0, N_K, BN):
        keys = start + tl.arange(0, BN)
        if start < end:
            k = tl.load(k_head + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
            v = tl.load(v_head + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        else:
            k = tl.zeros((BN, D), dtype=q.dtype)
            v = tl.zeros((BN, D), dtype=q.dtype)
        s = tl.dot(q, tl.trans(k), input_precision=PREC) * scale
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PREC)
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)

def attention_forward(q, k, v, causal=False):
    b, h, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((b, h, n_q), dtype=torch.float32, device=q.device)
    prec = "ieee" if q.dtype == torch.float32 else "tf32"
    fwd_kernel[(triton.cdiv(n_q, 32), b * h)](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, D=d, BM=32, BN=32, PREC=prec)
    return o, lse

result = grading.grade("L5.causal", attention_forward)
