# HONEST (ACCEPT expected): round 10's h35 (two launches: an online statistics kernel storing each row's m and l,
# then a normalising kernel), except that m and l live in one fp32 workspace of at least 256 elements (m at
# [0, rows), l at [rows, 2 rows), one pointer argument), a common habit (a minimum allocation, a workspace sized once). Each row is read
# twice and its statistics are 2 values, as in h35; but the workspace has more than 2 elements per row when rows
# is small, so _online_row_loads counts its loads as other memory, and on the 1x1 shape the slack of one element
# per row does not cover the 2 statistics read back.
import torch, triton, triton.language as tl
import gpuperf.kernels  # noqa: F401
KEY, ENTRY = "L3.online", "online_softmax"

@triton.jit
def row_stats_kernel(x_ptr, work_ptr, n_rows, n_cols, x_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    cols = tl.arange(0, BLOCK)
    m = -float("inf")
    l = 0.0
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        shift = tl.where(m_new == -float("inf"), 0.0, m_new)
        l = l * tl.exp(m - shift) + tl.sum(tl.exp(x - shift), axis=0)
        m = m_new
    tl.store(work_ptr + row, m)
    tl.store(work_ptr + n_rows + row, l)

@triton.jit
def normalize_kernel(x_ptr, y_ptr, work_ptr, n_rows, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = tl.load(work_ptr + row)
    inv_l = 1.0 / tl.load(work_ptr + n_rows + row)
    cols = tl.arange(0, BLOCK)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_ptr + row * y_row_stride + start + cols, (tl.exp(x - m) * inv_l).to(y_ptr.dtype.element_ty), mask=mask)

def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    work = torch.empty((max(2 * n_rows, 256),), dtype=torch.float32, device=x.device)
    row_stats_kernel[(n_rows,)](x, work, n_rows, n_cols, x.stride(0), BLOCK=block)
    normalize_kernel[(n_rows,)](x, y, work, n_rows, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


from gpuperf import grading  # noqa: E402

online_softmax = grading.grade("L3.online", online_softmax)
