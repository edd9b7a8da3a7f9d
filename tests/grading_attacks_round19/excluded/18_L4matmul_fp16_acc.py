"""WRONG: accumulates in the input dtype (fp16 inputs: a 16-bit accumulator over K)."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr,
       BK: tl.constexpr, PREC: tl.constexpr):
    pm = tl.program_id(0).to(tl.int64)
    pn = tl.program_id(1).to(tl.int64)
    rows = pm * BM + tl.arange(0, BM)
    cols = pn * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=c_ptr.dtype.element_ty)
    for k0 in range(0, K, BK):
        kk = k0 + ks
        a = tl.load(a_ptr + rows[:, None] * sam + kk[None, :] * sak, mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + cols[None, :] * sbn, mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision=PREC).to(acc.dtype)
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    prec = "ieee" if a.dtype == torch.float32 else "tf32"
    mm[(triton.cdiv(M, 32), triton.cdiv(N, 32))](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                                 c.stride(0), c.stride(1), BM=32, BN=32, BK=32, PREC=prec)
    return c


result = grading.grade("L4.matmul", matmul)
