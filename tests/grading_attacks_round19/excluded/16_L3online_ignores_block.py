"""LAZY: ignores the block the grader gives and holds the whole row in one block (the fused kernel
again): no online softmax at all."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def k(x_ptr, y_ptr, n_cols, sx, sy, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * sx + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + row * sy + cols, (e / tl.sum(e, 0)).to(y_ptr.dtype.element_ty), mask=mask)


def online(x, block):
    r, c = x.shape
    y = torch.empty((r, c), dtype=x.dtype, device=x.device)
    k[(r,)](x, y, c, x.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(c))
    return y


result = grading.grade("L3.online", online)
