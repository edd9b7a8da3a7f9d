# WRONG (REFUSE expected): the three-pass softmax (a pass for the max, one for the sum, one to write), every
# element of x read three times (file 12 of round 10 was refused for this). In the max pass, lane 0 of every load
# points at a one-element-per-row scratch (its value ignored), lanes 1.. at x: the tracer names a load's tensor by
# its first active lane (name_of), so the whole pass is counted as loads of "a row's statistics", left out of
# L3.online's pass count. (Deliberate: a load made to straddle two tensors.)
import torch, triton, triton.language as tl
import gpuperf.kernels  # noqa: F401
KEY, ENTRY = "L3.online", "online_softmax"

@triton.jit
def max_kernel(x_ptr, s_ptr, m_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    lane = tl.arange(0, BLOCK)
    m = -float("inf")
    for start in range(0, n_cols, BLOCK - 1):
        col = start + lane - 1
        ptrs = tl.where(lane == 0, s_ptr + row, x_ptr + row * x_row_stride + col)
        ok = (lane == 0) | (col < n_cols)
        x = tl.load(ptrs, mask=ok, other=float("-inf")).to(tl.float32)
        x = tl.where((lane > 0) & (col < n_cols), x, float("-inf"))
        m = tl.maximum(m, tl.max(x, axis=0))
    tl.store(m_ptr + row, m)

@triton.jit
def sum_kernel(x_ptr, m_ptr, l_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = tl.load(m_ptr + row)
    shift = tl.where(m == -float("inf"), 0.0, m)
    l = 0.0
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * x_row_stride + start + cols, mask=start + cols < n_cols, other=float("-inf")).to(tl.float32)
        l += tl.sum(tl.exp(x - shift), axis=0)
    tl.store(l_ptr + row, l)

@triton.jit
def write_kernel(x_ptr, y_ptr, m_ptr, l_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = tl.load(m_ptr + row)
    shift = tl.where(m == -float("inf"), 0.0, m)
    inv_l = 1.0 / tl.load(l_ptr + row)
    cols = tl.arange(0, BLOCK)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_ptr + row * y_row_stride + start + cols, (tl.exp(x - shift) * inv_l).to(y_ptr.dtype.element_ty), mask=mask)

def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    s = torch.zeros((n_rows,), dtype=x.dtype, device=x.device)
    m = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    l = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    max_kernel[(n_rows,)](x, s, m, n_cols, x.stride(0), BLOCK=block)
    sum_kernel[(n_rows,)](x, m, l, n_cols, x.stride(0), BLOCK=block)
    write_kernel[(n_rows,)](x, y, m, l, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


from gpuperf import grading  # noqa: E402

online_softmax = grading.grade("L3.online", online_softmax)
