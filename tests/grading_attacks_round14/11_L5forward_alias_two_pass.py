"""WRONG (two passes over K): the safe-softmax forward split in two kernels, not FlashAttention's online
softmax. Kernel 1 walks the keys for each row's max m (stored, one value per row); kernel 2 walks the keys AGAIN
for l = sum exp(s - m) and O = sum exp(s - m) V / l. K is read twice per block of queries (L5.forward's
`_one_pass_check`: "a first pass for the max, then a second for the sum, reads K twice, in one kernel or in
two").

The trick: kernel 2's FIRST argument is `kw = k.view(torch.int16)` (fp16 k: `torch.int8`), a view of k's own
memory with a smaller element (always possible when the last dimension is contiguous), never read.

Why the grader should accept it: a load's lanes are booked to the FIRST argument whose address range holds them
(`algorithm.split` / `name_of`), so every load kernel 2 makes of k is booked to `kw`. `_rows_in` recognises
an argument as k only where `_same_memory` holds (same first byte AND same element size) or it is an Image:
`kw` is neither, so kernel 2's loads of K count for nothing. `_uncovered` is satisfied by kernel 1, and the
lineage count (`through_launches`: kernel 2 reads kernel 1's row maxima) adds kernel 1's one pass: K once.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def max_kernel(q_ptr, k_ptr, m_ptr, N_Q, N_K, scale, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    for start in range(0, N_K, BLOCK_N):  # pass 1 over K: the row max
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        s = tl.where(keys[None, :] < N_K, s, float("-inf"))
        m = tl.maximum(m, tl.max(s, axis=1))
    tl.store(m_ptr + head * N_Q + rows, m, mask=rows < N_Q)


@triton.jit
def out_kernel(kw_ptr, q_ptr, k_ptr, v_ptr, m_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, HEAD_DIM: tl.constexpr,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                mask=rows[:, None] < N_Q, other=0.0)
    m = tl.load(m_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start in range(0, N_K, BLOCK_N):  # pass 2 over K: the sum and the output, with the max of pass 1
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        s = tl.where(keys[None, :] < N_K, s, float("-inf"))
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
    max_kernel[grid](q, k, m, n_q, n_k, scale, HEAD_DIM=d, BLOCK_M=32, BLOCK_N=32)
    kw = k.view(torch.int16 if k.element_size() == 4 else torch.int8)
    out_kernel[grid](kw, q, k, v, m, o, lse, n_q, n_k, scale, HEAD_DIM=d, BLOCK_M=32, BLOCK_N=32)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
