"""WRONG (lazy): the rows one after another, a Python loop of one launch per row (round 16's 22, round 17's 03).
Each launch has a grid of one program per row, but only program `row` computes: the programs of the rows
already done add 0 to their row of y with `tl.atomic_add` (a write the output keeps, changing nothing), the programs of the rows still to come store
zeros (a placeholder the later launches overwrite). No two rows are ever computed at the same time.

Why the grader should accept it: the new launch-loop rule (`_spread_check`) calls a launch narrow when it has
few programs writing y, counting every write (`2 * programs < need`) or only the writes the output keeps
(`0 < 2 * kept < need`, `_surviving_writes`). Every launch here has n_rows programs writing; the writes of every
launch but the last are all overwritten (kept = 0: not narrow), and in the last launch every program's write is
kept (n_rows of them: not narrow). The atomic adds of zero are "kept" writes by address, though they compute nothing:
`_surviving_writes` looks at addresses, not at whether the kept value was computed by that program. (A plain
load and store back is caught by the pass count, since the load of y links to x through lineage; an atomic's
read of the old value adds no lineage load, `_lineage_loads` being filled by loads only.)
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, row0, n_cols, x_stride, y_stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    row = pid.to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    if pid < row0:  # a row done by an earlier launch: add zero to it (an atomic: a write that reads nothing back)
        tl.atomic_add(y_ptr + row * y_stride + cols,
                      tl.zeros((BLOCK,), dtype=tl.float32).to(y_ptr.dtype.element_ty), mask=mask)
    elif pid > row0:  # a row still to come: placeholder
        tl.store(y_ptr + row * y_stride + cols, tl.zeros((BLOCK,), dtype=tl.float32).to(y_ptr.dtype.element_ty),
                 mask=mask)
    else:
        x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=float("-inf"))
        x = x.to(tl.float32)
        shifted = x - tl.max(x, axis=0)
        numerator = tl.exp(shifted)
        y = numerator / tl.sum(numerator, axis=0)
        tl.store(y_ptr + row * y_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    for row in range(n_rows):  # one row computed per launch, by one program
        softmax_row_kernel[(n_rows,)](x, y, row, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


result = grading.grade("L3.softmax", softmax_rows)
