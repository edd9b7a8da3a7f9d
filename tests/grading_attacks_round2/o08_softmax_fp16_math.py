# exercise: L3.softmax
# family: ordinary
# why: no upcast after the load: for fp16 inputs the exponentials and the row sum are computed in fp16; correct:
#   .to(tl.float32) after the load.
import gpuperf.kernels  # noqa: F401  (switches on the interpreter without a GPU)
import math
import torch
import triton
import triton.language as tl
import gpuperf.kernels as _gk
from gpuperf import grading


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z.to(tl.float32)).to(x.dtype)
    y = num / tl.sum(num, axis=0).to(x.dtype)
    tl.store(y_ptr + row * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    softmax_row_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


softmax_rows = grading.grade("L3.softmax", softmax_rows)
