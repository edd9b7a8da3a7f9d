"""WRONG (lazy): the rows one after another, a Python loop of one launch per row, each on a grid of ONE program
(round 18's 02), into a buffer of the function's own, handed back as torch's copy of it made through a view of
16-byte elements: `big.view(torch.complex128).clone().view(torch.float32)` (fp32 or fp16 rows, four or eight
values to a copied element).

Why the grader should accept it: `exercises._out_writes` follows each element of the output back through torch's
copies by the address of the element, and a copy's target elements here start every 16 bytes: only one value in
four (or eight) of the output is followed to the launch that wrote it. The launches' writes left are a quarter of
a row each, under the one row a launch may write, and the loop of launches is not seen. Before round 19 it was
accepted on the 3 x 39 case only: on larger ones the quarter left still showed the loop ("148 times ... 37 rows
in all"), so this file is a hardening test, not a wrong solution the whole grade accepted.
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, row0, n_cols, x_stride, y_stride, BLOCK: tl.constexpr):
    row = (row0 + tl.program_id(0)).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=float("-inf"))
    x = x.to(tl.float32)
    shifted = x - tl.max(x, axis=0)
    numerator = tl.exp(shifted)
    y = numerator / tl.sum(numerator, axis=0)
    tl.store(y_ptr + row * y_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    big = torch.empty(((n_rows * n_cols + 7) // 8 * 8,), dtype=x.dtype, device=x.device)
    buf = big[:n_rows * n_cols].view(n_rows, n_cols)
    block = triton.next_power_of_2(n_cols)
    for row in range(n_rows):  # one row per launch, one program each
        softmax_row_kernel[(1,)](x, buf, row, n_cols, x.stride(0), buf.stride(0), BLOCK=block)
    n = buf.numel()  # the rows, copied 16 bytes at a time (four fp32 values to an element)
    return big.view(torch.complex128).clone().view(buf.dtype)[:n].view(buf.shape)


result = grading.grade("L3.softmax", softmax_rows)
