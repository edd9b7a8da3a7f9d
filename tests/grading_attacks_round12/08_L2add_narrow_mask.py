import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl

# WRONG: the addresses are 64-bit, but the mask ("the elements left in this block") is computed from a
# 32-bit product pid * BLOCK. Past 2^31 elements that product wraps negative, n - start becomes huge and
# the last, partial block is not masked: it reads past the end of x and y and writes past the end of out.
# The 32-bit rule (frontend.wrapping_offsets) follows products only into tt.addptr, never into a mask.
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    lanes = tl.arange(0, BLOCK)
    offsets = pid.to(tl.int64) * BLOCK + lanes
    mask = lanes < n - pid * BLOCK          # elements left in this block (32-bit)
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, out):
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out

result = grading.grade("L2.add", add)
