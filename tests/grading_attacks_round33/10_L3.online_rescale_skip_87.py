# WRONG: online softmax whose running shift moves only when a block's max passes it by more than 87: the
# terms exp(x - m) reach e^87 = 6e37, so a row with a few values 87 above its first block's max overflows the
# fp32 sum to inf (y = 0 there) although softmax is well defined. A rescale skipped for rises far beyond 2^-9.
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def online_kernel(x_ptr, y_ptr, n_cols, sx, sy, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    xr = x_ptr + row * sx
    yr = y_ptr + row * sy
    cols = tl.arange(0, BLOCK)
    m = -float("inf")
    l = 0.0
    for start in range(0, n_cols, BLOCK):
        x = tl.load(xr + start + cols, mask=start + cols < n_cols, other=float("-inf")).to(tl.float32)
        bm = tl.max(x, axis=0)
        if bm > m + 87.0:
            l = l * tl.exp(m - bm)
            m = bm
        shift = tl.where(m == -float("inf"), 0.0, m)
        l += tl.sum(tl.exp(x - shift), axis=0)
    inv = 1.0 / l
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(xr + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(yr + start + cols, (tl.exp(x - m) * inv).to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    online_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


result = grading.grade("L3.online", online_softmax)
