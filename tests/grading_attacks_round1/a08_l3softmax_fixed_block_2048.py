# exercise: L3.softmax
# family: ordinary
# why: Hard-codes BLOCK = 2048 with no loop: rows longer than 2048 are silently cut (their tail never written). A correct wrapper picks next_power_of_2(n_cols) (or loops).
# expect: ACCEPTED on the CPU if its rows stay below 2048 (GPU rows reach 5000: rejected there)
import _common; _common.setup()
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_cols, xs, ys, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * xs + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * ys + cols, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    softmax_row_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=2048)
    return y


softmax_rows = grading.grade("L3.softmax", softmax_rows)
