import torch, triton, triton.language as tl
from gpuperf import grading

# mistake: the learner caps the grid at 65,535 programs (the limit of axes 1 and 2, not of axis 0) and
# does not loop: past 65,535 * block_size elements the tail of out is never written
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    block_start = tl.program_id(0).to(tl.int64) * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, out, block_size=1024):
    n = x.numel()
    grid = (min(triton.cdiv(n, block_size), 65535),)
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=block_size)
    return out
result = grading.grade("L2.add", add)
