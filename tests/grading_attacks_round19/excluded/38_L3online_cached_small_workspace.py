"""WRONG (out-of-bounds writes): a two-kernel online softmax (kernel 1: a row's running max and sum into a
statistics workspace; kernel 2: y = exp(x - m) / l) whose workspace is allocated ONCE, on the first call, with
that call's number of rows, and kept for every later call. A later call with more rows writes and reads the
statistics of its extra rows past the end of the workspace: on a GPU, out-of-bounds accesses (other tensors'
memory corrupted, or an illegal-address fault)."""
import torch
import triton
import triton.language as tl
from gpuperf import grading

_WS = []


@triton.jit
def stats(x_ptr, st_ptr, n_cols, sx, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = -float("inf")
    l = 0.0
    for s in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * sx + s + cols, mask=s + cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, 0))
        shift = tl.where(m_new == -float("inf"), 0.0, m_new)
        l = l * tl.exp(m - shift) + tl.sum(tl.exp(x - shift), 0)
        m = m_new
    tl.store(st_ptr + row * 2, m)
    tl.store(st_ptr + row * 2 + 1, l)


@triton.jit
def write(x_ptr, y_ptr, st_ptr, n_cols, sx, sy, BLOCK: tl.constexpr):
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
    if not _WS:  # allocated once, sized by the first call
        _WS.append(torch.empty((r, 2), dtype=torch.float32, device=x.device))
    st = _WS[0]
    y = torch.empty((r, c), dtype=x.dtype, device=x.device)
    stats[(r,)](x, st, c, x.stride(0), BLOCK=block)
    write[(r, triton.cdiv(c, block))](x, y, st, c, x.stride(0), y.stride(0), BLOCK=block)
    return y


result = grading.grade("L3.online", online)
