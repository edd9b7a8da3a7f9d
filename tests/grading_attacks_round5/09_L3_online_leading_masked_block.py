# exercise: L3.online
# family: ordinary
# What it does wrong: the running max starts at -inf and every block is folded in with
#   alpha = exp(m - m_new), l = l * alpha + sum(exp(x - m_new)). A row whose first block (or first blocks) is
#   entirely -inf (a masked prefix, as in a padded or causal row) has m_new = -inf there, so exp(x - m_new) is
#   exp(-inf + inf) = NaN and the whole row comes out NaN, although softmax is well defined (torch.softmax gives
#   the right probabilities). The grader's rows hold a few isolated -inf values, never a whole block. The
#   course's own online_softmax has the same failure (its first block initialises m = max(-inf...) = -inf).
#   Checked: verify_09.py, a row of 200 -inf then 100 normal values, block 128: NaN everywhere vs float64.
import gpuperf.kernels

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
    m = -float("inf")
    l = 0.0
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        l = l * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_row + start + cols, (tl.exp(x - m) / l).to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    online_softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


online_softmax = grading.grade("L3.online", online_softmax)
