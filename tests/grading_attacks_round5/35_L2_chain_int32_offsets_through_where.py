# exercise: L2.chain
# family: escape
# What it does wrong: as 23 for the chain: program_id * BLOCK_SIZE is a 32-bit product (wraps past 2^31
#   elements), widened to 64 bits only after a tl.where, which the interpreter's program-id taint does not
#   follow, so _offsets_check sees 64-bit addresses. Checked as 23.
import gpuperf.kernels

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def chain_kernel(x_ptr, out_ptr, n_elements, scale, shift, K_OPS: tl.constexpr,
                 BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    start = tl.where(pid >= 0, pid * BLOCK_SIZE, 0)  # int32 product
    offsets = start.to(tl.int64) + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    y = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    for j in tl.static_range(K_OPS):
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


chain = grading.grade("L2.chain", chain)
