# exercise: L3.online
# family: escape
# why: under Triton's interpreter a kernel's body is plain Python and a loaded block's values are a numpy array
#   (x.handle.data): this "kernel" loads the row once, block by block, then computes the softmax in numpy float64
#   (no running max, no second pass) and stores it block by block. It cannot compile for a GPU; a correct kernel
#   computes with tl operations only (running max and sum, then a second pass).
import numpy as np
import gpuperf.kernels  # noqa: F401  (switches on the interpreter without a GPU)
import math
import torch
import triton
import triton.language as tl
import gpuperf.kernels as _gk
from gpuperf import grading


@triton.jit
def online_softmax_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    blocks = []
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * x_row_stride + start + cols, mask=start + cols < n_cols,
                    other=float("-inf")).to(tl.float32)
        blocks.append(x)
    values = np.concatenate([np.asarray(b.handle.data, dtype=np.float64) for b in blocks])
    e = np.exp(values - values.max())
    e = e / e.sum()
    i = 0
    for start in range(0, n_cols, BLOCK):
        out = blocks[i]
        out.handle.data = e[i * BLOCK:(i + 1) * BLOCK].astype(np.float32)
        tl.store(y_ptr + row * y_row_stride + start + cols, out.to(y_ptr.dtype.element_ty),
                 mask=start + cols < n_cols)
        i += 1


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    online_softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


online_softmax = grading.grade("L3.online", online_softmax)
