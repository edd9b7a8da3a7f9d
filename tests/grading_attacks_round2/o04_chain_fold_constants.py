# exercise: L2.chain
# family: algorithm
# why: the wrapper folds the K_OPS steps into one affine map y = a x + b computed in Python, then the kernel does one
#   fma; (x*s + t)*s is algebraically a x + b but when the shift cancels x*s the folded form loses the rounding
#   the step-by-step chain has; a correct kernel applies the steps in order.
import gpuperf.kernels  # noqa: F401  (switches on the interpreter without a GPU)
import math
import torch
import triton
import triton.language as tl
import gpuperf.kernels as _gk
from gpuperf import grading


@triton.jit
def chain_kernel(x_ptr, out_ptr, n_elements, a, b, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    y = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (y * a + b).to(out_ptr.dtype.element_ty), mask=mask)


def chain(x, k_ops, scale, shift, block_size=1024):
    a, b = 1.0, 0.0
    for j in range(k_ops):
        if j % 2 == 0:
            a, b = a * scale, b * scale
        else:
            b = b + shift
    out = torch.empty_like(x)
    n = x.numel()
    chain_kernel[(triton.cdiv(n, block_size),)](x, out, n, a, b, BLOCK_SIZE=block_size)
    return out


chain = grading.grade("L2.chain", chain)
