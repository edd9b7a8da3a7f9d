# exercise: L2.add
# family: algorithm
# One program walks the whole vector in a loop over blocks (grid = (1,)): 64-bit offsets and masks are right,
# but on a GPU one SM does the whole add (the lab's point is a grid of programs, one block each).
import math

import gpuperf.kernels  # noqa: F401  (switches Triton to its interpreter without a GPU)
import torch
import triton
import triton.language as tl

from gpuperf import grading



@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # Program i owns elements [i * BLOCK_SIZE, (i + 1) * BLOCK_SIZE); 64-bit offsets for huge tensors.
    lanes = tl.arange(0, BLOCK_SIZE).to(tl.int64)
    for block_start in range(0, n_elements, BLOCK_SIZE):  # every block in this one program
        offsets = block_start + lanes
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, out, block_size=1024):
    n_elements = x.numel()
    grid = (1,)
    add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=block_size)
    return out


add = grading.grade("L2.add", add)
