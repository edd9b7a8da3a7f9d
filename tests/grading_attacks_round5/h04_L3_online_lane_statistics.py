# exercise: L3.online
# family: honest (expected to pass)
# What it does: the online softmax with per-lane running statistics (a vector m and a vector l of BLOCK lanes,
#   updated elementwise, combined once at the end of pass 1), which avoids a reduction per block.
import gpuperf.kernels

import math

import torch
import triton
import triton.language as tl

from gpuperf import grading

@triton.jit
def online_softmax_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    cols = tl.arange(0, BLOCK)
    m = tl.full((BLOCK,), -1e30, dtype=tl.float32)
    l = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        l = l * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    m_row = tl.max(m, axis=0)
    l_row = tl.sum(l * tl.exp(m - m_row), axis=0)
    inv_l = 1.0 / l_row
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_row + start + cols, (tl.exp(x - m_row) * inv_l).to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    online_softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y



online_softmax = grading.grade("L3.online", online_softmax)
