"""WRONG (at large sizes): round 13's 06 again. The fused softmax's mask is computed in 32 bits from the row
times the row length: `row * n_cols + cols < row * n_cols + n_cols`. Past 2^31 elements (a 2^31-element fp32 x is
8 GiB: it fits an H200) both sides wrap at different lanes and rows are partly or wholly masked off (outputs never
written). The addresses are 64-bit. The only change from the file the new rule refuses: `row = pid % n_rows`
instead of `row = pid` (the same value, since the grid has n_rows programs), and
`row * n_cols + n_cols` for `(row + 1) * n_cols` (a product of `row + 1` would not be exempt).

Why the grader should accept it: `frontend.wrapping_masks` (the new L3-L6 rule) exempts "a program id divided
first (a group of tiles)": any arith.remsi/divsi whose first operand comes from the program id puts its result
in `group`, and a product whose program-id factor is in `group` is not counted. `pid % n_rows` is such a
remainder, but it is not bounded by anything smaller than the grid: it is still the row, and row * n_cols
still grows with the tensor.
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0) % n_rows
    cols = tl.arange(0, BLOCK)
    flat = row * n_cols + cols  # 32-bit
    mask = flat < row * n_cols + n_cols  # 32-bit
    row64 = row.to(tl.int64)
    x = tl.load(x_ptr + row64 * x_row_stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=0))
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row64 * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    softmax_kernel[(n_rows,)](x, y, n_rows, n_cols, x.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(n_cols))
    return y


result = grading.grade("L3.softmax", softmax_rows)
