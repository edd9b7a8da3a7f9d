# what: C as rank-1 updates (a column of A times a row of B, one k at a time) where the row is disguised as b_row[None, :] + 0.0 * a_col[:, None] (a second broadcast, not a constant), beside a decoy tl.dot kept by * 0; the rank-1 rule should refuse it
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1).to(tl.int64)
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    dec = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = (k0 + ks).to(tl.int64)
        a = tl.load(a_ptr + rows[:, None] * sam + kk[None, :] * sak, mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + cols[None, :] * sbn, mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)
        dec = tl.dot(a, b, dec)
        for j in range(0, BK):
            kj = k0 + j
            ac = tl.load(a_ptr + rows * sam + kj * sak, mask=(rows < M) & ((rows * 0 + kj) < K), other=0.0).to(tl.float32)
            br = tl.load(b_ptr + kj * sbk + cols * sbn, mask=(cols < N) & ((cols * 0 + kj) < K), other=0.0).to(tl.float32)
            acc += ac[:, None] * (br[None, :] + 0.0 * ac[:, None])
    out = acc + dec * 0.0
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, out.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
    mm_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1), BM=32, BN=32, BK=16)
    return c


result = grading.grade("L4.matmul", matmul)
