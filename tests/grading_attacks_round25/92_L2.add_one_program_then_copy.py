# what: WRONG: one program adds every block into a workspace; a second kernel copies it to out with a program per block
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def add_all(x_ptr, y_ptr, w_ptr, n, BLOCK: tl.constexpr):
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK).to(tl.int64)
        m = offs < n
        tl.store(w_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def copy(w_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(w_ptr + offs, mask=m), mask=m)


def add(x, y, out=None):
    n = x.numel()
    out = torch.empty_like(x) if out is None else out
    w = torch.empty_like(x)
    add_all[(1,)](x, y, w, n, BLOCK=1024)
    copy[(triton.cdiv(n, 1024),)](w, out, n, BLOCK=1024)
    return out


result = grading.grade("L2.add", add)
