import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl

# WRONG (lazy precision, a probe of the widened tolerance): the exponentials are rounded to fp16 before the
# sum and the division (a "half-precision exp", 2^-11 relative), also for fp32 rows.
@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, xs, ys, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * xs + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0)).to(tl.float16).to(tl.float32)
    tl.store(y_ptr + row * ys + cols, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    rows, cols = x.shape
    y = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
    softmax_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(cols))
    return y

result = grading.grade("L3.softmax", softmax)
