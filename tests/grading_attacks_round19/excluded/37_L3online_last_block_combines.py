"""WRONG (a race between programs): online softmax with each long row split over programs. Launch 1, a grid of
(rows, blocks): each program finds its block's max m_b and sum l_b = sum exp(x - m_b) and adds them into a
zeroed workspace with tl.atomic_add (onto 0: a write); the program of the row's LAST block then reads every
block's (m_b, l_b) through the values tl.atomic_add(ptr, 0) returns, combines them into the row's (m, l) and
stores them. That assumes the last block's program runs after the row's other blocks: on a GPU nothing orders
them, and the row's statistics miss the blocks still running. Launch 2 writes y = exp(x - m) / l per block.
Triton's interpreter runs the programs in grid order, which hides the race."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def stats_kernel(x_ptr, ws_ptr, st_ptr, n_cols, sx, NB, NBP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    b = tl.program_id(1).to(tl.int64)
    cols = b * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * sx + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
    m_b = tl.max(x, 0)
    shift = tl.where(m_b == -float("inf"), 0.0, m_b)
    l_b = tl.sum(tl.exp(x - shift), 0)
    tl.atomic_add(ws_ptr + (row * NB + b) * 2, m_b)
    tl.atomic_add(ws_ptr + (row * NB + b) * 2 + 1, l_b)
    if b == NB - 1:  # "the last block": assumed to run after the others
        blocks = tl.arange(0, NBP)
        ok = blocks < NB
        ms = tl.atomic_add(ws_ptr + (row * NB + blocks) * 2, tl.zeros((NBP,), tl.float32), mask=ok)
        ls = tl.atomic_add(ws_ptr + (row * NB + blocks) * 2 + 1, tl.zeros((NBP,), tl.float32), mask=ok)
        ms = tl.where(ok, ms, -float("inf"))
        m = tl.max(ms, 0)
        l = tl.sum(tl.where(ok & (ms > -float("inf")), ls * tl.exp(ms - m), 0.0), 0)
        tl.store(st_ptr + row * 2, m)
        tl.store(st_ptr + row * 2 + 1, l)


@triton.jit
def write_kernel(x_ptr, y_ptr, st_ptr, n_cols, sx, sy, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    b = tl.program_id(1).to(tl.int64)
    cols = b * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    m = tl.load(st_ptr + row * 2)
    l = tl.load(st_ptr + row * 2 + 1)
    x = tl.load(x_ptr + row * sx + cols, mask=mask, other=float("-inf")).to(tl.float32)
    tl.store(y_ptr + row * sy + cols, (tl.exp(x - m) / l).to(y_ptr.dtype.element_ty), mask=mask)


def online(x, block):
    r, c = x.shape
    nb = triton.cdiv(c, block)
    ws = torch.zeros((r, nb, 2), dtype=torch.float32, device=x.device)
    st = torch.empty((r, 2), dtype=torch.float32, device=x.device)
    y = torch.empty((r, c), dtype=x.dtype, device=x.device)
    stats_kernel[(r, nb)](x, ws, st, c, x.stride(0), nb, NBP=triton.next_power_of_2(nb), BLOCK=block)
    write_kernel[(r, nb)](x, y, st, c, x.stride(0), y.stride(0), BLOCK=block)
    return y


result = grading.grade("L3.online", online)
