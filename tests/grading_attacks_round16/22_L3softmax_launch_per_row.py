"""WRONG (lazy): the rows one after another, a launch per row with a grid of ONE program (the row's offsets
arguments, computed on the host): no two rows ever run at the same time. L3 gives every row its own program ("The exercise gives every row
its own program (a grid of one program per row), so the rows are processed at the same time").

Why the grader should accept it: as 20 and 21, the programs that write y are counted launch by launch.
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, x_off, y_off, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    # Padding lanes read -inf: they do not change the max and add exp(-inf) = 0 to the sum.
    x = tl.load(x_ptr + x_off + cols, mask=mask, other=float("-inf"))
    x = x.to(tl.float32)
    shifted = x - tl.max(x, axis=0)  # the largest exponent is 0: no overflow
    numerator = tl.exp(shifted)
    y = numerator / tl.sum(numerator, axis=0)
    tl.store(y_ptr + y_off + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    for row in range(n_rows):  # one row per launch
        softmax_row_kernel[(1,)](x, y, row * x.stride(0), row * y.stride(0), n_cols, BLOCK=block)
    return y


result = grading.grade("L3.softmax", softmax_rows)
