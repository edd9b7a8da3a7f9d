"""WRONG (lazy): the chain is NOT fused. Two launches: the first applies the first half of the operations and
writes every intermediate value to a scratch tensor in memory; the second reads them back, applies the rest and
writes out. That is two reads and two writes of every element (in bytes: 2x), the "kernel per operation" shape
the exercise replaces (round 8's a19), cut at two.

The trick: the scratch tensor is `torch.empty(..., dtype=torch.float64)` (int64 for... any 8-byte dtype), and
both kernels store and load the fp32/fp16 intermediates through a pointer cast to x's element type.

Why the grader should accept it: `_fused_check` compares `trace.total("loaded")` and `trace.total("stored")`
with `n + n // 2` elements, and `algorithm._worth` counts a load or store in elements of the tensor its lanes
are booked to: the bytes divided by 8 for the float64 scratch. So the 4n (fp32) bytes of intermediates count
n / 2 elements: loaded = n + n/2, stored = n/2 + n, exactly the limit (fp16: n/4). The elements of the tail
(n mod 2 or 4) skip the scratch, so that no rounding passes the limit. The README promises counts "in bytes".
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def first_half_kernel(x_ptr, tmp_ptr, n_first, scale, shift, K_FIRST: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_first
    y = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    for j in tl.static_range(K_FIRST):
        if j % 2 == 0:
            y = y * scale
        else:
            y = y + shift
    tmp = tmp_ptr.to(tl.pointer_type(x_ptr.dtype.element_ty))  # the intermediate in x's dtype, in a wide buffer
    tl.store(tmp + offsets, y.to(x_ptr.dtype.element_ty), mask=mask)


@triton.jit
def second_half_kernel(x_ptr, tmp_ptr, out_ptr, n_first, n_elements, scale, shift, K_FIRST: tl.constexpr,
                       K_OPS: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tmp = tmp_ptr.to(tl.pointer_type(x_ptr.dtype.element_ty))
    from_tmp = offsets < n_first
    tail = (offsets >= n_first) & (offsets < n_elements)
    y = tl.load(tmp + offsets, mask=from_tmp, other=0.0).to(tl.float32)
    t = tl.load(x_ptr + offsets, mask=tail, other=0.0).to(tl.float32)  # the few tail elements: straight from x
    for j in tl.static_range(K_FIRST):
        if j % 2 == 0:
            t = t * scale
        else:
            t = t + shift
    t = t.to(x_ptr.dtype.element_ty).to(tl.float32)
    y = tl.where(from_tmp, y, t)
    for j in tl.static_range(K_FIRST, K_OPS):
        if j % 2 == 0:
            y = y * scale
        else:
            y = y + shift
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=offsets < n_elements)


def chain(x, k_ops, scale, shift, block_size=1024):
    out = torch.empty_like(x)
    n = x.numel()
    per = 8 // x.element_size()  # x's elements per float64
    n_first = n - n % per
    k_first = k_ops // 2
    tmp = torch.empty(max(1, n_first // per), dtype=torch.float64, device=x.device)
    grid = (triton.cdiv(n, block_size),)
    if n_first:
        first_half_kernel[(triton.cdiv(n_first, block_size),)](x, tmp, n_first, scale, shift, K_FIRST=k_first,
                                                               BLOCK=block_size)
    second_half_kernel[grid](x, tmp, out, n_first, n, scale, shift, K_FIRST=k_first, K_OPS=k_ops,
                             BLOCK=block_size)
    return out


result = grading.grade("L2.chain", chain)
