import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl

# WRONG: the blocks of the vector are laid on the grid's SECOND axis, which CUDA caps at 65,535 programs:
# past 65,535 * 1024 = 67,107,840 elements (256 MiB of fp32, a valid input) the launch fails on a GPU.
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
             mask=mask)


def add(x, y, out):
    n = x.numel()
    add_kernel[(1, triton.cdiv(n, 1024))](x, y, out, n, BLOCK=1024)
    return out

result = grading.grade("L2.add", add)
