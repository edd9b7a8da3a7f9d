# exercise: L2.add
# family: honest
# What it does: a correct persistent (grid-stride) vector add, the variant labs/README.md allows: at most 132
# programs (one per H200 multiprocessor), blocks of 256, each program walking the blocks pid, pid + P, ...
# with a 64-bit loop (its bounds are 64-bit, so every start is a 64-bit product).
import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    first = tl.program_id(0).to(tl.int64) * BLOCK_SIZE
    step = tl.num_programs(0).to(tl.int64) * BLOCK_SIZE
    for start in range(first, n_elements, step):
        offsets = start + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, out, block_size=256):
    n_elements = x.numel()
    grid = (min(triton.cdiv(n_elements, block_size), 132),)
    add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=block_size)
    return out


add = grading.grade("L2.add", add)
