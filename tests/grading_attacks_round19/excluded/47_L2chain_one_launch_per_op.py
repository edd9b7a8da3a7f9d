"""LAZY: not fused: one kernel launch per operation of the chain (k_ops passes over memory, each reading and
writing an fp32 temporary), the opposite of what the exercise teaches."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def op_kernel(src_ptr, dst_ptr, n, a, b, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(src_ptr + offs, mask=mask).to(tl.float32) * a + b
    tl.store(dst_ptr + offs, y.to(dst_ptr.dtype.element_ty), mask=mask)


def chain(x, k_ops, scale, shift):
    n = x.numel()
    grid = (triton.cdiv(n, 1024),)
    cur = x
    for j in range(k_ops):
        nxt = torch.empty(x.shape, dtype=torch.float32, device=x.device)
        a, b = (scale, 0.0) if j % 2 == 0 else (1.0, shift)
        op_kernel[grid](cur, nxt, n, a, b, BLOCK=1024)
        cur = nxt
    out = torch.empty_like(x)
    op_kernel[grid](cur, out, n, 1.0, 0.0, BLOCK=1024)
    return out


result = grading.grade("L2.chain", chain)
