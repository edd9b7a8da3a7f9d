"""HONEST: persistent vector add: a grid of min(#blocks, 132) programs, each walking blocks
pid, pid + P, pid + 2P, ... with a 64-bit loop start; block 2048."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    step = tl.num_programs(0).to(tl.int64) * BLOCK
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x, y, out):
    n = x.numel()
    blocks = triton.cdiv(n, 2048)
    add_kernel[(max(1, min(blocks, 132)),)](x, y, out, n, BLOCK=2048)
    return out


result = grading.grade("L2.add", add)
