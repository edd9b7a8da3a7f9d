"""WRONG: a persistent add whose loop walks block INDICES in 32 bits: for blk in range(pid, n_blocks, nprog),
offsets blk * BLOCK + arange. Past 2^31 elements blk * BLOCK (int32) wraps, so the programs read and write the
wrong elements."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, n_blocks, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for blk in range(pid, n_blocks, tl.num_programs(0)):
        offs = blk * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x, y, out):
    n = x.numel()
    nb = triton.cdiv(n, 1024)
    add_kernel[(max(1, min(nb, 132)),)](x, y, out, n, nb, BLOCK=1024)
    return out


result = grading.grade("L2.add", add)
