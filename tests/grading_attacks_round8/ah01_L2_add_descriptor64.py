# exercise: L2.add
# family: honest
# What it does: a correct vector add written with tensor descriptors (tl.make_tensor_descriptor, Triton's
# replacement of block pointers): each program's descriptor starts at x_ptr + a 64-bit block start
# (pid.to(int64) * BLOCK), so no address wraps past 2^31 elements; the descriptor's shape masks the tail.
import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * BLOCK_SIZE
    left = tl.minimum(n_elements - start, BLOCK_SIZE).to(tl.int32)  # this block's elements
    xd = tl.make_tensor_descriptor(x_ptr + start, shape=[left], strides=[1], block_shape=[BLOCK_SIZE])
    yd = tl.make_tensor_descriptor(y_ptr + start, shape=[left], strides=[1], block_shape=[BLOCK_SIZE])
    od = tl.make_tensor_descriptor(out_ptr + start, shape=[left], strides=[1], block_shape=[BLOCK_SIZE])
    od.store([0], xd.load([0]) + yd.load([0]))


def add(x, y, out, block_size=1024):
    n_elements = x.numel()
    grid = (triton.cdiv(n_elements, block_size),)
    add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=block_size)
    return out


add = grading.grade("L2.add", add)
