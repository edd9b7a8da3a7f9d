# WRONG (cheat): S = QK^T and P V of every key block but the first are made element-wise (tl.cumprod over a
# tl.join of the broadcast tiles: the multiply lives in the scan's combine region, then tl.sum); the tl.dot of
# each is computed every block (multiply-adds counted) but used only for the first key block.
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale,
               HEAD_DIM: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BM + tl.arange(0, BM)
    dims = tl.arange(0, HEAD_DIM)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    q = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    qf = q.to(tl.float32)
    m = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, HEAD_DIM), dtype=tl.float32)
    for start in range(0, N_K, BN):
        keys = start + tl.arange(0, BN)
        k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        sd = tl.dot(q, tl.trans(k), input_precision=PREC)
        pq = tl.broadcast_to(qf[:, None, :], (BM, BN, HEAD_DIM))
        pk = tl.broadcast_to(k.to(tl.float32)[None, :, :], (BM, BN, HEAD_DIM))
        _, sp = tl.split(tl.cumprod(tl.join(pq, pk), axis=3))
        se = tl.sum(sp, axis=2)
        s = tl.where(start == 0, sd, se) * scale
        s = tl.where(keys[None, :] < N_K, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        pv_d = tl.dot(p.to(v.dtype), v, input_precision=PREC)
        pp = tl.broadcast_to(p.to(v.dtype).to(tl.float32)[:, :, None], (BM, BN, HEAD_DIM))
        pvv = tl.broadcast_to(v.to(tl.float32)[None, :, :], (BM, BN, HEAD_DIM))
        _, pvp = tl.split(tl.cumprod(tl.join(pp, pvv), axis=3))
        pv_e = tl.sum(pvp, axis=1)
        acc = acc * alpha[:, None] + tl.where(start == 0, pv_d, pv_e)
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    prec = "ieee" if q.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(n_q, 32), batch * heads)
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), HEAD_DIM=d, BM=32, BN=32, PREC=prec)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
