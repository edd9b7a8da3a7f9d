"""WRONG (three passes over the row): the first pass reads x for the row's max and stores x times a factor read
from a one-element buffer (1.0) into a scratch row; the second reads that scratch for the sum, the third reads it
again to write. Each element is read three times (once as x, twice as x * 1.0): the three-pass softmax the lab
replaces. Checked against round 19's r19skip note that derived copies counted only in the causal checks: L3's
pass count charges any memory the kernels wrote and read back, so this was refused before the change too."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def three_pass_kernel(x_ptr, f_ptr, e_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    f = tl.load(f_ptr)
    m = -float("inf")
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(e_ptr + row * n_cols + start + cols, x * f, mask=mask)
        m = tl.maximum(m, tl.max(x, axis=0))
    tl.debug_barrier()
    l = 0.0
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        e = tl.load(e_ptr + row * n_cols + start + cols, mask=mask, other=float("-inf"))
        l += tl.sum(tl.exp(e - m), axis=0)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        e = tl.load(e_ptr + row * n_cols + start + cols, mask=mask, other=float("-inf"))
        tl.store(y_ptr + row * y_row_stride + start + cols, (tl.exp(e - m) / l).to(y_ptr.dtype.element_ty),
                 mask=mask)


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    e = torch.empty((n_rows, n_cols), dtype=torch.float32, device=x.device)
    f = torch.ones((1,), dtype=torch.float32, device=x.device)
    three_pass_kernel[(n_rows,)](x, f, e, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


result = grading.grade("L3.online", online_softmax)
