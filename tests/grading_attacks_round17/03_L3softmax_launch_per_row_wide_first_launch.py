"""WRONG (lazy): the rows one after another, a launch per row with a grid of ONE program (round 16's 22), except
the FIRST launch, which has a grid of one program per row: program 0 computes row 0, every other program writes
zeros over its own row of y and returns (a placeholder the later launches overwrite). The real work is still a
Python loop of n_rows launches of one program each: no two rows are ever computed at the same time.

Why the grader should accept it: the new launch-loop rule (`_spread_check`: `launches >= 3 and 2 * widest <
min(units, sms)`) takes `widest` as the most programs that wrote y in any ONE launch, from every write of that
launch (`Trace.writers`: all writes, not the ones that survive). The placeholder launch makes widest = n_rows,
so the loop is never refused, although each real row is one launch of one program.
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, row0, n_cols, x_stride, y_stride, BLOCK: tl.constexpr):
    row = (row0 + tl.program_id(0)).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    if tl.program_id(0) > 0:  # placeholder: later launches write this row for real
        tl.store(y_ptr + row * y_stride + cols, tl.zeros((BLOCK,), dtype=tl.float32).to(y_ptr.dtype.element_ty),
                 mask=mask)
    else:
        x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=float("-inf"))
        x = x.to(tl.float32)
        shifted = x - tl.max(x, axis=0)
        numerator = tl.exp(shifted)
        y = numerator / tl.sum(numerator, axis=0)
        tl.store(y_ptr + row * y_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    for row in range(n_rows):  # one row per launch; the first launch is wide, only its program 0 computes
        grid = (n_rows,) if row == 0 else (1,)
        softmax_row_kernel[grid](x, y, row, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


result = grading.grade("L3.softmax", softmax_rows)
