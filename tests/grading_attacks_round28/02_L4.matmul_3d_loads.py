# what: C as an element-wise product of two 3-D tiles loaded directly (A[m,k,n] and B[m,k,n] through 3-D pointers, no tt.broadcast of values) summed over k, beside a decoy tl.dot: a broadcast product off the tensor cores; should be refused
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
    r3 = rows[:, None, None]
    c3 = cols[None, None, :]
    for k0 in range(0, K, BK):
        kk = (k0 + ks).to(tl.int64)
        k3 = kk[None, :, None]
        m3 = (r3 < M) & (k3 < K) & (c3 < N)
        A3 = tl.load(a_ptr + r3 * sam + k3 * sak + c3 * 0, mask=m3, other=0.0).to(tl.float32)
        B3 = tl.load(b_ptr + k3 * sbk + c3 * sbn + r3 * 0, mask=m3, other=0.0).to(tl.float32)
        acc += tl.sum(A3 * B3, axis=1)
        a = tl.load(a_ptr + rows[:, None] * sam + kk[None, :] * sak, mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + cols[None, :] * sbn, mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)
        dec = tl.dot(a, b, dec)
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
