# honest: as h35 (a statistics kernel, one online pass per row, m and l to fp32 vectors), but the normalising
# pass runs one program per (row, block of the row): grid (rows, cdiv(n_cols, BLOCK)), rows on axis 0, the
# usual way to spread a long row over the GPU; each element still read twice: ACCEPT (or a documented refusal)
import torch, triton, triton.language as tl
import gpuperf.kernels  # noqa: F401
KEY, ENTRY = "L3.online", "online_softmax"

@triton.jit
def row_stats_kernel(x_ptr, m_ptr, l_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):
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
    tl.store(m_ptr + row, m)
    tl.store(l_ptr + row, l)

@triton.jit
def normalize_kernel(x_ptr, y_ptr, m_ptr, l_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = tl.load(m_ptr + row)
    inv_l = 1.0 / tl.load(l_ptr + row)
    start = tl.program_id(1).to(tl.int64) * BLOCK
    cols = tl.arange(0, BLOCK)
    if True:
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_ptr + row * y_row_stride + start + cols, (tl.exp(x - m) * inv_l).to(y_ptr.dtype.element_ty), mask=mask)

def online_softmax(x, block=1024):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    m = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    l = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    row_stats_kernel[(n_rows,)](x, m, l, n_cols, x.stride(0), BLOCK=block)
    normalize_kernel[(n_rows, triton.cdiv(n_cols, block))](x, y, m, l, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y


from gpuperf import grading  # noqa: E402

online_softmax = grading.grade("L3.online", online_softmax)
