# exercise: L3.softmax
# family: escape
# What it does wrong: one program does every row, one after another (the exercise: one program per row, rows in
# parallel). A decoy kernel that zeroes y is launched first with one program per row, and the row check reads
# the most programs any launch ran.
import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def zero_kernel(y_ptr, n_cols, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    tl.store(y_ptr + row * y_row_stride + cols, tl.zeros([BLOCK], dtype=y_ptr.dtype.element_ty), mask=cols < n_cols)


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    for r in range(0, n_rows):  # one program, every row
        row = tl.zeros([], dtype=tl.int64) + r  # 64-bit row index
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
        num = tl.exp(x - tl.max(x, axis=0))
        y = num / tl.sum(num, axis=0)
        tl.store(y_ptr + row * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    zero_kernel[(n_rows,)](y, n_cols, y.stride(0), BLOCK=block)
    softmax_row_kernel[(1,)](x, y, n_rows, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


softmax_rows = grading.grade("L3.softmax", softmax_rows)
