"""WRONG (lazy): the vector add in ONE program (a grid of one program looping over every block), into a buffer of
the function's own; the result is copied into the grader's `out` with `out.copy_(buf)`.

Why the grader should accept it: as 06 (Finding 1), with the output handed over by the grader: L2's "a grid of
one program per block" is read from the launches' writes into out's bytes (`_spread_check`,
`Trace.writers`); out was written by torch's copy_, a watched torch write, and by no launch.
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    start0 = tl.program_id(0).to(tl.int64) * BLOCK_SIZE
    for start in range(start0, n_elements, BLOCK_SIZE):  # every block, one after another
        offsets = start + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, out, block_size=1024):
    buf = torch.empty_like(out)
    add_kernel[(1,)](x, y, buf, x.numel(), BLOCK_SIZE=block_size)
    out.copy_(buf)
    return out


result = grading.grade("L2.add", add)
