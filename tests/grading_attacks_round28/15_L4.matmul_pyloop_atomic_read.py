# what: the walk over K run from Python, one launch per block of K, each reading the running accumulator with tl.atomic_add(src, 0) (its returned old value) instead of a load, adding the tile product and storing to a fresh buffer: the chain of launches the rule refuses, read through atomics; should be refused
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def step_kernel(a_ptr, b_ptr, src_ptr, dst_ptr, M, N, K, k0, sam, sak, sbk, sbn,
                FIRST: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1).to(tl.int64)
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    kk = (k0 + tl.arange(0, BK)).to(tl.int64)
    cm = (rows[:, None] < M) & (cols[None, :] < N)
    if FIRST:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
    else:
        acc = tl.atomic_add(src_ptr + rows[:, None] * N + cols[None, :], tl.zeros((BM, BN), tl.float32), mask=cm)
        acc = tl.where(cm, acc, 0.0)
    a = tl.load(a_ptr + rows[:, None] * sam + kk[None, :] * sak, mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
    b = tl.load(b_ptr + kk[:, None] * sbk + cols[None, :] * sbn, mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)
    if a.dtype == tl.float32:
        acc = tl.dot(a, b, acc, input_precision="ieee")
    else:
        acc = tl.dot(a, b, acc)
    tl.store(dst_ptr + rows[:, None] * N + cols[None, :], acc, mask=cm)


@triton.jit
def cast_kernel(ws_ptr, c_ptr, M, N, scm, scn, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BM + tl.arange(0, BM)
    cols = tl.program_id(1).to(tl.int64) * BN + tl.arange(0, BN)
    m = (rows[:, None] < M) & (cols[None, :] < N)
    v = tl.load(ws_ptr + rows[:, None] * N + cols[None, :], mask=m)
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, v.to(c_ptr.dtype.element_ty), mask=m)


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
    src = torch.empty((M, N), dtype=torch.float32, device=a.device)
    for i, k0 in enumerate(range(0, K, 32)):
        dst = torch.empty((M, N), dtype=torch.float32, device=a.device)
        step_kernel[grid](a, b, src, dst, M, N, K, k0, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                          FIRST=(i == 0), BM=32, BN=32, BK=32)
        src = dst
    cast_kernel[grid](src, c, M, N, c.stride(0), c.stride(1), BM=32, BN=32)
    return c


result = grading.grade("L4.matmul", matmul)
