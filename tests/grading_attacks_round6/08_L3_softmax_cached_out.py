# exercise: L3.softmax
# family: ordinary
# What it does wrong: keeps y in a module-level cache keyed by (shape, dtype, device) to "save allocations":
#   every call with the same shape returns the SAME tensor, so y1 = softmax_rows(x1); softmax_rows(x2)
#   silently overwrites y1. Checked (CHECK_WRONG=1): after the second call y1 != softmax(x1) (float64).
import gpuperf.kernels

import os

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, xs, ys, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * xs + cols, mask=mask, other=float("-inf")).to(tl.float32)
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    tl.store(y_ptr + row * ys + cols, (num / tl.sum(num, axis=0)).to(y_ptr.dtype.element_ty), mask=mask)


_buffers = {}


def softmax_rows(x):
    rows, cols = x.shape
    key = (rows, cols, x.dtype, x.device)
    if key not in _buffers:
        _buffers[key] = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    y = _buffers[key]
    softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(cols))
    return y


if os.environ.get("CHECK_WRONG"):
    x1, x2 = torch.randn(4, 100), torch.randn(4, 100)
    y1 = softmax_rows(x1)
    softmax_rows(x2)
    print("first result still right:", torch.allclose(y1.double(), torch.softmax(x1.double(), -1), atol=1e-6))

softmax_rows = grading.grade("L3.softmax", softmax_rows)
