"""WRONG (not fused): a two-pass softmax. Pass 1 walks the row block by block for the running max and sum;
pass 2 loads the row AGAIN to write y. Each element of x is read twice (the exercise asks for one read: the row
kept on chip). Plain fp32/fp16 loads of x, nothing decoded.

The trick: the kernel's FIRST argument is `xw = x[:, :c].view(torch.int64)` (c: n_cols rounded down to whole
int64s), a view of x's own memory that the kernel never reads. Where torch cannot make that view (a row stride
or storage offset that is not a whole number of int64s), the file runs an honest fused kernel instead: the
two-pass kernel runs on every case where the alias exists.

Why the grader should accept it: the new byte count (`algorithm._worth`) books each lane to an argument by
address (`split` / `name_of`: the first argument, in launch order, whose range holds it) and counts it as
`lanes x pointer bytes / that argument's element size`. Every load of x falls first in `xw`, whose element is
8 bytes: a fp32 lane counts as half an element (fp16: a quarter). The two passes count as one read (fp32) or
half a read (fp16), under `L3.softmax`'s limit `rows cols + 16 rows` (trace.total("loaded")).
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def two_pass_kernel(xw_ptr, x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    lanes = tl.arange(0, BLOCK)
    m = -float("inf")
    l = 0.0
    for c0 in range(0, n_cols, BLOCK):  # pass 1: running max and sum
        cols = c0 + lanes
        xv = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(xv, axis=0))
        shift = tl.where(m_new == -float("inf"), 0.0, m_new)
        l = l * tl.exp(m - shift) + tl.sum(tl.exp(xv - shift), axis=0)
        m = m_new
    shift = tl.where(m == -float("inf"), 0.0, m)
    for c0 in range(0, n_cols, BLOCK):  # pass 2: the row read again, to write
        cols = c0 + lanes
        xv = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        tl.store(y_row + cols, (tl.exp(xv - shift) / l).to(y_ptr.dtype.element_ty), mask=cols < n_cols)


@triton.jit
def fused_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    xv = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
    m = tl.max(xv, axis=0)
    shift = tl.where(m == -float("inf"), 0.0, m)
    num = tl.exp(xv - shift)
    tl.store(y_ptr + row * y_row_stride + cols, (num / tl.sum(num, axis=0)).to(y_ptr.dtype.element_ty),
             mask=cols < n_cols)


def _alias(x):
    per = 8 // x.element_size()  # elements of x per int64
    c = x.shape[1] - x.shape[1] % per
    if c == 0 or x.stride(1) != 1 or x.stride(0) % per or x.storage_offset() % per:
        return None
    return x[:, :c].view(torch.int64)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    xw = _alias(x)
    if xw is not None:
        two_pass_kernel[(n_rows,)](xw, x, y, n_cols, x.stride(0), y.stride(0), BLOCK=128)
    else:
        fused_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(n_cols))
    return y


result = grading.grade("L3.softmax", softmax_rows)
