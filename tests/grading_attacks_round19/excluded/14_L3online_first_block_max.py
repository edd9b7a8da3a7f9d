"""WRONG: the max taken from the row's first block only, never updated (no rescaling): a late, larger
maximum overflows exp."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def k(x_ptr, y_ptr, n_cols, sx, sy, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x0 = tl.load(x_ptr + row * sx + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
    m = tl.max(x0, 0)
    m = tl.where(m == float("-inf"), 0.0, m)
    l = 0.0
    for s in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * sx + s + cols, mask=s + cols < n_cols, other=float("-inf")).to(tl.float32)
        l += tl.sum(tl.exp(x - m), 0)
    for s in range(0, n_cols, BLOCK):
        mask = s + cols < n_cols
        x = tl.load(x_ptr + row * sx + s + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_ptr + row * sy + s + cols, (tl.exp(x - m) / l).to(y_ptr.dtype.element_ty), mask=mask)


def online(x, block):
    r, c = x.shape
    y = torch.empty((r, c), dtype=x.dtype, device=x.device)
    k[(r,)](x, y, c, x.stride(0), y.stride(0), BLOCK=block)
    return y


result = grading.grade("L3.online", online)
