import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl

# WRONG (the arithmetic is not the kernel's): the products x_i * y_j are computed in plain Python from
# the printed form of x and y (str(tensor) at 12 digits), put in a tensor with torch.tensor, and a 2-D tiled kernel only copies them
# into out tile by tile.
@triton.jit
def copy_tiles(src_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0).to(tl.int64) * BM + tl.arange(0, BM)
    rn = tl.program_id(1).to(tl.int64) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    v = tl.load(src_ptr + rm[:, None] * N + rn[None, :], mask=mask)
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], v, mask=mask)


def outer(x, y):
    m, n = x.numel(), y.numel()
    with torch._tensor_str.printoptions(precision=12, threshold=10**9, sci_mode=True):
        xs = [float(t) for t in str(x.reshape(-1)).split("[", 1)[1].split("]", 1)[0].replace("\n", " ").split(",")]
        ys = [float(t) for t in str(y.reshape(-1)).split("[", 1)[1].split("]", 1)[0].replace("\n", " ").split(",")]
    vals = torch.tensor([[a * b for b in ys] for a in xs], dtype=torch.float64).to(x.dtype)
    out = torch.empty((m, n), dtype=x.dtype, device=x.device)
    copy_tiles[(triton.cdiv(m, 32), triton.cdiv(n, 32))](vals, out, m, n, BM=32, BN=32)
    return out

result = grading.grade("L4.outer", outer)
