# what: the walk over K done from Python, a launch per block of K, each reading the previous partial tile from the last step's buffer and storing prev + A_k B_k into a freshly allocated fp32 buffer (functional style: acc = step(acc)), then a cast into C; each buffer is stored by one launch only, so rule 2's three-launch count never trips
import torch
import triton
import triton.language as tl
import gpuperf.kernels
from gpuperf import grading

@triton.jit
def kstep_kernel(a_ptr, b_ptr, prev_ptr, ws_ptr, M, N, K, k0, stride_am, stride_ak, stride_bk, stride_bn,
                 FIRST: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = ((pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = ((pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    ks = k0 + tl.arange(0, BLOCK_K).to(tl.int64)
    a = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak,
                mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
    b = tl.load(b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn,
                mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
    cmask = (rows[:, None] < M) & (cols[None, :] < N)
    w = ws_ptr + rows[:, None] * N + cols[None, :]
    if FIRST:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    else:
        acc = tl.load(prev_ptr + rows[:, None] * N + cols[None, :], mask=cmask, other=0.0)
    acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(w, acc, mask=cmask)


@triton.jit
def cast_kernel(ws_ptr, c_ptr, M, N, stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = ((pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = ((pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    cmask = (rows[:, None] < M) & (cols[None, :] < N)
    acc = tl.load(ws_ptr + rows[:, None] * N + cols[None, :], mask=cmask, other=0.0)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty), mask=cmask)


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    ws = torch.empty((M, N), dtype=torch.float32, device=a.device)
    bm, bn, bk = block_m or 32, block_n or 32, block_k or 32
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    for k0 in range(0, K, bk):
        prev, ws = ws, torch.empty((M, N), dtype=torch.float32, device=a.device)
        kstep_kernel[grid](a, b, prev, ws, M, N, K, k0, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                           FIRST=(k0 == 0), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, PRECISION=precision)
    cast_kernel[grid](ws, c, M, N, c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn)
    return c


result = grading.grade("L4.matmul", matmul)
