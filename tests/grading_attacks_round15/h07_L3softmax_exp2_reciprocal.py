"""HONEST: the course's fused softmax (one row per program, the row kept on chip, one read and one write), written
with two common fast-math habits: `tl.math.exp2(shifted * log2(e))` instead of `tl.exp`, and one reciprocal of the
sum multiplied in (`numerator * (1 / sum)`) instead of a division per element.

Expected: accepted. This checks the softmax error bound against those roundings (each ~1 ulp, times the shifted
value's size for exp2): the rows here are shifted far (+-800) with late maxima.
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf"))
    x = x.to(tl.float32)
    shifted = x - tl.max(x, axis=0)
    numerator = tl.math.exp2(shifted * 1.4426950408889634)
    y = numerator * (1.0 / tl.sum(numerator, axis=0))
    tl.store(y_ptr + row * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    softmax_row_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


result = grading.grade("L3.softmax", softmax_rows)
