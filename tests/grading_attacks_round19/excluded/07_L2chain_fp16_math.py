"""WRONG: runs the chain in the input's dtype (fp16 inputs: every multiply and add rounded to fp16),
instead of fp32 registers: the error grows with the number of operations (k_ops roundings)."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def chain_kernel(x_ptr, out_ptr, n, scale, shift, K_OPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask)
    dt = x_ptr.dtype.element_ty
    for j in tl.static_range(K_OPS):
        if j % 2 == 0:
            y = (y * scale).to(dt)
        else:
            y = (y + shift).to(dt)
    tl.store(out_ptr + offs, y.to(dt), mask=mask)


def chain(x, k_ops, scale, shift):
    out = torch.empty_like(x)
    n = x.numel()
    chain_kernel[(triton.cdiv(n, 1024),)](x, out, n, scale, shift, K_OPS=k_ops, BLOCK=1024)
    return out


result = grading.grade("L2.chain", chain)
