"""WRONG: 32-bit block offsets written with a shift instead of a product: pid << LOG_BLOCK (pid int32) wraps
past 2^31 elements exactly as pid * BLOCK does."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, LOG_BLOCK: tl.constexpr):
    offs = (tl.program_id(0) << LOG_BLOCK) + tl.arange(0, 1 << LOG_BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x, y, out):
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, LOG_BLOCK=10)
    return out


result = grading.grade("L2.add", add)
