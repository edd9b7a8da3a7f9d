# WRONG/LAZY: both tile products of the forward pass (S = Q K^T and P V) made mostly off the tensor cores:
# tl.dot does one head-dimension column of Q K^T and one key of P V per block (tiles masked to one column);
# everything else is rank-1 updates computed exactly in integers (24-bit mantissas multiplied with arith.muli,
# exponents added with arith.addi, the scale 2^e built from bits).
import math
import torch, triton, triton.language as tl
from gpuperf import grading


@triton.jit
def _split(x):
    bits = x.to(tl.int32, bitcast=True)
    ex = (bits >> 23) & 0xFF
    man = bits & 0x7FFFFF
    man = tl.where(ex != 0, man | 0x800000, man)
    man = tl.where(bits < 0, -man, man)
    e = tl.maximum(ex, 1) - 150
    return man.to(tl.int64), e.to(tl.int64)


@triton.jit
def _outer(col, row):
    ma, ea = _split(col)
    mb, eb = _split(row)
    prod = ma[:, None] * mb[None, :]
    e = ea[:, None] + eb[None, :] + 1023
    return prod.to(tl.float64) * (e << 52).to(tl.float64, bitcast=True)


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale,
               D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    q_head = q_ptr + head * N_Q * D
    k_head = k_ptr + head * N_K * D
    v_head = v_ptr + head * N_K * D
    q = tl.load(q_head + rows[:, None] * D + dims[None, :], mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    m = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    q1 = tl.where(dims[None, :] == 0, q, 0.0)
    jn = tl.arange(0, BN)
    for start in range(0, N_K, BN):
        keys = start + jn
        k = tl.load(k_head + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K, other=0.0).to(tl.float32)
        v = tl.load(v_head + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K, other=0.0).to(tl.float32)
        s64 = tl.zeros((BM, BN), dtype=tl.float64)
        for dd in range(1, D):
            qc = tl.sum(tl.where(dims[None, :] == dd, q, 0.0), axis=1)
            kc = tl.sum(tl.where(dims[None, :] == dd, k, 0.0), axis=1)
            s64 += _outer(qc, kc)
        s = (s64 + tl.dot(q1, tl.trans(k), input_precision="ieee").to(tl.float64)).to(tl.float32) * scale
        s = tl.where(keys[None, :] < N_K, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        pv = tl.zeros((BM, D), dtype=tl.float64)
        for jj in range(1, BN):
            pc = tl.sum(tl.where(jn[None, :] == jj, p, 0.0), axis=1)
            vr = tl.sum(tl.where(jn[:, None] == jj, v, 0.0), axis=0)
            pv += _outer(pc, vr)
        p1 = tl.where(jn[None, :] == 0, p, 0.0)
        acc = acc * alpha[:, None] + (pv + tl.dot(p1, v, input_precision="ieee").to(tl.float64)).to(tl.float32)
        m = m_new
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
    BM, BN = 32, 32
    grid = (triton.cdiv(n_q, BM), batch * heads)
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), D=d, BM=BM, BN=BN)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
