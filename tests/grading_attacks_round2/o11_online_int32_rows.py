# exercise: L3.online
# family: ordinary
# why: row * x_row_stride in 32 bits (program id not widened): wraps past 2^31 elements; correct:
#   tl.program_id(0).to(tl.int64).
import gpuperf.kernels  # noqa: F401  (switches on the interpreter without a GPU)
import math
import torch
import triton
import triton.language as tl
import gpuperf.kernels as _gk
from gpuperf import grading


@triton.jit
def online_softmax_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    l = tl.sum(tl.exp(x - m), axis=0)
    for start in range(BLOCK, n_cols, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        l = l * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    inv_l = 1.0 / l
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_row + start + cols, (tl.exp(x - m) * inv_l).to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    online_softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


online_softmax = grading.grade("L3.online", online_softmax)
