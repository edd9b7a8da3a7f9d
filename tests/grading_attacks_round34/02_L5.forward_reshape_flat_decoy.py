# WRONG (cheat): the forward with S = Q K^T and P V made element by element: both operands broadcast to 3-D,
# then reshaped to flat 2-D (R*T, C) tiles (merging a broadcast dimension with a real one) before the multiply,
# tl.sum over C, reshape back. Two tl.dot run every block on decoys (the loaded K and V tiles with the halves of
# their head dimension interleaved, in registers: no extra loads): each decoy's dot result is added and the same decoy made element by element subtracted, so
# every perturbation of the dots' products reaches O while O is computed without them.
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def _flat(x, y, R: tl.constexpr, T: tl.constexpr, C: tl.constexpr):
    # x (R, C), y (T, C) -> x @ y^T (R, T), element by element
    x2 = tl.reshape(tl.broadcast_to(x.to(tl.float32)[:, None, :], (R, T, C)), (R * T, C))
    y2 = tl.reshape(tl.broadcast_to(y.to(tl.float32)[None, :, :], (R, T, C)), (R * T, C))
    return tl.reshape(tl.sum(x2 * y2, axis=1), (R, T))


@triton.jit
def _perm(x, R: tl.constexpr, C: tl.constexpr):
    return tl.reshape(tl.permute(tl.reshape(x, (R, 2, C // 2)), (0, 2, 1)), (R, C))


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    q = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start in range(0, N_K, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        kr = _perm(k, BLOCK_N, HEAD_DIM)  # decoys: the head dimension's halves interleaved, in registers
        vr = _perm(v, BLOCK_N, HEAD_DIM)
        d1 = tl.dot(q, tl.trans(kr), input_precision=PRECISION)
        s = (_flat(q, k, BLOCK_M, BLOCK_N, HEAD_DIM) + (d1 - _flat(q, kr, BLOCK_M, BLOCK_N, HEAD_DIM))) * scale
        s = tl.where(keys[None, :] < N_K, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        p16 = p.to(v.dtype)
        d2 = tl.dot(p16, vr, input_precision=PRECISION)
        pv = _flat(p16, tl.trans(v), BLOCK_M, HEAD_DIM, BLOCK_N) + \
            (d2 - _flat(p16, tl.trans(vr), BLOCK_M, HEAD_DIM, BLOCK_N))
        acc = acc * alpha[:, None] + pv
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             o.to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    assert not causal
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    BM, BN = 16, 16
    grid = (triton.cdiv(n_q, BM), batch * heads)
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(head_dim), HEAD_DIM=head_dim,
                     BLOCK_M=BM, BLOCK_N=BN, PRECISION=precision)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
