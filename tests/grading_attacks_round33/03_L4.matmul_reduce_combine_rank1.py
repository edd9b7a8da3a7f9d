# WRONG (cheat, the open lead): column 0 of K in every tile is multiplied element-wise inside a tl.reduce whose
# combine function is a multiply (a rank-1 update done in a combine region), the rest with tl.dot.
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def _mul(x, y):
    return x * y


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr):
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
                    mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * sbk + cols[None, :] * sbn,
                    mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        first = (ks == 0) & (k0 == 0)
        a_rest = tl.where(first[None, :], 0.0, a).to(a.dtype)
        acc = tl.dot(a_rest, b, acc, input_precision=PREC)
        if k0 == 0:
            x = tl.sum(tl.where(first[None, :], a.to(tl.float32), 0.0), axis=1)   # column 0 of A
            y = tl.sum(tl.where(first[:, None], b.to(tl.float32), 0.0), axis=0)   # row 0 of B
            pair = tl.join(tl.broadcast_to(x[:, None], (BM, BN)), tl.broadcast_to(y[None, :], (BM, BN)))
            acc += tl.reduce(pair, 2, _mul)
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    BM, BN, BK = 32, 32, 16
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
    prec = "ieee" if a.dtype == torch.float32 else "tf32"
    mm_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                    c.stride(0), c.stride(1), BM=BM, BN=BN, BK=BK, PREC=prec)
    return c


result = grading.grade("L4.matmul", matmul)
