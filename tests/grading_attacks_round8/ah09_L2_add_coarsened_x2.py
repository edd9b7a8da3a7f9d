# exercise: L2.add
# family: honest
# What it does: a correct vector add with thread coarsening: each program owns 2 * BLOCK_SIZE consecutive elements
# (at most 8192, the lab's limit for a block) and handles them as two loads of BLOCK_SIZE (64-bit offsets); the grid
# is cdiv(n, 2 * BLOCK_SIZE), a program per 2048-element block of the vector.
import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * (2 * BLOCK_SIZE)
    for half in tl.static_range(2):
        offsets = base + half * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, out, block_size=1024):
    n_elements = x.numel()
    grid = (triton.cdiv(n_elements, 2 * block_size),)
    add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=block_size)
    return out


add = grading.grade("L2.add", add)
