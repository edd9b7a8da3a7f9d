# what: the row index narrowed to int16: rows past 32767 wrap to negative rows
import torch
import triton
import triton.language as tl
import gpuperf.kernels
from gpuperf import grading

@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int16).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    # Padding lanes read -inf: they do not change the max and add exp(-inf) = 0 to the sum.
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf"))
    x = x.to(tl.float32)
    shifted = x - tl.max(x, axis=0)  # the largest exponent is 0: no overflow
    numerator = tl.exp(shifted)
    y = numerator / tl.sum(numerator, axis=0)
    tl.store(y_ptr + row * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    softmax_row_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


result = grading.grade("L3.softmax", softmax_rows)
