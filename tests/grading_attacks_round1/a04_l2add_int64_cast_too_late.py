# exercise: L2.add
# family: ordinary
# why: Computes the offsets in int32 and casts the result to int64 afterwards: pid * BLOCK_SIZE has already wrapped past 2^31 elements. A correct solution converts the program id to int64 before the multiplication.
# expect: ACCEPTED if the grader only looks at the dtype of the final offset
import _common; _common.setup()
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = (tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)).to(tl.int64)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, out, block_size=1024):
    n = x.numel()
    add_kernel[(triton.cdiv(n, block_size),)](x, y, out, n, BLOCK_SIZE=block_size)
    return out


add = grading.grade("L2.add", add)
