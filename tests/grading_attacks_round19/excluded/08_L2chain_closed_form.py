"""WRONG (lazy): folds the chain into one multiply-add y = x * A + B with A = scale^ceil(k/2) and B the
folded shifts, computed on the host in fp32 through Python floats rounded... the folding itself is fine
algebra, but here B is computed with scale and shift rounded to fp16 first (a wrong constant)."""
import numpy as np
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def fma_kernel(x_ptr, out_ptr, n, a, b, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask).to(tl.float32) * a + b
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def chain(x, k_ops, scale, shift):
    s16, h16 = float(np.float16(scale)), float(np.float16(shift))
    a, b = 1.0, 0.0
    for j in range(k_ops):
        if j % 2 == 0:
            a, b = a * s16, b * s16
        else:
            b = b + h16
    out = torch.empty_like(x)
    n = x.numel()
    fma_kernel[(triton.cdiv(n, 1024),)](x, out, n, a, b, BLOCK=1024)
    return out


result = grading.grade("L2.chain", chain)
