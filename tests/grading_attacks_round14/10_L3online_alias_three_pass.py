"""WRONG (three passes): an "online" softmax that is the safe three-pass softmax: pass 1 walks the row for the
max, pass 2 walks it again for the sum, pass 3 walks it a third time to write. Each element of x is read three
times (the exercise: twice, the running max and sum in one pass). Plain loads of x in blocks of the given size.

The trick (as 09): the kernel's FIRST argument is `xw = x[:, :c].view(torch.int64)`, a view of x's own memory
that the kernel never reads. Where torch cannot make that view (a row stride or offset that is not a whole number
of int64s) the file runs the honest two-pass online kernel; the three-pass kernel runs wherever the alias exists.

Why the grader should accept it: the byte count (`algorithm._worth`) books each lane to the FIRST argument whose
address range holds it (`split` / `name_of`) and counts `lanes x pointer bytes / that argument's element
size`: a fp32 lane of x counts as half an element of `xw` (fp16: a quarter). `_online_row_loads` does not see
`xw` as x (`_same_memory` wants the same element size), so the loads go to "workspace" at half weight: three
passes count 1.5 reads (fp16: 0.75), under the limit `2 rows cols + rows block`.
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def three_pass_kernel(xw_ptr, x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    cols = tl.arange(0, BLOCK)
    m = -float("inf")
    for start in range(0, n_cols, BLOCK):  # pass 1: the max
        xv = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=-float("inf")).to(tl.float32)
        m = tl.maximum(m, tl.max(xv, axis=0))
    shift = tl.where(m == -float("inf"), 0.0, m)
    l = 0.0
    for start in range(0, n_cols, BLOCK):  # pass 2: the sum
        xv = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=-float("inf")).to(tl.float32)
        l += tl.sum(tl.exp(xv - shift), axis=0)
    for start in range(0, n_cols, BLOCK):  # pass 3: write
        xv = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=-float("inf")).to(tl.float32)
        tl.store(y_row + start + cols, (tl.exp(xv - shift) / l).to(y_ptr.dtype.element_ty),
                 mask=start + cols < n_cols)


@triton.jit
def online_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    cols = tl.arange(0, BLOCK)
    m = -float("inf")
    l = 0.0
    for start in range(0, n_cols, BLOCK):
        xv = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(xv, axis=0))
        shift = tl.where(m_new == -float("inf"), 0.0, m_new)
        l = l * tl.exp(m - shift) + tl.sum(tl.exp(xv - shift), axis=0)
        m = m_new
    shift = tl.where(m == -float("inf"), 0.0, m)
    for start in range(0, n_cols, BLOCK):
        xv = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=-float("inf")).to(tl.float32)
        tl.store(y_row + start + cols, (tl.exp(xv - shift) / l).to(y_ptr.dtype.element_ty),
                 mask=start + cols < n_cols)


def _alias(x):
    per = 8 // x.element_size()  # elements of x per int64
    c = x.shape[1] - x.shape[1] % per
    if c == 0 or x.stride(1) != 1 or x.stride(0) % per or x.storage_offset() % per:
        return None
    return x[:, :c].view(torch.int64)


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    xw = _alias(x)
    if xw is not None:
        three_pass_kernel[(n_rows,)](xw, x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    else:
        online_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


result = grading.grade("L3.online", online_softmax)
