"""WRONG (at large sizes): the fused softmax's mask is computed in 32 bits from the row times a row length:
`row * width + cols < row * width + n_cols`, with `width = tl.cdiv(n_cols, 16) * 16` (the row length padded to
whole blocks of 16). Past 2^31 elements both sides wrap at different lanes (a 2^31-element fp32 x is 8 GiB: it
fits an H200) and rows are partly or wholly masked off, outputs never written. The addresses are 64-bit.
This is round 13's 06 / round 14's 07 (`row * n_cols + cols < (row + 1) * n_cols`) with n_cols padded.

Why the grader should accept it: `frontend.wrapping_masks` flags a 32-bit product of a program-id value and a
*size*, and a value is a size only through `_SIZE_OPS` (muli, addi, subi, min/max, casts, splats). `tl.cdiv`
is an `arith.divsi`, not in `_SIZE_OPS`, so `width` is no size and `row * width` is never flagged (the README's
"a size divided first (a split-K slice) is bounded" exemption applies to any division, even one multiplied back).
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    width = tl.cdiv(n_cols, 16) * 16  # the row length padded to whole blocks of 16
    flat = row * width + cols  # 32-bit
    mask = flat < row * width + n_cols  # 32-bit
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
