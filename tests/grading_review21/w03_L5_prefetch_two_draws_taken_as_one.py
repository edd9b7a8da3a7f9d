"""WRONG (a race between programs): a prefetching scheduler that takes its items in pairs with two draws and
works on the first ticket and the one after it (``cur`` and ``cur + 1``), as if the two draws were one and the
next. Under the interpreter the first program draws every ticket, so the second draw is ``cur + 1`` there; on a GPU
the draws of programs interleave, and the second value belongs to nobody while ``cur + 1`` is another program's."""
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def prefetch_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, counter_ptr, N_Q, N_K, N_HEADS, scale,
                            CAUSAL: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                            PREC: tl.constexpr):
    n_blocks = tl.cdiv(N_Q, BM)
    total = n_blocks * N_HEADS
    cur = tl.atomic_add(counter_ptr, 1)  # the first of a pair of items
    tl.atomic_add(counter_ptr, 1)  # the second, taken to be cur + 1
    while cur < total:
        nxt = tl.atomic_add(counter_ptr, 1)  # the next pair, fetched first
        tl.atomic_add(counter_ptr, 1)
        for pick in range(2):
            item = cur + pick
            if item < total:
                block_m = item % n_blocks
                head = (item // n_blocks).to(tl.int64)
                rows = block_m * BM + tl.arange(0, BM)
                dims = tl.arange(0, D)
                q = tl.load(q_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], mask=rows[:, None] < N_Q,
                            other=0.0)
                m = tl.full((BM,), float("-inf"), dtype=tl.float32)
                l = tl.zeros((BM,), dtype=tl.float32)
                acc = tl.zeros((BM, D), dtype=tl.float32)
                end = N_K
                if CAUSAL:  # key blocks right of this query block's last row are all masked: skip them
                    end = tl.minimum(N_K, (block_m + 1) * BM)
                for start in range(0, end, BN):
                    keys = start + tl.arange(0, BN)
                    k = tl.load(k_ptr + head * N_K * D + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K,
                                other=0.0)
                    v = tl.load(v_ptr + head * N_K * D + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K,
                                other=0.0)
                    s = tl.dot(q, tl.trans(k), input_precision=PREC) * scale
                    visible = keys[None, :] < N_K
                    if CAUSAL:
                        visible = visible & (keys[None, :] <= rows[:, None])
                    s = tl.where(visible, s, float("-inf"))
                    m_new = tl.maximum(m, tl.max(s, axis=1))
                    shift = tl.where(m_new == float("-inf"), 0.0, m_new)
                    alpha = tl.exp(m - shift)
                    p = tl.exp(s - shift[:, None])
                    l = l * alpha + tl.sum(p, axis=1)
                    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PREC)
                    m = m_new
                o = acc / l[:, None]
                tl.store(o_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], o.to(o_ptr.dtype.element_ty),
                         mask=rows[:, None] < N_Q)
                tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)
        cur = nxt


def attention_forward(q, k, v, causal=False):
    B, H, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((B, H, n_q), dtype=torch.float32, device=q.device)
    counter = torch.zeros(1, dtype=torch.int32, device=q.device)
    prec = "ieee" if q.dtype == torch.float32 else "tf32"
    grid = (min(triton.cdiv(triton.cdiv(n_q, 32) * B * H, 2), 132),)
    prefetch_attention_kernel[grid](q, k, v, o, lse, counter, n_q, n_k, B * H, 1.0 / math.sqrt(d), CAUSAL=causal,
                                  D=d, BM=32, BN=32, PREC=prec)
    return o, lse


result = grading.grade("L5.causal", attention_forward)
