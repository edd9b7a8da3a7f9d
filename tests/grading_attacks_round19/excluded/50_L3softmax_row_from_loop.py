"""WRONG: a persistent softmax (Triton's tutorial loop over rows) whose row index is 32-bit: for row in
range(pid, n_rows, nprog), then x_ptr + row * stride: past 2^31 elements the product wraps."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def k(x_ptr, y_ptr, n_rows, n_cols, sx, sy, BLOCK: tl.constexpr):
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * sx + cols, mask=mask, other=float("-inf")).to(tl.float32)
        e = tl.exp(x - tl.max(x, 0))
        tl.store(y_ptr + row * sy + cols, (e / tl.sum(e, 0)).to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    r, c = x.shape
    y = torch.empty((r, c), dtype=x.dtype, device=x.device)
    k[(min(r, 132),)](x, y, r, c, x.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(c))
    return y


result = grading.grade("L3.softmax", softmax)
