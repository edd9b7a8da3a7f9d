"""Lab L2 solutions: a vector add and a fused elementwise chain.

HBM traffic: ``add`` reads x and y and writes out, 3 n b bytes; ``chain`` reads x and writes its result,
2 n b bytes, whatever the number of operations in between.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

import gpuperf.kernels  # noqa: F401  (no GPU: switch on the Triton interpreter before @triton.jit runs)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # Program i owns elements [i * BLOCK_SIZE, (i + 1) * BLOCK_SIZE); 64-bit offsets for huge tensors.
    block_start = tl.program_id(0).to(tl.int64) * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements  # the last block may stick out past the end
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, out, block_size=1024):
    n_elements = x.numel()
    grid = (triton.cdiv(n_elements, block_size),)
    add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=block_size)
    return out


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
    out = torch.empty_like(x)
    n_elements = x.numel()
    grid = (triton.cdiv(n_elements, block_size),)
    chain_kernel[grid](x, out, n_elements, scale, shift, K_OPS=k_ops, BLOCK_SIZE=block_size)
    return out


# the solutions as defined here, for the grader (a later rebinding of a name in this module changes nothing)
from gpuperf.labs import pin_solutions as _pin_solutions  # noqa: E402

_pin_solutions(globals())
