"""Lab L2 solutions: a vector add and a fused elementwise chain.

HBM traffic: ``add`` reads x and y and writes out, 3 n b bytes; ``chain`` reads x and writes its result,
2 n b bytes, whatever the number of operations in between.
"""

from __future__ import annotations
# honest persistent kernel: min(blocks, 132) programs (an H200's multiprocessors), each walking blocks with a 64-bit grid-stride loop: ACCEPT (README: a program per multiprocessor that loops passes)
KEY, ENTRY = "L2.add", "add"

import torch
import triton
import triton.language as tl

import gpuperf.kernels  # noqa: F401  (no GPU: switch on the Triton interpreter before @triton.jit runs)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    step = tl.num_programs(0).to(tl.int64) * BLOCK_SIZE
    for block_start in range(tl.program_id(0).to(tl.int64) * BLOCK_SIZE, n_elements, step):
        offsets = block_start + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, out, block_size=1024):
    n_elements = x.numel()
    grid = (min(triton.cdiv(n_elements, block_size), 132),)
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


from gpuperf import grading  # noqa: E402

add = grading.grade("L2.add", add)
