# exercise: L3.online
# family: algorithm
# What it does wrong: no running max and no rescale: pass 1 fixes the shift once (the max of the first block
# that holds a finite value) and sums exp(x - shift) in float64, whose range (exp up to e^709) hides the overflow
# the running max is there to prevent; pass 2 writes exp(x - shift) / l. It is the "shift by any value but the
# max" softmax the lab warns against, with fp64 registers: a row whose values rise more than ~709 above its first
# block (or fall ~745 below it) overflows to inf / underflows to 0 (NaN or all-zero rows).
import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def online_softmax_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    cols = tl.arange(0, BLOCK)
    c = tl.full([], -float("inf"), tl.float64)  # the fixed shift, set once
    l = tl.zeros([], dtype=tl.float64)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf")).to(tl.float64)
        c = tl.where(c == -float("inf"), tl.max(x, axis=0), c)  # never changed once finite: no rescale
        shift = tl.where(c == -float("inf"), 0.0, c)
        l += tl.sum(tl.exp(x - shift), axis=0)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float64)
        tl.store(y_row + start + cols, (tl.exp(x - c) / l).to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    online_softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


online_softmax = grading.grade("L3.online", online_softmax)
