"""WRONG (lazy): the chain is NOT fused: two launches. The first applies the first half of the operations and
writes every intermediate value to a scratch buffer in memory; the second reads them back, applies the rest and
writes out: two reads and two writes of every element, the eager chain the exercise replaces, cut at two (round
15's 05, with a new packing).

The trick: the scratch is an int64 buffer, written and read through int64 pointers (its own type), each lane
holding TWO fp32 intermediates (packed with `tl.split` and bit operations, unpacked with `tl.join`).

Why the grader should accept it: today's 2931e72 counts a lane through a pointer of the buffer's own type as one
value (`algorithm._worth`), so the scratch's n/2 lanes count n/2 loads and n/2 stores: loaded n + n/2 and stored
n/2 + n, exactly `_fused_check`'s `n + n // 2` (an odd last element is finished by the first kernel). The packing goes
through split/join, so no lane of the scratch is a copy of x.
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def first_half_kernel(x_ptr, s_ptr, out_ptr, n, scale, shift, K_OPS: tl.constexpr, FIRST: tl.constexpr,
                      BLOCK: tl.constexpr):
    HALF: tl.constexpr = BLOCK // 2
    start = tl.program_id(0).to(tl.int64) * BLOCK
    offs = start + tl.arange(0, BLOCK)
    y = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    for j in tl.static_range(FIRST):
        if j % 2 == 0:
            y = y * scale
        else:
            y = y + shift
    lo, hi = tl.split(tl.reshape(y, (HALF, 2)))
    packed = (lo.to(tl.int32, bitcast=True).to(tl.int64) & 0xFFFFFFFF) | \
        (hi.to(tl.int32, bitcast=True).to(tl.int64) << 32)
    pairs = tl.arange(0, HALF)
    full_n = n - n % 2  # whole pairs only: an odd last element is finished here
    tl.store(s_ptr + start // 2 + pairs, packed, mask=start + 2 * pairs < full_n)
    for j in tl.static_range(FIRST, K_OPS):
        if j % 2 == 0:
            y = y * scale
        else:
            y = y + shift
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=(offs >= full_n) & (offs < n))


@triton.jit
def second_half_kernel(s_ptr, out_ptr, n, scale, shift, K_OPS: tl.constexpr, FIRST: tl.constexpr,
                       BLOCK: tl.constexpr):
    HALF: tl.constexpr = BLOCK // 2
    start = tl.program_id(0).to(tl.int64) * BLOCK
    pairs = tl.arange(0, HALF)
    full_n = n - n % 2
    packed = tl.load(s_ptr + start // 2 + pairs, mask=start + 2 * pairs < full_n, other=0)
    lo = (packed & 0xFFFFFFFF).to(tl.int32).to(tl.float32, bitcast=True)
    hi = (packed >> 32).to(tl.int32).to(tl.float32, bitcast=True)
    y = tl.reshape(tl.join(lo, hi), (BLOCK,))
    for j in tl.static_range(FIRST, K_OPS):
        if j % 2 == 0:
            y = y * scale
        else:
            y = y + shift
    offs = start + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=offs < full_n)


def chain(x, k_ops, scale, shift, block_size=1024):
    n = x.numel()
    out = torch.empty_like(x)
    scratch = torch.empty(n // 2 + block_size, dtype=torch.int64, device=x.device)
    grid = (triton.cdiv(n, block_size),)
    first = k_ops // 2
    first_half_kernel[grid](x, scratch, out, n, scale, shift, K_OPS=k_ops, FIRST=first, BLOCK=block_size)
    second_half_kernel[grid](scratch, out, n, scale, shift, K_OPS=k_ops, FIRST=first, BLOCK=block_size)
    return out


result = grading.grade("L2.chain", chain)
