"""WRONG past 2^31 elements: the vector add with 32-bit offsets, `tl.maximum(pid, 0) * BLOCK_SIZE` (the program
id through an integer max, the same value) times the block size in 32 bits: past 2^31 elements the offsets wrap.

Why the grader might accept it: the 32-bit rule follows the program id through casts (and splats); an
`arith.maxsi` of it may not be followed (as in `frontend._block_axes`, where it is not).
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.maximum(tl.program_id(0), 0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)  # 32-bit: wraps past 2^31
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, out, block_size=1024):
    n = x.numel()
    add_kernel[(triton.cdiv(n, block_size),)](x, y, out, n, BLOCK_SIZE=block_size)
    return out


result = grading.grade("L2.add", add)
