import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl

# HONEST: the fused chain with k_ops a run-time argument (one compiled kernel for every k_ops) and each
# (scale, shift) pair applied as one fused multiply-add, which rounds once instead of twice.
@triton.jit
def chain_kernel(x_ptr, out_ptr, n, k_ops, scale, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    for _ in range(k_ops // 2):
        y = tl.fma(y, scale, shift)
    if k_ops % 2 == 1:
        y = y * scale
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def chain(x, k_ops, scale, shift):
    out = torch.empty_like(x)
    n = x.numel()
    chain_kernel[(triton.cdiv(n, 1024),)](x, out, n, k_ops, scale, shift, BLOCK=1024)
    return out

result = grading.grade("L2.chain", chain)
