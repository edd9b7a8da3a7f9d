"""WRONG (lazy): the rows one after another, a Python loop of one launch per row, each on a grid of ONE program
(round 18's 02), into a buffer of the function's own; the output is `out.copy_(buf)`, made inside the grid
function of a last launch of a kernel that does nothing.

Why the grader should accept it: Triton calls a grid function while the watch is paused for its launch code. The
watch itself watches the reader's callbacks there (the copy is an allowed operator), but the copy tracker
(`exercises._track_copies`) recorded nothing while the watch was paused: no copy into `out` was known, no launch
wrote `out`, and there was nothing to count.
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


@triton.jit
def nop_kernel(p):
    pass


def softmax_rows(x):
    n_rows, n_cols = x.shape
    buf = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    for row in range(n_rows):  # one row per launch, one program each
        softmax_row_kernel[(1,)](x, buf, row, n_cols, x.stride(0), buf.stride(0), BLOCK=block)
    out = torch.empty_like(buf)

    def grid(meta):  # Triton calls it at the launch: the copy is made there
        out.copy_(buf)
        return (1,)

    nop_kernel[grid](out)
    return out


result = grading.grade("L3.softmax", softmax_rows)
