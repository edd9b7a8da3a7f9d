"""HONEST: the course's fused softmax kernel (one program per row, the row read once, written once), with one
change in the wrapper: the input is converted to fp32 first (`x32 = x.float()`, a torch copy the graders allow),
so that the kernel's max, exponentials and sum are computed from fp32 values; y is allocated in x's dtype. A
learner who read the lab's warning about fp16 rows "whose sum passes fp16's largest value" may well do this.
The kernel reads the copy once per row: one pass.

Why the grader should refuse it: since today, memory that is not one of the grader's tensors counts in x's
elements by bytes (`algorithm._unit`): the fp32 copy of an fp16 x is counted at 4 bytes a lane over 2, so one
read of each row counts as two reads of x (`trace.total("loaded")` against `rows * cols + rows * 16`): "a
second pass over the row ... reads it twice". The README: "loads of a copy your function made of q or k, with
.contiguous(), .clone(), .to() or copy_ ... count as loads of the rows it copies" (rows, not bytes).
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    # Padding lanes read -inf: they do not change the max and add exp(-inf) = 0 to the sum.
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=float("-inf"))
    x = x.to(tl.float32)
    shifted = x - tl.max(x, axis=0)  # the largest exponent is 0: no overflow
    numerator = tl.exp(shifted)
    y = numerator / tl.sum(numerator, axis=0)
    tl.store(y_ptr + row * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    x32 = x.float()  # compute in fp32
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    softmax_row_kernel[(n_rows,)](x32, y, n_cols, x32.stride(0), y.stride(0), BLOCK=block)
    return y


result = grading.grade("L3.softmax", softmax_rows)
