# what: the program id narrowed to int16 before the 64-bit product: vectors over 33.5M elements (block 1024) wrap
import torch
import triton
import triton.language as tl
import gpuperf.kernels
from gpuperf import grading

@triton.jit
def chain_kernel(x_ptr, out_ptr, n_elements, scale, shift, K_OPS: tl.constexpr,
                 BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int16).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    y = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    for j in tl.static_range(K_OPS):  # unrolled; the values never leave the registers
        if j % 2 == 0:
            y = y * scale
        else:
            y = y + shift
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def chain(x, k_ops, scale, shift, block_size=1024):
    out = torch.empty_like(x)
    n_elements = x.numel()
    grid = (triton.cdiv(n_elements, block_size),)
    chain_kernel[grid](x, out, n_elements, scale, shift, K_OPS=k_ops, BLOCK_SIZE=block_size)
    return out


result = grading.grade("L2.chain", chain)
