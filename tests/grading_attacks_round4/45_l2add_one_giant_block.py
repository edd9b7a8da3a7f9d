# exercise: L2.add
# family: algorithm
# What it does wrong: one program with a block as large as the whole vector (BLOCK_SIZE = next_power_of_2(n), grid of 1): no parallelism, and past 2^20 elements Triton refuses the block.
# (The course's solution with this one mistake.)
import gpuperf.kernels  # first: without a GPU it switches Triton to its CPU interpreter


import torch
import triton
import triton.language as tl



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
    block_size = triton.next_power_of_2(n_elements)
    grid = (1,)
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
