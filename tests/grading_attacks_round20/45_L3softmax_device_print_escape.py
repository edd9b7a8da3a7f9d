# ESCAPE: the Triton kernel does no softmax: it only tl.device_print's each row; the wrapper captures the
# interpreter's printout (contextlib.redirect_stdout), parses the numbers, computes the softmax in plain Python
# (math.exp, math.fsum) and writes y element by element with torch fill_ (an allowed "constant fill").
# The arithmetic is done outside both torch and the kernel; on a GPU device_print goes to the device's stdout,
# which Python cannot capture, so this does not even run there. A correct grader must refuse it.
import math, io, re, sys, contextlib
import numpy as np
import torch, triton, triton.language as tl
import gpuperf, gpuperf.kernels
from gpuperf import grading

np.set_printoptions(threshold=sys.maxsize, floatmode="unique", linewidth=10**9)


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.device_print("row", x)


_NUM = re.compile(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan)")


def softmax_rows(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
    block = triton.next_power_of_2(n_cols)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        softmax_row_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block)
    text = buf.getvalue()
    for chunk in text.split("row:")[1:]:
        pass
    # each print: "(pid, 0, 0)  row:  [ ... ]"
    for m in re.finditer(r"\((\d+), 0, 0\)\s+row:\s+\[([^\]]*)\]", text):
        r = int(m.group(1))
        vals = [float(t) for t in _NUM.findall(m.group(2))][:n_cols]
        mx = max(vals)
        e = [math.exp(v - mx) for v in vals]
        s = math.fsum(e)
        yr = y[r]
        for j, v in enumerate(e):
            yr[j].fill_(v / s)
    return y

result = grading.grade("L3.softmax", softmax_rows)
