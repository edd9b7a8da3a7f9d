# exercise: L2.add
# family: honest (expected to pass)
# What it does: the course's add, whose wrapper has a docstring that mentions the grader module by name
#   ("checked by gpuperf.grading.exercises"), as a learner documenting a cell might write.
import gpuperf.kernels

import math

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # Program i owns elements [i * BLOCK_SIZE, (i + 1) * BLOCK_SIZE); 64-bit offsets for huge tensors.
    block_start = tl.program_id(0).to(tl.int64) * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements  # the last block may stick out past the end
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)



def add(x, y, out, block_size=1024):
    """out = x + y, one program per block (checked by gpuperf.grading.exercises, case L2.add)."""
    n_elements = x.numel()
    grid = (triton.cdiv(n_elements, block_size),)
    add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=block_size)
    return out



add = grading.grade("L2.add", add)
