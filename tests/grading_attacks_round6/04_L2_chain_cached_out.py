# exercise: L2.chain
# family: ordinary
# What it does wrong: keeps the output buffer in a module-level cache keyed by (shape, dtype, device) to
#   "save allocations": every call returns the SAME tensor, so a second call silently overwrites the result
#   of the first (y1 = chain(x1, ...); y2 = chain(x2, ...) leaves y1 == y2). Checked (CHECK_WRONG=1):
#   after two calls, the first result no longer equals its float64 reference.
import gpuperf.kernels

import os

import torch
import triton
import triton.language as tl

from gpuperf import grading


@triton.jit
def chain_kernel(x_ptr, out_ptr, n_elements, scale, shift, K_OPS: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    y = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    for j in tl.static_range(K_OPS):
        if j % 2 == 0:
            y = y * scale
        else:
            y = y + shift
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


_buffers = {}


def chain(x, k_ops, scale, shift, block_size=1024):
    key = (tuple(x.shape), x.dtype, x.device)
    if key not in _buffers:
        _buffers[key] = torch.empty_like(x)
    out = _buffers[key]
    n_elements = x.numel()
    grid = (triton.cdiv(n_elements, block_size),)
    chain_kernel[grid](x, out, n_elements, scale, shift, K_OPS=k_ops, BLOCK_SIZE=block_size)
    return out


if os.environ.get("CHECK_WRONG"):
    x1, x2 = torch.randn(1000), torch.randn(1000)
    y1 = chain(x1, 3, 1.5, 0.25)
    y2 = chain(x2, 3, 1.5, 0.25)
    print("first result still right:", torch.allclose(y1.double(), (x1.double() * 1.5 + 0.25) * 1.5))

chain = grading.grade("L2.chain", chain)
