# what: honest outer product on a 1-D grid (pid split into tile row/col in 64 bits) storing through a block pointer with boundary_check; should pass
import torch
import triton
import triton.language as tl
from gpuperf import grading

@triton.jit
def outer_kernel(x_ptr, y_ptr, out_ptr, M, N, som, son, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    tn = tl.cdiv(N, BN)
    pm = pid // tn
    pn = pid % tn
    rows = pm * BM + tl.arange(0, BM)
    cols = pn * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rows, mask=rows < M, other=0.0)
    y = tl.load(y_ptr + cols, mask=cols < N, other=0.0)
    tile = tl.expand_dims(x, 1) * tl.expand_dims(y, 0)
    optr = tl.make_block_ptr(out_ptr, shape=(M, N), strides=(som, son), offsets=((pm * BM).to(tl.int32), (pn * BN).to(tl.int32)),
                             block_shape=(BM, BN), order=(1, 0))
    tl.store(optr, tile.to(out_ptr.dtype.element_ty), boundary_check=(0, 1))

def outer(x, y):
    M, N = x.shape[0], y.shape[0]
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(M, 16) * triton.cdiv(N, 64),)
    outer_kernel[grid](x, y, out, M, N, out.stride(0), out.stride(1), BM=16, BN=64)
    return out

result = grading.grade("L4.outer", outer)
