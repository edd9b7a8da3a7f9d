"""WRONG (lazy): not an online softmax: three passes per row. Pass 1 reads x for the max and keeps the row in a
workspace; pass 2 reads the workspace for the sum; pass 3 reads it again to write y. Round 15's 06 with a new
packing.

The trick: the workspace is an int64 buffer, written and read through int64 pointers (its own type): each lane
holds TWO fp32 values, packed with `tl.split` / bit operations and unpacked with `tl.join`.

Why the grader should accept it: today's 2931e72 counts "a pointer of the buffer's own type: one value a lane"
(`algorithm._worth`: `record[3] == pointer_bytes` -> lanes). An int64 lane of an int64 buffer is one value, but it
holds two elements of x. The packed values go through split/join (`_NOT_LANEWISE`), so the workspace is no copy
of x (`_kernel_images`) and counts as "other memory" in `_online_row_loads`: two reads of half a row each, plus
x once, make two passes, the limit of a true online softmax.
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def three_pass_kernel(x_ptr, y_ptr, ws_ptr, n_cols, x_row_stride, y_row_stride, ws_row_stride,
                      BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    ws_row = ws_ptr + row * ws_row_stride
    HALF: tl.constexpr = BLOCK // 2
    cols = tl.arange(0, BLOCK)
    pairs = tl.arange(0, HALF)
    m = -float("inf")
    for start in range(0, n_cols, BLOCK):  # pass 1: the max, and the row packed two values a lane
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        m = tl.maximum(m, tl.max(x, axis=0))
        lo, hi = tl.split(tl.reshape(x, (HALF, 2)))
        lo_bits = lo.to(tl.int32, bitcast=True).to(tl.int64) & 0xFFFFFFFF
        hi_bits = hi.to(tl.int32, bitcast=True).to(tl.int64) << 32
        tl.store(ws_row + start // 2 + pairs, lo_bits | hi_bits, mask=start + 2 * pairs < n_cols)
    l = 0.0
    for start in range(0, n_cols, BLOCK):  # pass 2: the sum, from the workspace
        mask = start + cols < n_cols
        packed = tl.load(ws_row + start // 2 + pairs, mask=start + 2 * pairs < n_cols, other=0)
        lo = (packed & 0xFFFFFFFF).to(tl.int32).to(tl.float32, bitcast=True)
        hi = (packed >> 32).to(tl.int32).to(tl.float32, bitcast=True)
        x = tl.reshape(tl.join(lo, hi), (BLOCK,))
        l += tl.sum(tl.where(mask, tl.exp(x - m), 0.0), axis=0)
    inv_l = 1.0 / l
    for start in range(0, n_cols, BLOCK):  # pass 3: from the workspace again, normalise, write
        mask = start + cols < n_cols
        packed = tl.load(ws_row + start // 2 + pairs, mask=start + 2 * pairs < n_cols, other=0)
        lo = (packed & 0xFFFFFFFF).to(tl.int32).to(tl.float32, bitcast=True)
        hi = (packed >> 32).to(tl.int32).to(tl.float32, bitcast=True)
        x = tl.reshape(tl.join(lo, hi), (BLOCK,))
        tl.store(y_row + start + cols, (tl.exp(x - m) * inv_l).to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    width = (n_cols + block) // 2 + 1  # packed pairs per row, with room for the last block
    ws = torch.empty((n_rows, width), dtype=torch.int64, device=x.device)
    three_pass_kernel[(n_rows,)](x, y, ws, n_cols, x.stride(0), y.stride(0), ws.stride(0), BLOCK=block)
    return y


result = grading.grade("L3.online", online_softmax)
