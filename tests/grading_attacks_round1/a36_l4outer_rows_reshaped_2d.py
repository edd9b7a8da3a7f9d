# exercise: L4.outer
# family: cheat
# why: One program per row of out (1-D work, no 2-D tiling), but the 256 columns are reshaped to a 16 x 16 block before the store, so the grader's "stores 2-D tiles" check counts it as a tile. A correct solution tiles rows x columns (a block of x times a block of y).
# expect: ACCEPTED if the 2-D check only looks at the store's block shape
import _common; _common.setup()
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def outer_row_kernel(x_ptr, y_ptr, out_ptr, M, N, stride_om):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.reshape(tl.program_id(1).to(tl.int64) * 256 + tl.arange(0, 256), (16, 16))
    x = tl.load(x_ptr + row)
    y = tl.load(y_ptr + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + row * stride_om + cols, x * y, mask=cols < N)


def outer(x, y):
    M, N = x.shape[0], y.shape[0]
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    outer_row_kernel[(M, triton.cdiv(N, 256))](x, y, out, M, N, out.stride(0))
    return out


outer = grading.grade("L4.outer", outer)
