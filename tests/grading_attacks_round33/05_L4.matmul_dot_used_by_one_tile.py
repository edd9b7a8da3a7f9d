# WRONG (cheat): as 01, but the tl.dot result is used only by program 0 in its first block of K; every other tile product is made element-wise by tl.cumprod over
# a tl.join of the broadcast A and B tiles (the multiply lives in the scan's combine region), then tl.sum;
# a full-size tl.dot is computed every block (its multiply-adds are counted) but used only for the first block.
import torch
import triton
import triton.language as tl
from gpuperf import grading


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
        d = tl.dot(a, b, input_precision=PREC)
        a3 = tl.broadcast_to(a.to(tl.float32)[:, :, None], (BM, BK, BN))
        b3 = tl.broadcast_to(b.to(tl.float32)[None, :, :], (BM, BK, BN))
        pair = tl.join(a3, b3)                      # (BM, BK, BN, 2): a[m,k], b[k,n]
        prods = tl.cumprod(pair, axis=3)            # [..., 1] = a[m,k] * b[k,n]
        _, p = tl.split(prods)
        e = tl.sum(p, axis=1)
        acc += tl.where((k0 == 0) & (pid == 0), d, e)
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
