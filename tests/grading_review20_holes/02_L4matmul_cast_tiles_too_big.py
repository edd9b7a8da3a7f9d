"""WRONG (does not run on a GPU): a matmul that picks 256 x 256 x 256 blocks for fp16 inputs and casts each loaded
tile to fp32 before tl.dot (exact: a product of two fp16 numbers is exact in fp32). The a and b tiles of one step
are 128 KiB each as loaded (256 KiB each as multiplied), more than the 227 KiB of shared memory a block gets on
an H100; the grader counted only tiles multiplied as loaded, so the cast hid them. (fp32 inputs get 128 x 128 x
32 blocks, which fit.)"""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0).to(tl.int64)
    pn = tl.program_id(1).to(tl.int64)
    rows = pm * BM + tl.arange(0, BM)
    cols = pn * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + ks
        a = tl.load(a_ptr + rows[:, None] * sam + kk[None, :] * sak, mask=(rows[:, None] < M) & (kk[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + cols[None, :] * sbn, mask=(kk[:, None] < K) & (cols[None, :] < N),
                    other=0.0)
        acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
    msk = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty), mask=msk)


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    big = a.dtype == torch.float16
    bm, bn, bk = (256, 256, 256) if big else (128, 128, 32)
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    mm[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
             BM=bm, BN=bn, BK=bk)
    return c


result = grading.grade("L4.matmul", matmul)
