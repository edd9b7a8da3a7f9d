# what: S = QK^T computed as a broadcast product written as a division (q[:, None, :] / (1/k)[None]) summed over d, the real tl.dot kept only as 0 * dot; a broadcast product off the tensor cores that should be refused
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading

LOG2E = 1.4426950408889634


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, H, N_Q, N_K, qk_scale,
               sqb, sqh, sqn, skb, skh, skn, svb, svh, svn, sob, soh, son,
               CAUSAL: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    bh = tl.program_id(0).to(tl.int64)
    b = bh // H
    h = bh % H
    blk = tl.program_id(1)
    rows = blk * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    qp = q_ptr + b * sqb + h * sqh
    kp = k_ptr + b * skb + h * skh
    vp = v_ptr + b * svb + h * svh
    q = tl.load(qp + rows[:, None] * sqn + d[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m_i = tl.full((BM,), -float("inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    hi = N_K
    if CAUSAL:
        hi = tl.minimum(N_K, (blk + 1) * BM)
    for start in range(0, hi, BN):
        keys = start + tl.arange(0, BN)
        kt = tl.load(kp + keys[None, :] * skn + d[:, None], mask=keys[None, :] < N_K, other=0.0)
        rk = 1.0 / tl.trans(kt).to(tl.float32)
        sb = tl.sum(q.to(tl.float32)[:, None, :] / rk[None, :, :], axis=2)
        s = (sb + 0.0 * tl.dot(q, kt, input_precision=PREC)) * qk_scale
        ok = (keys[None, :] < N_K) & (rows[:, None] >= 0)
        if CAUSAL:
            ok = ok & (rows[:, None] >= keys[None, :])
        s = tl.where(ok, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        corr = tl.exp2(m_i - m_new)
        l_i = l_i * corr + tl.sum(p, 1)
        v = tl.load(vp + keys[:, None] * svn + d[None, :], mask=keys[:, None] < N_K, other=0.0)
        acc = acc * corr[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PREC)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + b * sob + h * soh + rows[:, None] * son + d[None, :], out.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + bh * N_Q + rows, (m_i + tl.log2(l_i)) / 1.4426950408889634, mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    o = torch.empty((B, H, n_q, d), dtype=q.dtype, device=q.device)
    lse = torch.empty((B, H, n_q), dtype=torch.float32, device=q.device)
    prec = "ieee" if q.dtype == torch.float32 else "tf32"
    BM, BN = 32, 16
    grid = (B * H, triton.cdiv(n_q, BM))
    fwd_kernel[grid](q, k, v, o, lse, H, n_q, n_k, LOG2E / math.sqrt(d),
                     q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
                     v.stride(0), v.stride(1), v.stride(2), o.stride(0), o.stride(1), o.stride(2),
                     CAUSAL=causal, D=d, BM=BM, BN=BN, PREC=prec)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
