import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl

# WRONG: a THREE-pass softmax (a pass for the max, a pass for the sum, a pass to write), the algorithm the
# online exercise forbids. Passes 1 and 2 read x through an int64 pointer (one 8-byte lane = 2 fp32 or 4 fp16
# values), and the pass count counts lanes, not bytes: 0.5 + 0.5 + 1 = 2 "reads" per element in fp32.


@triton.jit
def _decode(w, part: tl.constexpr, IS16: tl.constexpr):
    if IS16:
        return (w >> (16 * part)).to(tl.int16).to(tl.float16, bitcast=True).to(tl.float32)
    else:
        return (w >> (32 * part)).to(tl.int32).to(tl.float32, bitcast=True)


@triton.jit
def three_pass_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr,
                      ELEMS: tl.constexpr, IS16: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    lanes = tl.arange(0, BLOCK)
    groups = n_cols // ELEMS
    tail = tl.arange(0, ELEMS)
    tail_cols = groups * ELEMS + tail
    tail_mask = tail_cols < n_cols
    # pass 1: the max
    m = -float("inf")
    for g0 in range(0, groups, BLOCK):
        g = g0 + lanes
        ok = g < groups
        w = tl.load((x_row + g * ELEMS).to(tl.pointer_type(tl.int64)), mask=ok, other=0)
        for part in tl.static_range(ELEMS):
            m = tl.maximum(m, tl.max(tl.where(ok, _decode(w, part, IS16), -float("inf")), axis=0))
    xt = tl.load(x_row + tail_cols, mask=tail_mask, other=float("-inf")).to(tl.float32)
    m = tl.maximum(m, tl.max(xt, axis=0))
    shift = tl.where(m == -float("inf"), 0.0, m)
    # pass 2: the sum
    l = tl.sum(tl.exp(xt - shift), axis=0)
    for g0 in range(0, groups, BLOCK):
        g = g0 + lanes
        ok = g < groups
        w = tl.load((x_row + g * ELEMS).to(tl.pointer_type(tl.int64)), mask=ok, other=0)
        for part in tl.static_range(ELEMS):
            l += tl.sum(tl.where(ok, tl.exp(_decode(w, part, IS16) - shift), 0.0), axis=0)
    # pass 3: write
    inv_l = 1.0 / l
    for start in range(0, n_cols, BLOCK):
        mask = start + lanes < n_cols
        x = tl.load(x_row + start + lanes, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_row + start + lanes, (tl.exp(x - shift) * inv_l).to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    elems = 8 // x.element_size()
    three_pass_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block, ELEMS=elems,
                                 IS16=x.element_size() == 2)
    return y


result = grading.grade("L3.online", online_softmax)
