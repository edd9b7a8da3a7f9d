# what: honest: split-K whose programs draw (tile, slice of K) tickets from a counter with tl.atomic_add until none is left, each adding its partial once into a zeroed fp32 workspace, then a cast kernel (round 28's review, open item 5: the interpreter gives every ticket to program 0)
import torch
import triton
import triton.language as tl
import gpuperf.kernels
from gpuperf import grading


@triton.jit
def ticket_kernel(a_ptr, b_ptr, ws_ptr, counter_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  TICKETS, SPLIT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    tiles_n = tl.cdiv(N, BLOCK_N)
    per = tl.cdiv(tl.cdiv(K, BLOCK_K), SPLIT) * BLOCK_K
    ks = tl.arange(0, BLOCK_K).to(tl.int64)
    ticket = tl.atomic_add(counter_ptr, 1)
    while ticket < TICKETS:
        tile = ticket // SPLIT
        part = ticket % SPLIT
        rows = ((tile // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
        cols = ((tile % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        k_lo = part.to(tl.int64) * per
        for k0 in range(k_lo, tl.minimum(K, k_lo + per), BLOCK_K):
            k_ok = k0 + ks < K
            a = tl.load(a_ptr + rows[:, None] * stride_am + (k0 + ks)[None, :] * stride_ak,
                        mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
            b = tl.load(b_ptr + (k0 + ks)[:, None] * stride_bk + cols[None, :] * stride_bn,
                        mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc, input_precision=PRECISION)
        tl.atomic_add(ws_ptr + rows[:, None] * N + cols[None, :], acc,
                      mask=(rows[:, None] < M) & (cols[None, :] < N))
        ticket = tl.atomic_add(counter_ptr, 1)


@triton.jit
def cast_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m).to(dst_ptr.dtype.element_ty), mask=m)


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    ws = torch.zeros((M, N), dtype=torch.float32, device=a.device)
    counter = torch.zeros(1, dtype=torch.int32, device=a.device)
    bm = bn = 32
    bk = 32
    split = 2
    tickets = triton.cdiv(M, bm) * triton.cdiv(N, bn) * split
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    ticket_kernel[(min(tickets, 8),)](a, b, ws, counter, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                                     b.stride(1), tickets, SPLIT=split, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                     PRECISION=precision)
    cast_kernel[(triton.cdiv(M * N, 1024),)](ws, c, M * N, BLOCK=1024)
    return c


result = grading.grade("L4.matmul", matmul)
