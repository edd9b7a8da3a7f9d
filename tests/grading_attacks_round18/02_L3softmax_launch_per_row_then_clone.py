"""WRONG (lazy): the rows one after another, a Python loop of one launch per row, each on a grid of ONE
program (round 16's 22), writing into a buffer of the function's own; the function returns `buf.clone()`.

Why the grader should accept it: every launch-loop and spread rule (`_spread_check`) reads the writes of
launches into the bytes of the returned output (`Trace.writers(*_tensor_bytes(out))`). The returned tensor was
written by torch's clone, not by a launch: no launch wrote it, so there is nothing to count, and the loop of
one-program launches is never seen. The README lists "one program into scratch, then a launch on the full grid
that copies it" as a dodge it cannot see; a torch copy, with no copying launch at all, is not among its words
(it says the graders "count the programs that write the output").
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
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=float("-inf"))
    x = x.to(tl.float32)
    shifted = x - tl.max(x, axis=0)
    numerator = tl.exp(shifted)
    y = numerator / tl.sum(numerator, axis=0)
    tl.store(y_ptr + row * y_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    buf = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    for row in range(n_rows):  # one row per launch, one program each
        softmax_row_kernel[(1,)](x, buf, row, n_cols, x.stride(0), buf.stride(0), BLOCK=block)
    return buf.clone()


result = grading.grade("L3.softmax", softmax_rows)
