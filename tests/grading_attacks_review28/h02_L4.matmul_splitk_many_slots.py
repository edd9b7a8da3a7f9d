# what: honest: split-K that fills the machine (slices = min(132 // tiles, K // BLOCK_K), up to 64 here), each program storing its slice's partial tile once into a padded slot of its own, then a reduction kernel summing the slots into C (round 29's review: a cap on the workspace refused this)
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def slice_kernel(a_ptr, b_ptr, ws_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, PER,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    tile = tl.program_id(0)
    part = tl.program_id(1)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = ((tile // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = ((tile % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    ks = tl.arange(0, BLOCK_K).to(tl.int64)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    k_lo = part.to(tl.int64) * PER
    for k0 in range(k_lo, tl.minimum(K, k_lo + PER), BLOCK_K):
        k_ok = k0 + ks < K
        a = tl.load(a_ptr + rows[:, None] * stride_am + (k0 + ks)[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    # a padded slot per (slice, tile): BLOCK_M x BLOCK_N, whatever the edge
    slot = ws_ptr + ((part.to(tl.int64) * tl.num_programs(0) + tile) * BLOCK_M * BLOCK_N)
    inner = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    tl.store(slot + inner, acc)


@triton.jit
def reduce_kernel(ws_ptr, c_ptr, M, N, stride_cm, stride_cn, TILES, SLICES,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    tile = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = ((tile // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = ((tile % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    inner = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    total = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for s in range(0, SLICES):
        total += tl.load(ws_ptr + (s * TILES + tile) * BLOCK_M * BLOCK_N + inner)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, total.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    bm = bn = bk = 32
    tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn)
    blocks = triton.cdiv(K, bk)
    slices = max(1, min(132 // tiles, blocks))
    per = triton.cdiv(blocks, slices) * bk
    slices = triton.cdiv(K, per) if K else 1
    ws = torch.empty((slices, tiles, bm, bn), dtype=torch.float32, device=a.device)
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    slice_kernel[(tiles, slices)](a, b, ws, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), per,
                                  BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, PRECISION=precision)
    reduce_kernel[(tiles,)](ws, c, M, N, c.stride(0), c.stride(1), tiles, slices, BLOCK_M=bm, BLOCK_N=bn)
    return c


result = grading.grade("L4.matmul", matmul)
