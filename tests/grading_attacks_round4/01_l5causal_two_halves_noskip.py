# exercise: L5.causal
# family: algorithm
# What it does wrong: the causal forward never skips a key block (every program walks all N_k keys,
# the mask alone hides the future). Each program owns 64 queries but loads them as two 32-row halves
# (two running states sharing each K/V block): the grader takes BLOCK_M from the shape of q's loads
# (32) and so expects half the programs' worth of key blocks, which the unskipped walk fits under.
import gpuperf.kernels  # first: switches Triton to its CPU interpreter without a GPU
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def _half_update(q, k, v, rows, keys, N_K, m, l, acc, scale, CAUSAL: tl.constexpr):
    s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
    visible = keys[None, :] < N_K
    if CAUSAL:
        visible = visible & (keys[None, :] <= rows[:, None])
    s = tl.where(visible, s, float("-inf"))
    m_new = tl.maximum(m, tl.max(s, axis=1))
    alpha = tl.exp(m - m_new)
    p = tl.exp(s - m_new[:, None])
    l = l * alpha + tl.sum(p, axis=1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
    return m_new, l, acc


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr,
               HEAD_DIM: tl.constexpr, HALF: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    head = tl.program_id(1).to(tl.int64)
    rows_a = pid * (2 * HALF) + tl.arange(0, HALF)
    rows_b = rows_a + HALF
    dims = tl.arange(0, HEAD_DIM)
    qh = q_ptr + head * N_Q * HEAD_DIM
    kh = k_ptr + head * N_K * HEAD_DIM
    vh = v_ptr + head * N_K * HEAD_DIM
    qa = tl.load(qh + rows_a[:, None] * HEAD_DIM + dims[None, :], mask=rows_a[:, None] < N_Q, other=0.0)
    qb = tl.load(qh + rows_b[:, None] * HEAD_DIM + dims[None, :], mask=rows_b[:, None] < N_Q, other=0.0)
    ma = tl.full((HALF,), float("-inf"), tl.float32)
    mb = tl.full((HALF,), float("-inf"), tl.float32)
    la = tl.zeros((HALF,), tl.float32)
    lb = tl.zeros((HALF,), tl.float32)
    acca = tl.zeros((HALF, HEAD_DIM), tl.float32)
    accb = tl.zeros((HALF, HEAD_DIM), tl.float32)
    for start in range(0, N_K, BLOCK_N):  # no block skipping: every key block, always
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(kh + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(vh + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        ma, la, acca = _half_update(qa, k, v, rows_a, keys, N_K, ma, la, acca, scale, CAUSAL)
        mb, lb, accb = _half_update(qb, k, v, rows_b, keys, N_K, mb, lb, accb, scale, CAUSAL)
    oh = o_ptr + head * N_Q * HEAD_DIM
    tl.store(oh + rows_a[:, None] * HEAD_DIM + dims[None, :], (acca / la[:, None]).to(o_ptr.dtype.element_ty),
             mask=rows_a[:, None] < N_Q)
    tl.store(oh + rows_b[:, None] * HEAD_DIM + dims[None, :], (accb / lb[:, None]).to(o_ptr.dtype.element_ty),
             mask=rows_b[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows_a, ma + tl.log(la), mask=rows_a < N_Q)
    tl.store(lse_ptr + head * N_Q + rows_b, mb + tl.log(lb), mask=rows_b < N_Q)


def attention_forward(q, k, v, causal=False):
    b, h, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((b, h, n_q), dtype=torch.float32, device=q.device)
    half = 32
    grid = (triton.cdiv(n_q, 2 * half), b * h)
    fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, HEAD_DIM=d, HALF=half,
                     BLOCK_N=32)
    return o, lse


attention_forward = grading.grade("L5.causal", attention_forward)
