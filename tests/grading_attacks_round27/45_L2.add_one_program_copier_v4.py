# what: CHEAT (27, v4: every offset 64-bit, the dummy store at pid.to(int64)): program 0 alone adds the whole vector into scratch, then a full-grid kernel copies scratch to out bit-exactly and stores its program id to a dummy buffer (not "copy only"), so its programs count as out's; should be refused (one program doing every block)
import torch
import triton
import triton.language as tl
from gpuperf import grading

@triton.jit
def all_in_one(x_ptr, y_ptr, s_ptr, n, BLOCK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * BLOCK
    for start in range(base, n, BLOCK):
        offs = start.to(tl.int64) + tl.arange(0, BLOCK).to(tl.int64)
        m = offs < n
        tl.store(s_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

@triton.jit
def copier(s_ptr, out_ptr, d_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(s_ptr + offs, mask=m), mask=m)
    tl.store(d_ptr + pid.to(tl.int64), 1)

def add(x, y, out):
    n = x.numel()
    s = torch.empty_like(x)
    grid = triton.cdiv(n, 1024)
    d = torch.empty(grid, dtype=torch.int32, device=x.device)
    all_in_one[(1,)](x, y, s, n, BLOCK=1024)
    copier[(grid,)](s, out, d, n, BLOCK=1024)
    return out

result = grading.grade("L2.add", add)
