# exercise: L5.forward
# family: honest
# What it does: h03 with one change: the key index of the loop, start + tl.arange(0, BLOCK_N), stays int32
# (as in Triton's tutorials) and is multiplied by the key stride given at run time. The program id's row
# index is widened to int64 as the grader asks. The key index is not made from the program id.
import gpuperf.kernels  # noqa: F401

import math

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def _fwd(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, qk_scale_log2,
         sqb, sqh, sqn, skb, skh, skn, svb, svh, svn, H,
         D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    bm = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    b = (bh // H).to(tl.int64)
    h = (bh % H).to(tl.int64)
    rows = (bm * BM + tl.arange(0, BM)).to(tl.int64)
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + b * sqb + h * sqh + rows[:, None] * sqn + dims[None, :], mask=rows[:, None] < N_Q,
                other=0.0)
    m = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    for start in range(0, N_K, BN):
        keys = start + tl.arange(0, BN)  # int32: the key index, not made from the program id
        kt = tl.load(k_ptr + b * skb + h * skh + keys[None, :] * skn + dims[:, None], mask=keys[None, :] < N_K,
                     other=0.0)  # K^T loaded directly as a (D, BN) block
        v = tl.load(v_ptr + b * svb + h * svh + keys[:, None] * svn + dims[None, :], mask=keys[:, None] < N_K,
                    other=0.0)
        s = tl.dot(q, kt, input_precision=PREC) * qk_scale_log2  # scores in base-2 units
        s = tl.where(keys[None, :] < N_K, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp2(m - m_new)
        p = tl.exp2(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PREC)
        m = m_new
    tl.store(o_ptr + bh * N_Q * D + rows[:, None] * D + dims[None, :], (acc / l[:, None]).to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + bh * N_Q + rows, (m + tl.log2(l)) * 0.6931471805599453, mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    o = torch.empty((B, H, n_q, d), dtype=q.dtype, device=q.device)
    lse = torch.empty((B, H, n_q), dtype=torch.float32, device=q.device)
    prec = "ieee" if q.dtype == torch.float32 else "tf32"
    bm = 32
    _fwd[(triton.cdiv(n_q, bm), B * H)](q, k, v, o, lse, n_q, n_k, 1.4426950408889634 / math.sqrt(d),
                                       q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
                                       v.stride(0), v.stride(1), v.stride(2), H, D=d, BM=bm, BN=16, PREC=prec)
    return o, lse


attention_forward = grading.grade("L5.forward", attention_forward)
