"""HONEST (control of h03): h03's block-parallel online softmax with the row's statistics (m, 1/l) in a
buffer of their own, (rows, 2) fp32, instead of the last slot of the partials' workspace. The same loads of x
(twice), the same partials, the same merge; only where the two statistics of a row live differs.

Expected: accepted (a buffer of at most two values per row is a row's statistics, left out of the pass count),
which shows that h03 is refused for the layout of its workspace alone.
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
def merge_kernel(ws_ptr, st_ptr, n_blocks, ws_row, BLOCK_B: tl.constexpr):
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
    tl.store(st_ptr + row * 2, m)
    tl.store(st_ptr + row * 2 + 1, 1.0 / l)


@triton.jit
def write_kernel(x_ptr, y_ptr, st_ptr, n_cols, x_stride, y_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    blk = tl.program_id(1).to(tl.int64)
    m = tl.load(st_ptr + row * 2)
    inv_l = tl.load(st_ptr + row * 2 + 1)
    cols = blk * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    tl.store(y_ptr + row * y_stride + cols, (tl.exp(x - m) * inv_l).to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    n_blocks = triton.cdiv(n_cols, block)
    ws = torch.empty((n_rows, n_blocks, 2), dtype=torch.float32, device=x.device)
    st = torch.empty((n_rows, 2), dtype=torch.float32, device=x.device)  # the row's (m, 1/l): a buffer of its own
    grid = (n_rows, n_blocks)
    partial_kernel[grid](x, ws, n_cols, x.stride(0), ws.stride(0), BLOCK=block)
    merge_kernel[(n_rows,)](ws, st, n_blocks, ws.stride(0), BLOCK_B=64)
    write_kernel[grid](x, y, st, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


result = grading.grade("L3.online", online_softmax)
