"""WRONG (lazy) for 16-bit inputs: not an online softmax but three passes per row. Pass 1 reads x for the max and
keeps the row in a workspace of the function's own; pass 2 reads the workspace for the sum; pass 3 reads it again
to write y. (fp32 inputs take an online softmax, so only the fp16 cases see the three passes.)

The trick: the workspace is int32, two fp16 values of x packed in each 4-byte lane (`tl.split` of the row, bit
operations), read back through int32 pointers and unpacked.

Why the grader should accept it: today's `algorithm._worth` counts "a 4-byte lane where x is narrower" of the
reader's own memory as ONE value of x (`pointer_bytes == 4 and unit < 4 and name not in launch._exact and name not
in launch._in_grader: return lanes`), meant for an fp32 accumulator of fp16 values. A lane that holds two fp16
values counts as one: each of passes 2 and 3 counts as half a row, and x once plus two halves is two passes,
what a true online softmax reads.
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, ws_ptr, n_cols, x_row_stride, y_row_stride, ws_row_stride,
                   PACK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    ws_row = ws_ptr + row * ws_row_stride
    HALF: tl.constexpr = BLOCK // 2
    cols = tl.arange(0, BLOCK)
    pairs = tl.arange(0, HALF)
    if PACK:
        m = -float("inf")
        for start in range(0, n_cols, BLOCK):  # pass 1: the max; the row packed two fp16 values an int32 lane
            mask = start + cols < n_cols
            x = tl.load(x_row + start + cols, mask=mask, other=float("-inf"))
            m = tl.maximum(m, tl.max(x.to(tl.float32), axis=0))
            lo, hi = tl.split(tl.reshape(x, (HALF, 2)))
            lo_bits = lo.to(tl.int16, bitcast=True).to(tl.int32) & 0xFFFF
            hi_bits = hi.to(tl.int16, bitcast=True).to(tl.int32) << 16
            tl.store(ws_row + start // 2 + pairs, lo_bits | hi_bits, mask=start + 2 * pairs < n_cols)
        l = 0.0
        for start in range(0, n_cols, BLOCK):  # pass 2: the sum, from the workspace
            mask = start + cols < n_cols
            packed = tl.load(ws_row + start // 2 + pairs, mask=start + 2 * pairs < n_cols, other=0)
            lo = (packed & 0xFFFF).to(tl.int16).to(tl.float16, bitcast=True)
            hi = (packed >> 16).to(tl.int16).to(tl.float16, bitcast=True)
            x = tl.reshape(tl.join(lo, hi), (BLOCK,)).to(tl.float32)
            l += tl.sum(tl.where(mask, tl.exp(x - m), 0.0), axis=0)
        inv_l = 1.0 / l
        for start in range(0, n_cols, BLOCK):  # pass 3: from the workspace again, normalise, write
            mask = start + cols < n_cols
            packed = tl.load(ws_row + start // 2 + pairs, mask=start + 2 * pairs < n_cols, other=0)
            lo = (packed & 0xFFFF).to(tl.int16).to(tl.float16, bitcast=True)
            hi = (packed >> 16).to(tl.int16).to(tl.float16, bitcast=True)
            x = tl.reshape(tl.join(lo, hi), (BLOCK,)).to(tl.float32)
            tl.store(y_row + start + cols, (tl.exp(x - m) * inv_l).to(y_ptr.dtype.element_ty), mask=mask)
    else:  # fp32: an online softmax, two passes over x
        m = -float("inf")
        l = 0.0
        for start in range(0, n_cols, BLOCK):
            mask = start + cols < n_cols
            x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, axis=0))
            shift = tl.where(m_new == -float("inf"), 0.0, m_new)
            l = l * tl.exp(m - shift) + tl.sum(tl.where(mask, tl.exp(x - shift), 0.0), axis=0)
            m = m_new
        inv_l = 1.0 / l
        for start in range(0, n_cols, BLOCK):
            mask = start + cols < n_cols
            x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
            tl.store(y_row + start + cols, (tl.exp(x - m) * inv_l).to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    pack = x.element_size() == 2
    width = (n_cols + block) // 2 + 1  # packed pairs per row, with room for the last block
    ws = torch.empty((n_rows, width if pack else 1), dtype=torch.int32, device=x.device)
    softmax_kernel[(n_rows,)](x, y, ws, n_cols, x.stride(0), y.stride(0), ws.stride(0), PACK=pack, BLOCK=block)
    return y


result = grading.grade("L3.online", online_softmax)
