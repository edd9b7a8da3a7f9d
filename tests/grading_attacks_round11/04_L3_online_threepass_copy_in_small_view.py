# WRONG (REFUSE expected): not the online softmax at all but the three-pass one (a pass for the max, one for the
# sum, one to write). Pass 1 reads x for the max and writes an fp32 copy of x to scratch; pass 2 walks that copy
# for the sum; pass 3 reads x again and writes y: every element is read three times (file 12 of round 10 was
# refused for this). The copy is handed to the sum kernel as a (rows, 2) view with strides (cols, cols - 1): a
# tensor of 2 elements per row, which _online_row_loads takes for "a row's statistics" and leaves out, although
# its address range (first to last element) spans the whole copy, and the kernel reads all of it.
# (Deliberate: the view is made to look small.)
import torch, triton, triton.language as tl
import gpuperf.kernels  # noqa: F401
KEY, ENTRY = "L3.online", "online_softmax"

@triton.jit
def max_copy_kernel(x_ptr, c_ptr, m_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = -float("inf")
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * x_row_stride + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(c_ptr + row * n_cols + start + cols, x, mask=mask)
        m = tl.maximum(m, tl.max(x, axis=0))
    tl.store(m_ptr + row, m)

@triton.jit
def sum_kernel(c_ptr, m_ptr, l_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = tl.load(m_ptr + row)
    shift = tl.where(m == -float("inf"), 0.0, m)
    l = 0.0
    for start in range(0, n_cols, BLOCK):
        x = tl.load(c_ptr + row * n_cols + start + cols, mask=start + cols < n_cols, other=float("-inf"))
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
    m = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    l = torch.empty((n_rows,), dtype=torch.float32, device=x.device)
    copy = torch.empty((n_rows * n_cols + 2,), dtype=torch.float32, device=x.device)
    max_copy_kernel[(n_rows,)](x, copy, m, n_cols, x.stride(0), BLOCK=block)
    small = copy.as_strided((n_rows, 2), (n_cols, max(n_cols - 1, 1)))  # 2 elements a row, spanning the copy
    sum_kernel[(n_rows,)](small, m, l, n_cols, BLOCK=block)
    write_kernel[(n_rows,)](x, y, m, l, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    return y
