"""WRONG (lazy): the whole vector in ONE program (a grid of one program that loops over every block, one block
after another), into a buffer of the function's own; the function returns `buf.clone()`.

Why the grader should accept it: L2's rule "a grid of one program per block of at most 8192 elements" is read
from the programs that write the output (`_spread_check`, `Trace.writers(*_tensor_bytes(out))`). The tensor
returned was written by torch's clone, so no launch wrote it and nothing is counted. (Control: returning buf is
refused.)
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def chain_kernel(x_ptr, out_ptr, n_elements, scale, shift, K_OPS: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    start0 = tl.program_id(0).to(tl.int64) * BLOCK_SIZE
    for start in range(start0, n_elements, BLOCK_SIZE):  # every block, one after another
        offsets = start + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        y = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
        for j in tl.static_range(K_OPS):
            if j % 2 == 0:
                y = y * scale
            else:
                y = y + shift
        tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def chain(x, k_ops, scale, shift, block_size=1024):
    buf = torch.empty_like(x)
    chain_kernel[(1,)](x, buf, x.numel(), scale, shift, K_OPS=k_ops, BLOCK_SIZE=block_size)
    return buf.clone()


result = grading.grade("L2.chain", chain)
