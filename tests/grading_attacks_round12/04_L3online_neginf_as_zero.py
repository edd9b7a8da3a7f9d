import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl

# WRONG: the online kernel dodges the "masked start" NaN (a row that starts with whole blocks of -inf) by
# reading every -inf as 0 instead of guarding the rescale. softmax([-inf, ..., -inf, -5, -7]) must put all
# its mass on the finite values; this puts most of it on the former -inf positions. Rows holding a -inf get
# an infinite bound in softmax_bound, which L3.online shares with L3.softmax.
@triton.jit
def online_kernel(x_ptr, y_ptr, n_cols, xs, ys, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * xs
    y_row = y_ptr + row * ys
    cols = tl.arange(0, BLOCK)
    m = -float("inf")
    l = 0.0
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        x = tl.where(mask & (x == float("-inf")), 0.0, x)     # "no -inf, no NaN"
        m_new = tl.maximum(m, tl.max(x, axis=0))
        l = l * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        x = tl.where(mask & (x == float("-inf")), 0.0, x)
        tl.store(y_row + start + cols, (tl.exp(x - m) / l).to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x, block):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    online_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=block)
    return y

result = grading.grade("L3.online", online_softmax)
