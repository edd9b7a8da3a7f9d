"""WRONG (lazy): two passes over K. A first kernel walks the keys for each block of queries to find each row's
max; a second kernel walks the keys again with that max fixed (P = exp(S - m), the sum and P V). The
"first pass for the row max, then a second for the sum" the L5 pass check exists to refuse.

The trick: kernel 1 stores each max as an int64 whose HIGH 32 bits are the fp32 max's bits
(`bits.to(int64) << 32`). torch copies the high halves out, `m32.copy_(packed.view(torch.int32)[1::2])`, and
kernel 2 reads m32 (bitcast back to fp32).

Why the grader should accept it: today's `Trace._torch_copied` hands each copied element the writer and lineage
of "a write at an address inside it, else (a copy of one or two bytes of a wider element, through an int8 view)
the last before it within 8 bytes". A write is recorded at its lane's first byte; the high half of an int64 lies
4 bytes past it, and the look-back is only for sources of 1 or 2 bytes (`es_s <= 2`). So m32 has no writer,
kernel 2's reads of it link to nothing (`through_launches`), and each kernel's programs read K once each:
`_one_pass_check` sees one pass.
"""
import gpuperf.kernels
from gpuperf import grading
import math
import torch
import triton
import triton.language as tl


@triton.jit
def max_kernel(q_ptr, k_ptr, packed_ptr, N_Q, N_K, scale, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    for n0 in range(0, N_K, BLOCK_N):  # pass 1: the row max
        keys = n0 + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :],
                    mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        s = tl.where(keys[None, :] < N_K, s, float("-inf"))
        m = tl.maximum(m, tl.max(s, axis=1))
    bits = m.to(tl.int32, bitcast=True).to(tl.int64) << 32  # the max's bits in the high half
    tl.store(packed_ptr + head * N_Q + rows, bits, mask=rows < N_Q)


@triton.jit
def sum_pv_kernel(q_ptr, k_ptr, v_ptr, m_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, HEAD_DIM: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                mask=rows[:, None] < N_Q, other=0.0)
    m = tl.load(m_ptr + head * N_Q + rows, mask=rows < N_Q, other=0).to(tl.float32, bitcast=True)
    m = tl.where(rows < N_Q, m, 0.0)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for n0 in range(0, N_K, BLOCK_N):  # pass 2: the sum and P V with the max fixed
        keys = n0 + tl.arange(0, BLOCK_N)
        kv = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
        k = tl.load(k_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + kv, mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        p = tl.where(keys[None, :] < N_K, tl.exp(s - m[:, None]), 0.0)
        l += tl.sum(p, axis=1)
        acc += tl.dot(p.to(v.dtype), v, input_precision="ieee")
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
    packed = torch.empty(batch * heads * n_q, dtype=torch.int64, device=q.device)
    m32 = torch.empty(batch * heads * n_q, dtype=torch.int32, device=q.device)
    bm, bn = 64, 32
    grid = (triton.cdiv(n_q, bm), batch * heads)
    scale = 1.0 / math.sqrt(d)
    max_kernel[grid](q, k, packed, n_q, n_k, scale, HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn)
    m32.copy_(packed.view(torch.int32)[1::2])  # the high halves: each row's max
    sum_pv_kernel[grid](q, k, v, m32, o, lse, n_q, n_k, scale, HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn)
    return o, lse


result = grading.grade("L5.forward", attention_forward)
