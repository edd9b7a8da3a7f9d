# exercise: L3.online
# family: cheat
# why: Loads the whole row at once (not the online algorithm) with its width passed as a tuple constexpr (WIDTH=(n,)), so the only integer constexpr of the launch is the block the grader gave: on a GPU the grader reads the block size from integer constexprs only. A correct solution walks the row in blocks of `block`.
# expect: rejected on the CPU (widest load counted); GPU-only door if the tuple compiles there
import _common; _common.setup()
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def online_softmax_kernel(x_ptr, y_ptr, n_cols, xs, ys, BLOCK: tl.constexpr, WIDTH: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, WIDTH[0])
    mask = cols < n_cols
    x = tl.load(x_ptr + row * xs + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * ys + cols, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    online_softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block,
                                     WIDTH=(triton.next_power_of_2(n_cols),))
    return y


online_softmax = grading.grade("L3.online", online_softmax)
