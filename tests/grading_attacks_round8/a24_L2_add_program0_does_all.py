# exercise: L2.add
# family: algorithm
# What it does wrong: the right grid (cdiv(n, BLOCK) programs), but program 0 walks every block and the other
# programs do nothing: the vector is added by one program, on one multiprocessor.
import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    lanes = tl.arange(0, BLOCK_SIZE).to(tl.int64)
    if tl.program_id(0) == 0:  # program 0 does every block; the others are idle
        for start in range(0, n_elements, BLOCK_SIZE):
            offsets = start + lanes
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
