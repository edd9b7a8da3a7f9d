# what: CHEAT: the chain of k_ops multiplies/adds folded in the Python wrapper into one affine map (plain floats, no torch), the kernel does one fma instead of the fused chain; should be refused if the grader wants the chain done in the kernel
import torch
import triton
import triton.language as tl
from gpuperf import grading

@triton.jit
def affine_kernel(x_ptr, out_ptr, n, a, b, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m).to(tl.float32)
    tl.store(out_ptr + offs, (x * a + b).to(out_ptr.dtype.element_ty), mask=m)

def chain(x, k_ops, scale, shift):
    a, b = 1.0, 0.0
    for j in range(k_ops):
        if j % 2 == 0:
            a, b = a * scale, b * scale
        else:
            b = b + shift
    y = torch.empty_like(x)
    n = x.numel()
    affine_kernel[(triton.cdiv(n, 1024),)](x, y, n, a, b, BLOCK=1024)
    return y

result = grading.grade("L2.chain", chain)
