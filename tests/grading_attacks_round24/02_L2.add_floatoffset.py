# what: block start computed as float32 (pid * BLOCK in fp32, then to int64): wrong addresses once offsets pass 2^24
import torch
import triton
import triton.language as tl
from gpuperf import grading

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    start = (pid.to(tl.float32) * BLOCK_SIZE).to(tl.int64)
    offsets = start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, out, block_size=1024):
    n_elements = x.numel()
    grid = (triton.cdiv(n_elements, block_size),)
    add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=block_size)
    return out

result = grading.grade("L2.add", add)
