# exercise: L2.add
# family: escape
# What it does wrong: the block's start is the 32-bit product program_id * BLOCK_SIZE (it wraps past 2^31
#   elements: the exercise asks for 64-bit offsets), widened to 64 bits only afterwards; the product passes
#   through tl.where before the widening, and the interpreter's taint of the program id does not follow
#   tl.where (create_select), so the check of 32-bit offsets (_offsets_check) sees 64-bit addresses.
#   Checked: pid * 1024 in int32 for pid = 2^21 + 5 is negative (numpy int32), so element 2^31 + 5 * 1024 is
#   written at a negative offset on a GPU.
import gpuperf.kernels

import math

import torch
import triton
import triton.language as tl

from gpuperf import grading

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    block_start = tl.where(pid >= 0, pid * BLOCK_SIZE, 0)  # int32 product
    offsets = block_start.to(tl.int64) + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, out, block_size=1024):
    n_elements = x.numel()
    grid = (triton.cdiv(n_elements, block_size),)
    add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=block_size)
    return out



add = grading.grade("L2.add", add)
