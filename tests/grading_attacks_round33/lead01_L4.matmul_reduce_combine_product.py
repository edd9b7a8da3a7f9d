# WRONG/LAZY: the products of 31 of every 32 k are made by tl.reduce over a 3-D tile of broadcast pairs
# (a[:, :, None], b[None, :, :]) whose combine function multiplies: combine((x1, y1), (x2, y2)) =
# (x1*y1 + x2*y2, 1), so any reduction tree gives sum_k a[m,k] b[k,n]; the multiplies live in the reduce's
# region as scalars. tl.dot does one column of each tile.
import torch, triton, triton.language as tl
from gpuperf import grading


@triton.jit
def _pair(x1, y1, x2, y2):
    return x1 * y1 + x2 * y2, tl.full(x1.shape, 1.0, x1.dtype)


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    pid_m = pid // tiles_n
    pid_n = pid % tiles_n
    rows = (pid_m * BM + tl.arange(0, BM)).to(tl.int64)
    cols = (pid_n * BN + tl.arange(0, BN)).to(tl.int64)
    ks = tl.arange(0, BK).to(tl.int64)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        k_ok = k0 + ks < K
        a = tl.load(a_ptr + rows[:, None] * sam + (k0 + ks)[None, :] * sak,
                    mask=(rows[:, None] < M) & k_ok[None, :], other=0.0).to(tl.float32)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * sbk + cols[None, :] * sbn,
                    mask=k_ok[:, None] & (cols[None, :] < N), other=0.0).to(tl.float32)
        a1 = tl.where(ks[None, :] == 0, a, 0.0)
        acc = tl.dot(a1, b, acc, input_precision="ieee")
        rest = tl.where(ks[None, :] == 0, 0.0, a)
        x3 = tl.broadcast_to(rest[:, :, None], (BM, BK, BN))
        y3 = tl.broadcast_to(b[None, :, :], (BM, BK, BN))
        part, _ = tl.reduce((x3, y3), 1, _pair)
        acc += part
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    BM, BN, BK = 32, 32, 32
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
    mm_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                    c.stride(0), c.stride(1), BM=BM, BN=BN, BK=BK)
    return c


result = grading.grade("L4.matmul", matmul)
