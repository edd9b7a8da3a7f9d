# exercise: L3.online
# family: ordinary
# What it does wrong: the "running" max is the max of the current block only (m_new = tl.max(x) instead of
#   tl.maximum(m, tl.max(x))); the rescale exp(m - m_new) is > 1 after the block that held the row's max and
#   overflows fp32 when a later block's max is ~89+ below an earlier one. Checked (CHECK_WRONG=1): a row of
#   N(0, 1) with x[0] = 100, block 128: y is NaN/0 where torch.softmax in float64 is finite.
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
        m_new = tl.max(x, axis=0)   # BUG: this block's max, not the running max
        shift = tl.where(m_new == -float("inf"), 0.0, m_new)
        l = l * tl.exp(m - shift) + tl.sum(tl.exp(x - shift), axis=0)
        m = m_new
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - m) / l
        tl.store(y_row + start + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x, block=1024):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    online_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


if os.environ.get("CHECK_WRONG"):
    x = torch.randn(2, 1000)
    x[:, 0] = 100.0
    y = online_softmax(x, 128)
    print("max err", (y.double() - torch.softmax(x.double(), -1)).abs().max().item())

online_softmax = grading.grade("L3.online", online_softmax)
