# exercise: L3.online
# family: escape
# What is wrong: a THREE-pass softmax (max, then sum, then write: x read three times) dressed up as the
# online one. The first pass reads x with tl.atomic_add(x, 0.0) instead of tl.load: an atomic returns the
# old value and x + 0.0 leaves x's bits unchanged, so x is read but the grader's load count (which
# counts tl.load lanes only) sees two passes. On a GPU this is also slower (atomics on the input).
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
    neg = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    m = tl.max(neg, axis=0)
    for start in range(0, n_cols, BLOCK):  # pass 1: the max, read through an atomic
        mask = start + cols < n_cols
        zero = tl.zeros((BLOCK,), dtype=tl.float32).to(x_ptr.dtype.element_ty)
        old = tl.atomic_add(x_row + start + cols, zero, mask=mask)
        old = tl.where(mask, old.to(tl.float32), float("-inf"))
        m = tl.maximum(m, tl.max(old, axis=0))
    l = tl.sum(tl.zeros((BLOCK,), dtype=tl.float32), axis=0)
    for start in range(0, n_cols, BLOCK):  # pass 2: the sum (no running max needed: m is final)
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf")).to(tl.float32)
        l += tl.sum(tl.exp(x - m), axis=0)
    for start in range(0, n_cols, BLOCK):  # pass 3: write
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_row + start + cols, (tl.exp(x - m) / l).to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    online_softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


online_softmax = grading.grade("L3.online", online_softmax)
