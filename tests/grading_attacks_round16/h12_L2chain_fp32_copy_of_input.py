"""HONEST: the course's fused chain kernel unchanged (one program per block, the K_OPS operations in registers,
one load and one store per element); the wrapper runs it on an fp32 copy of x (`x.float()`, a torch copy the
graders allow) so that the chain is computed from fp32 values, and allocates out in x's dtype.

Why the grader should refuse it: since today the learner's own memory counts in x's elements by bytes
(`algorithm._unit`): with fp16 x each fp32 lane of the copy counts 2, so the kernel "loaded 2n elements" of the
fp16 n (`_fused_check`: `loaded <= n + n // 2`) and the fused chain is called unfused. The copy's elements are
the rows of x (README: loads of a copy made with .to() "count as loads of the rows it copies").
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def chain_kernel(x_ptr, out_ptr, n_elements, scale, shift, K_OPS: tl.constexpr,
                 BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    y = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    for j in tl.static_range(K_OPS):  # unrolled; the values never leave the registers
        if j % 2 == 0:
            y = y * scale
        else:
            y = y + shift
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def chain(x, k_ops, scale, shift, block_size=1024):
    x32 = x.float()  # compute from fp32 values
    out = torch.empty_like(x)
    n_elements = x.numel()
    grid = (triton.cdiv(n_elements, block_size),)
    chain_kernel[grid](x32, out, n_elements, scale, shift, K_OPS=k_ops, BLOCK_SIZE=block_size)
    return out


result = grading.grade("L2.chain", chain)
