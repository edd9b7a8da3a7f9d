"""WRONG/LAZY: the kernel does only the multiplies; the shifts are added by torch afterwards
(an extra pass over memory, not fused)."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, scale, K_OPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    for j in tl.static_range(K_OPS):
        if j % 2 == 0:
            y = y * scale
    tl.store(out_ptr + offs, y, mask=mask)


def chain(x, k_ops, scale, shift):
    tmp = torch.empty(x.shape, dtype=torch.float32, device=x.device)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 1024),)](x, tmp, n, scale, K_OPS=k_ops, BLOCK=1024)
    # shifts: the j-th shift (odd j) is multiplied by the scales after it
    b = 0.0
    for j in range(k_ops):
        b = b * scale if j % 2 == 0 else b + shift
    return (tmp + b).to(x.dtype)


result = grading.grade("L2.chain", chain)
