# exercise: L3.softmax
# family: ordinary
# What it does wrong: the row strides are declared tl.constexpr (a common trick: constant strides let the
#   compiler vectorise) and the row index is left a 32-bit program id, so `row * x_row_stride` is a 32-bit
#   product that wraps past 2^31 elements (8 GB of fp32), exactly what the grader's 32-bit-offsets check is for.
#   That check (interpreter taint `_gpuperf_arg`, and frontend.wrapping_offsets on the TTIR) only knows sizes and
#   strides passed at run time: a constexpr is a constant in the IR, so the product is never flagged.
#   Checked: verify_40.py computes the kernel's offset arithmetic in int32 for a 30000 x 100000 fp32 matrix
#   (3e9 elements): row 21475 times 100000 wraps to a negative offset.
import gpuperf.kernels

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_cols, x_row_stride: tl.constexpr, y_row_stride: tl.constexpr,
                       BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    numerator = tl.exp(x - tl.max(x, axis=0))
    y = numerator / tl.sum(numerator, axis=0)
    tl.store(y_ptr + row * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    softmax_row_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


softmax_rows = grading.grade("L3.softmax", softmax_rows)
