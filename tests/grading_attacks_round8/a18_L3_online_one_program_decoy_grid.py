# exercise: L3.online
# family: escape
# What it does wrong: one program walks every row, one after another (the exercise: one program per row). A decoy
# kernel that zeroes y is launched first with one program per row; the row check reads the most programs any
# launch ran.
import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def zero_kernel(y_ptr, n_cols, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    for start in range(0, n_cols, BLOCK):
        tl.store(y_ptr + row * y_row_stride + start + cols, tl.zeros([BLOCK], dtype=y_ptr.dtype.element_ty),
                 mask=start + cols < n_cols)


@triton.jit
def online_softmax_kernel(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for r in range(0, n_rows):  # one program, every row
        row = tl.zeros([], dtype=tl.int64) + r
        x_row = x_ptr + row * x_row_stride
        y_row = y_ptr + row * y_row_stride
        m = tl.full([], -float("inf"), tl.float32)
        l = tl.zeros([], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, axis=0))
            shift = tl.where(m_new == -float("inf"), 0.0, m_new)
            l = l * tl.exp(m - shift) + tl.sum(tl.exp(x - shift), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            mask = start + cols < n_cols
            x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
            tl.store(y_row + start + cols, (tl.exp(x - m) / l).to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    zero_kernel[(n_rows,)](y, n_cols, y.stride(0), BLOCK=block)
    online_softmax_kernel[(1,)](x, y, n_rows, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


online_softmax = grading.grade("L3.online", online_softmax)
