# exercise: L3.online
# family: ordinary
# What it does wrong: the classic "running" max that is only the current block's max (m_new = max of this block,
# which can go down), computed in float64: the grader's falling-max row (a block max ~140 below the one before)
# makes the rescale exp(m - m_new) = e^140, which overflows fp32 but not fp64, so the bug passes. A row whose
# block maxima fall more than ~709 (e.g. 0, then -800) gives inf * 0 = NaN.
import gpuperf.kernels  # noqa: F401
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
    m = tl.full([], -float("inf"), tl.float64)
    l = tl.zeros([], dtype=tl.float64)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf")).to(tl.float64)
        m_blk = tl.max(x, axis=0)
        m_new = tl.where(m_blk == -float("inf"), m, m_blk)  # BUG: the block's max, not max(m, block max)
        shift = tl.where(m_new == -float("inf"), 0.0, m_new)
        l = l * tl.exp(tl.where(m == -float("inf"), -float("inf"), m - shift)) + tl.sum(tl.exp(x - shift), axis=0)
        m = m_new
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float64)
        tl.store(y_row + start + cols, (tl.exp(x - m) / l).to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    online_softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


online_softmax = grading.grade("L3.online", online_softmax)
