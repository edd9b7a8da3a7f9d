# exercise: L3.softmax
# family: ordinary
# What it does wrong: launches one program per row on the grid's SECOND axis (grid = (1, n_rows),
#   row = tl.program_id(1)). CUDA caps gridDim.y (and z) at 65535, so for more than 65535 rows (a batch of
#   sequences flattened into rows: 64 x 2048 = 131072) the launch fails on every NVIDIA GPU; the interpreter
#   has no such limit and the grader's matrices have at most 7 rows on a CPU (128 on a GPU).
#   Checked: CUDA Programming Guide, "Maximum y- or z-dimension of a grid of thread blocks: 65535"
#   (Technical Specifications table); the kernel itself is right for <= 65535 rows.
import gpuperf.kernels

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(1).to(tl.int64)
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
    softmax_row_kernel[(1, n_rows)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


softmax_rows = grading.grade("L3.softmax", softmax_rows)
