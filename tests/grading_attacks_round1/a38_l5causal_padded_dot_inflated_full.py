# exercise: L5.causal
# family: cheat
# why: Causal kernel that visits every key block (no skipping). It hides from the block-skip check twice: the score dot runs on a head dimension zero-padded to 2d (so no tl.dot has shape (BM, d, BN), the shape the check reads the block sizes from), and when called with causal=False it runs the kernel twice (doubling the full run's dots and loads, so the causal/full ratios fall to about 0.5). A correct solution stops the key loop at the diagonal.
# expect: ACCEPTED if the check compares against the reader-controlled full run
import _common; _common.setup()
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    pdims = tl.arange(0, 2 * HEAD_DIM)  # zero-padded head dimension for the score dot
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + pdims[None, :],
                mask=(rows[:, None] < N_Q) & (pdims[None, :] < HEAD_DIM), other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start in range(0, N_K, BLOCK_N):  # every key block, causal or not
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + pdims[None, :],
                    mask=(keys[:, None] < N_K) & (pdims[None, :] < HEAD_DIM), other=0.0)
        v = tl.load(v_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m = m_new
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             (acc / l[:, None]).to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(n_q, 32), batch * heads)
    for _ in range(1 if causal else 2):  # the full run twice: inflates the counters it is compared with
        fwd_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal, HEAD_DIM=d, BLOCK_M=32,
                         BLOCK_N=32, PRECISION=precision)
    return o, lse


attention_forward = grading.grade("L5.causal", attention_forward)
