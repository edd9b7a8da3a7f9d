# exercise: L3.online
# family: ordinary
# What it does wrong: keeps y in a module-level cache keyed by (shape, dtype, device) to "save allocations":
#   every call with the same shape returns the SAME tensor, so y1 = online_softmax(x1); online_softmax(x2)
#   silently overwrites y1. Checked (CHECK_WRONG=1): after the second call y1 != softmax(x1) (float64).
import gpuperf.kernels

import os

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def online_kernel(x_ptr, y_ptr, n_cols, xs, ys, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * xs
    y_row = y_ptr + row * ys
    cols = tl.arange(0, BLOCK)
    m = -float("inf")
    l = 0.0
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        shift = tl.where(m_new == -float("inf"), 0.0, m_new)
        l = l * tl.exp(m - shift) + tl.sum(tl.exp(x - shift), axis=0)
        m = m_new
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - m) / l
        tl.store(y_row + start + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


_buffers = {}


def online_softmax(x, block=1024):
    rows, cols = x.shape
    key = (rows, cols, x.dtype, x.device)
    if key not in _buffers:
        _buffers[key] = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    y = _buffers[key]
    online_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


if os.environ.get("CHECK_WRONG"):
    x1, x2 = torch.randn(2, 1000), torch.randn(2, 1000)
    y1 = online_softmax(x1, 128)
    online_softmax(x2, 128)
    print("first result still right:", torch.allclose(y1.double(), torch.softmax(x1.double(), -1), atol=1e-6))

online_softmax = grading.grade("L3.online", online_softmax)
