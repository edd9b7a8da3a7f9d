"""HONEST: an online softmax spread over the blocks of a row (a long row is shared by many programs, as a GPU
wants when rows are few and long): kernel 1, one program per (row, block), reads its block once and stores
the block's max m_b and sum l_b = sum exp(x - m_b); kernel 2, one program per row, merges the partial (m, l) of
the row with the online-softmax rule (l = sum l_b exp(m_b - m)) and stores the row's m and 1/l; kernel 3, one
program per (row, block), reads its block again and writes exp(x - m) / l. x is read exactly twice (once for
the max and sum, once to write), each load one block of the size the grader gives. The partials and the row's
statistics live in ONE workspace of the function's own, (rows, blocks + 1, 2) fp32: the row's (m, 1/l) in the
last slot.

Why the grader may refuse it: `_online_row_loads` leaves out of the pass count a row's statistics only as
"memory outside x and y of at most two values per row" or "two loads per row from any other memory"; here the
row's two statistics are read by each of the row's block programs (2 per block), and the merge reads 2 per
block: 4 * blocks - 2 loads per row of other memory (160 for a row of 5,000 at block 128), past the allowance
of one block per row (`rows * min(block, cols)`), on the (3, 4096 + r) case. The same kernels with the row's
statistics in a buffer of their own (h04) read the same amount of x and nearly the same of workspace.
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def partial_kernel(x_ptr, ws_ptr, n_cols, x_stride, ws_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    blk = tl.program_id(1).to(tl.int64)
    cols = blk * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    shift = tl.where(m == -float("inf"), 0.0, m)
    l = tl.sum(tl.exp(x - shift), axis=0)
    tl.store(ws_ptr + row * ws_row + blk * 2, m)
    tl.store(ws_ptr + row * ws_row + blk * 2 + 1, l)


@triton.jit
def merge_kernel(ws_ptr, n_blocks, ws_row, BLOCK_B: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = -float("inf")
    l = 0.0
    for start in range(0, n_blocks, BLOCK_B):  # the partials, a block of them at a time (online)
        b = start + tl.arange(0, BLOCK_B)
        ok = b < n_blocks
        mb = tl.load(ws_ptr + row * ws_row + b * 2, mask=ok, other=float("-inf"))
        lb = tl.load(ws_ptr + row * ws_row + b * 2 + 1, mask=ok, other=0.0)
        m_new = tl.maximum(m, tl.max(mb, axis=0))
        shift = tl.where(m_new == -float("inf"), 0.0, m_new)
        mb_s = tl.where(mb == -float("inf"), shift, mb)
        l = l * tl.exp(m - shift) + tl.sum(tl.where(lb > 0, lb * tl.exp(mb_s - shift), 0.0), axis=0)
        m = m_new
    tl.store(ws_ptr + row * ws_row + n_blocks * 2, m)
    tl.store(ws_ptr + row * ws_row + n_blocks * 2 + 1, 1.0 / l)


@triton.jit
def write_kernel(x_ptr, y_ptr, ws_ptr, n_cols, n_blocks, x_stride, y_stride, ws_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    blk = tl.program_id(1).to(tl.int64)
    m = tl.load(ws_ptr + row * ws_row + n_blocks * 2)
    inv_l = tl.load(ws_ptr + row * ws_row + n_blocks * 2 + 1)
    cols = blk * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    tl.store(y_ptr + row * y_stride + cols, (tl.exp(x - m) * inv_l).to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    n_blocks = triton.cdiv(n_cols, block)
    ws = torch.empty((n_rows, n_blocks + 1, 2), dtype=torch.float32, device=x.device)
    grid = (n_rows, n_blocks)
    partial_kernel[grid](x, ws, n_cols, x.stride(0), ws.stride(0), BLOCK=block)
    merge_kernel[(n_rows,)](ws, n_blocks, ws.stride(0), BLOCK_B=64)
    write_kernel[grid](x, y, ws, n_cols, n_blocks, x.stride(0), y.stride(0), ws.stride(0), BLOCK=block)
    return y


result = grading.grade("L3.online", online_softmax)
