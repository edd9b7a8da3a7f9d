# exercise: L2.chain
# family: algorithm
# What it does wrong: not fused: one kernel launch per operation, each reading the whole tensor from memory and
# writing it back (an fp32 scratch in HBM between the launches), exactly the eager chain the exercise replaces:
# 2 k_ops n b bytes (k_ops + 1 launches) instead of 2 n b.
import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def op_kernel(src_ptr, dst_ptr, n_elements, scale, shift, IS_MUL: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    v = tl.load(src_ptr + offsets, mask=mask).to(tl.float32)
    if IS_MUL:
        v = v * scale
    else:
        v = v + shift
    tl.store(dst_ptr + offsets, v.to(dst_ptr.dtype.element_ty), mask=mask)


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask).to(dst_ptr.dtype.element_ty), mask=mask)


def chain(x, k_ops, scale, shift, block_size=1024):
    out = torch.empty_like(x)
    n_elements = x.numel()
    grid = (triton.cdiv(n_elements, block_size),)
    tmp = torch.empty(x.shape, dtype=torch.float32, device=x.device)  # the intermediate, in HBM
    copy_kernel[grid](x, tmp, n_elements, BLOCK_SIZE=block_size)
    for j in range(k_ops):  # one launch, one read and one write of the tensor, per operation
        op_kernel[grid](tmp, tmp, n_elements, scale, shift, IS_MUL=(j % 2 == 0), BLOCK_SIZE=block_size)
    copy_kernel[grid](tmp, out, n_elements, BLOCK_SIZE=block_size)
    return out


chain = grading.grade("L2.chain", chain)
