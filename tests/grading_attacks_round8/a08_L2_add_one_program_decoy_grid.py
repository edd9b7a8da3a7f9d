# exercise: L2.add
# family: escape
# What it does wrong: one program does the whole vector (a loop over its blocks), one after another: no
# parallelism across the GPU. A decoy "zero the output first" kernel is launched beforehand on the full grid of
# cdiv(n, BLOCK) programs, and the grid check reads the most programs any launch ran.
import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def zero_kernel(out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + offsets, tl.zeros([BLOCK_SIZE], dtype=out_ptr.dtype.element_ty), mask=offsets < n_elements)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    lanes = tl.arange(0, BLOCK_SIZE).to(tl.int64)
    for start in range(0, n_elements, BLOCK_SIZE):  # one program walks every block
        offsets = start + lanes
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, out, block_size=1024):
    n_elements = x.numel()
    zero_kernel[(triton.cdiv(n_elements, block_size),)](out, n_elements, BLOCK_SIZE=block_size)
    add_kernel[(1,)](x, y, out, n_elements, BLOCK_SIZE=block_size)
    return out


add = grading.grade("L2.add", add)
