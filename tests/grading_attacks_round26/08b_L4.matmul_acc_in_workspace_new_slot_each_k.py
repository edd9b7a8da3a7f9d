# what: (08 fixed: M may be the constant 1) the accumulator kept in memory, not registers: every block of K the program loads its partial tile from slot i of an fp32 workspace [K/BLOCK_K, M, N] and stores partial + A_k B_k into slot i + 1 (a tile written unfinished and rewritten, each time at a new address), then a cast into C from the last slot
import torch
import triton
import triton.language as tl
import gpuperf.kernels
from gpuperf import grading

@triton.jit
def matmul_kernel(a_ptr, b_ptr, ws_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = ((pid // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = ((pid % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    cmask = (rows[:, None] < M) & (cols[None, :] < N)
    tile = rows[:, None] * N + cols[None, :]
    MN = tl.cast(M, tl.int64) * N
    tl.store(ws_ptr + tile, tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32), mask=cmask)
    step = 0
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K).to(tl.int64)
        a = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.load(ws_ptr + step * MN + tile, mask=cmask, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        step += 1
        tl.store(ws_ptr + step * MN + tile, acc, mask=cmask)


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
    bm, bn, bk = block_m or 32, block_n or 32, block_k or 32
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    steps = triton.cdiv(K, bk)
    ws = torch.empty((steps + 1, M, N), dtype=torch.float32, device=a.device)
    matmul_kernel[grid](a, b, ws, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, PRECISION=precision)
    cast_kernel[grid](ws[steps], c, M, N, c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn)
    return c


result = grading.grade("L4.matmul", matmul)
