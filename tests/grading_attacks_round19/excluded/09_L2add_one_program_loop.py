"""LAZY: one program walks every block in a loop (grid of 1): no parallelism across programs."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    for start in range(tl.program_id(0).to(tl.int64) * 0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x, y, out):
    add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
    return out


result = grading.grade("L2.add", add)
