# WRONG (resources): 256 x 256 x 256 tiles (fp32 A and B tiles: 512 KiB, over the 232,448 B of shared memory an
# H100/H200 gives a program: no GPU can run it); each tile is laundered through a reduction (tl.sum over a join with
# zeros, the same values) so it no longer counts as a loaded tile for the shared-memory check.
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
        a = tl.sum(tl.join(a, tl.zeros_like(a)), axis=2).to(a.dtype)
        b = tl.sum(tl.join(b, tl.zeros_like(b)), axis=2).to(b.dtype)
        acc = tl.dot(a, b, acc, input_precision=PREC)
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    BM, BN, BK = 256, 256, 256
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
    prec = "ieee" if a.dtype == torch.float32 else "tf32"
    mm_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                    c.stride(0), c.stride(1), BM=BM, BN=BN, BK=BK, PREC=prec)
    return c


result = grading.grade("L4.matmul", matmul)
