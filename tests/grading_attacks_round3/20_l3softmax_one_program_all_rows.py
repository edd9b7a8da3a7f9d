# exercise: L3.softmax
# family: algorithm
# What is wrong: the exercise is "fused softmax, one row per program". This kernel launches ONE program
# for the whole matrix and walks the rows in a serial loop inside it: on a GPU one SM does all the work
# (no parallelism across rows). The numbers are right (safe softmax, fp32, masks, row strides).
import gpuperf.kernels  # noqa: F401  (switches Triton to its interpreter without a GPU)
import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def softmax_all_rows_kernel(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    for row in range(0, n_rows):  # every row in this single program
        r = tl.zeros((1,), dtype=tl.int64) + row  # 64-bit row offsets
        x = tl.load(x_ptr + r * x_row_stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
        z = x - tl.max(x, axis=0)
        num = tl.exp(z)
        y = num / tl.sum(num, axis=0)
        tl.store(y_ptr + r * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    softmax_all_rows_kernel[(1,)](x, y, n_rows, n_cols, x.stride(0), y.stride(0),
                                  BLOCK=triton.next_power_of_2(n_cols))
    return y


softmax_rows = grading.grade("L3.softmax", softmax_rows)
