# exercise: L5.forward
# family: escape
# What it does wrong: not online: a first pass over all the keys for the row max, a second pass for the sum
# and the output with that max (K read twice per block of queries). Hidden by walking a clone of K (both
# passes) and making one token load of the grader's k: the one-pass check counts the loads of the grader's k
# only, and only asks that k be loaded at all.
import gpuperf.kernels  # noqa: F401

import math

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def _fwd(q_ptr, k_ptr, kc_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr,
         D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, PREC: tl.constexpr):
    bm = tl.program_id(0).to(tl.int64)
    bh = tl.program_id(1).to(tl.int64)
    rows = bm * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + bh * N_Q * D + rows[:, None] * D + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    token = tl.load(k_ptr + dims)  # key 0 of head 0 from the grader's k: "k was loaded"
    m = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32) + 0.0 * tl.sum(token.to(tl.float32))
    for start in range(0, N_K, BN):  # pass 1: the row max
        keys = (start + tl.arange(0, BN)).to(tl.int64)
        k = tl.load(kc_ptr + bh * N_K * D + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K,
                    other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PREC) * scale
        s = tl.where(keys[None, :] < N_K, s, float("-inf"))
        m = tl.maximum(m, tl.max(s, axis=1))
    for start in range(0, N_K, BN):  # pass 2: the sum and the output, with the final max
        keys = (start + tl.arange(0, BN)).to(tl.int64)
        k = tl.load(kc_ptr + bh * N_K * D + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K,
                    other=0.0)
        v = tl.load(v_ptr + bh * N_K * D + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K,
                    other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PREC) * scale
        s = tl.where(keys[None, :] < N_K, s, float("-inf"))
        p = tl.exp(s - m[:, None])
        l += tl.sum(p, axis=1)
        acc += tl.dot(p.to(v.dtype), v, input_precision=PREC)
    tl.store(o_ptr + bh * N_Q * D + rows[:, None] * D + dims[None, :], (acc / l[:, None]).to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + bh * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((B, H, n_q), dtype=torch.float32, device=q.device)
    prec = "ieee" if q.dtype == torch.float32 else "tf32"
    _fwd[(triton.cdiv(n_q, 32), B * H)](q, k, k.clone(), v, o, lse, n_q, n_k, 1.0 / math.sqrt(d),
                                        CAUSAL=causal, D=d, BM=32, BN=32, PREC=prec)
    return o, lse


attention_forward = grading.grade("L5.forward", attention_forward)
