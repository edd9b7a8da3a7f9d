"""HONEST: fused softmax that gives each program ROWS rows at once when rows are short (a 2-D block
[ROWS, BLOCK], each row reduced along axis 1), the usual trick when a row is much narrower than what a program
can hold; ROWS = 1 for rows of 256 columns or more (one row per program, as the lab's kernel)."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def k(x_ptr, y_ptr, n_rows, n_cols, sx, sy, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * sx + cols[None, :], mask=mask, other=float("-inf")).to(tl.float32)
    m = tl.max(x, axis=1)
    m = tl.where(m == float("-inf"), 0.0, m)  # padded rows past n_rows: no NaN
    e = tl.exp(x - m[:, None])
    y = e / tl.sum(e, axis=1)[:, None]
    tl.store(y_ptr + rows[:, None] * sy + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x):
    r, c = x.shape
    y = torch.empty((r, c), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(c)
    rows = 1 if c >= 256 else min(8, triton.next_power_of_2(r))
    k[(triton.cdiv(r, rows),)](x, y, r, c, x.stride(0), y.stride(0), ROWS=rows, BLOCK=block)
    return y


result = grading.grade("L3.softmax", softmax)
