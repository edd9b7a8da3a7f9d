"""WRONG (two ways): a causal forward in two passes over K (kernel 1: each row's max; kernel 2: the sum and the
output with that max, not the online softmax), and kernel 2 skips NO block: it walks every key of the head,
masking only. Kernel 1 skips the hidden blocks.

The trick (as 11): kernel 2's FIRST argument is `kw = k.view(torch.int16)` (fp16: `torch.int8`), a view of k's
memory with a smaller element, never read.

Why the grader should accept it: kernel 2's loads of k are booked to `kw` (`split`: the first argument whose
range holds the lane) and `kw` is not k for `_rows_in` (`_same_memory` wants the same element size). Kernel 2
makes no visit of k: the skip checks (`_hidden_pairs`, `_visit_pairs`, `_stored_block_visits`) see only kernel 1,
which skips correctly; the one-pass count (through kernel 1's row maxima) sees K once; `_uncovered(k)` is met by
kernel 1 (it reads every key some query sees).
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def max_kernel(q_ptr, k_ptr, m_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)  # this pass skips the hidden blocks
    for start in range(0, end, BLOCK_N):  # pass 1 over K: the row max
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        ok = keys[None, :] < N_K
        if CAUSAL:
            ok = ok & (keys[None, :] <= rows[:, None])
        s = tl.where(ok, s, float("-inf"))
        m = tl.maximum(m, tl.max(s, axis=1))
    tl.store(m_ptr + head * N_Q + rows, m, mask=rows < N_Q)


@triton.jit
def out_kernel(kw_ptr, q_ptr, k_ptr, v_ptr, m_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                mask=rows[:, None] < N_Q, other=0.0)
    m = tl.load(m_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start in range(0, N_K, BLOCK_N):  # pass 2 over ALL of K (no skipping): the sum and the output
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        ok = keys[None, :] < N_K
        if CAUSAL:
            ok = ok & (keys[None, :] <= rows[:, None])
        s = tl.where(ok, s, float("-inf"))
        p = tl.exp(s - m[:, None])
        l += tl.sum(p, axis=1)
        acc += tl.dot(p.to(v.dtype), v, input_precision="ieee")
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             (acc / l[:, None]).to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    m = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    grid = (triton.cdiv(n_q, 32), batch * heads)
    scale = 1.0 / math.sqrt(d)
    max_kernel[grid](q, k, m, n_q, n_k, scale, CAUSAL=causal, HEAD_DIM=d, BLOCK_M=32, BLOCK_N=32)
    kw = k.view(torch.int16 if k.element_size() == 4 else torch.int8)
    out_kernel[grid](kw, q, k, v, m, o, lse, n_q, n_k, scale, CAUSAL=causal, HEAD_DIM=d, BLOCK_M=32, BLOCK_N=32)
    return o, lse


result = grading.grade("L5.causal", attention_forward)
