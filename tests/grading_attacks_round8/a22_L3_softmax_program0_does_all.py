# exercise: L3.softmax
# family: algorithm
# What it does wrong: launched on the right grid (one program per row), but program 0 walks every row one after
# another and the other programs do nothing: the rows are not processed in parallel. No decoy launch: the row
# check counts the programs a launch ran, not the programs that loaded or stored a row.
import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    if tl.program_id(0) == 0:  # program 0 does every row; the others are idle
        for r in range(0, n_rows):
            row = tl.zeros([], dtype=tl.int64) + r
            x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
            num = tl.exp(x - tl.max(x, axis=0))
            tl.store(y_ptr + row * y_row_stride + cols, (num / tl.sum(num, axis=0)).to(y_ptr.dtype.element_ty),
                     mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    softmax_row_kernel[(n_rows,)](x, y, n_rows, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


softmax_rows = grading.grade("L3.softmax", softmax_rows)
