# what: honest: softmax computed in fp32 into a float32 workspace (one program per row), then a separate elementwise kernel (1-D grid over all elements) casts the workspace into y's dtype
import torch
import triton
import triton.language as tl
import gpuperf.kernels
from gpuperf import grading

@triton.jit
def softmax_kernel(x_ptr, w_ptr, n_cols, x_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(w_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def cast_kernel(w_ptr, y_ptr, n_rows, n_cols, y_stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_rows * n_cols
    r = offs // n_cols
    c = offs % n_cols
    tl.store(y_ptr + r * y_stride + c, tl.load(w_ptr + offs, mask=mask).to(y_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    w = torch.empty((n_rows, n_cols), dtype=torch.float32, device=x.device)
    softmax_kernel[(n_rows,)](x, w, n_cols, x.stride(0), BLOCK=triton.next_power_of_2(n_cols))
    cast_kernel[(triton.cdiv(n_rows * n_cols, 1024),)](w, y, n_rows, n_cols, y.stride(0), BLOCK=1024)
    return y

result = grading.grade("L3.softmax", softmax_rows)
