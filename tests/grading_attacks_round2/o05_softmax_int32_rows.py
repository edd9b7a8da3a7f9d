# exercise: L3.softmax
# family: ordinary
# why: the row offset row * stride is computed in 32 bits (program_id is int32): past 2^31 elements of x (8 GB of
#   fp32, e.g. 32768 rows of 65536) it wraps and reads another row; the course's kernel widens the row index to
#   int64 first.
import gpuperf.kernels  # noqa: F401  (switches on the interpreter without a GPU)
import math
import torch
import triton
import triton.language as tl
import gpuperf.kernels as _gk
from gpuperf import grading


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    softmax_row_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


softmax_rows = grading.grade("L3.softmax", softmax_rows)
