# what: fused kernel with a leftover store: writes exp(x - max) to y first, then overwrites it with the normalised values (y written twice, no re-read)
import math
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def k(x_ptr, y_ptr, n_cols, sx, sy, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * sx + cols, mask=m, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + row * sy + cols, e.to(y_ptr.dtype.element_ty), mask=m)
    total = tl.sum(e, 0)
    tl.store(y_ptr + row * sy + cols, (e / total).to(y_ptr.dtype.element_ty), mask=m)


def softmax_rows(x):
    R, C = x.shape
    y = torch.empty((R, C), dtype=x.dtype, device=x.device)
    k[(R,)](x, y, C, x.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(C))
    return y
result = grading.grade("L3.softmax", softmax_rows)
