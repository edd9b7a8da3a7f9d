# what: WRONG: one program loops over every tile (a grid of 1 x 2 slices of K) into a workspace with atomics; a tiled cast kernel, spread over programs, writes C
import torch
import triton
import triton.language as tl
import gpuperf.kernels
from gpuperf import grading

@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                  stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  PRECISION: tl.constexpr):
    # Grouped order: GROUP_M rows of tiles are walked column by column, so the programs running
    # at the same time share tiles of A and B in L2.
  for pid in range(0, tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)):
        tiles_m = tl.cdiv(M, BLOCK_M)
        tiles_n = tl.cdiv(N, BLOCK_N)
        tiles_per_group = GROUP_M * tiles_n
        first_m = (pid // tiles_per_group) * GROUP_M
        group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
        pid_m = first_m + (pid % tiles_per_group) % group_rows
        pid_n = (pid % tiles_per_group) // group_rows

        # 64-bit indices before any product with a stride: past 2^31 elements a 32-bit one wraps
        rows = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
        cols = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
        ks = tl.arange(0, BLOCK_K).to(tl.int64)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        per = tl.cdiv(tl.cdiv(K, BLOCK_K), tl.num_programs(1)) * BLOCK_K
        k_lo = tl.program_id(1).to(tl.int64) * per
        for k0 in range(k_lo, tl.minimum(K, k_lo + per), BLOCK_K):
            k_ok = k0 + ks < K
            a_tile = a_ptr + rows[:, None] * stride_am + (k0 + ks)[None, :] * stride_ak
            b_tile = b_ptr + (k0 + ks)[:, None] * stride_bk + cols[None, :] * stride_bn
            a = tl.load(a_tile, mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
            b = tl.load(b_tile, mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc, input_precision=PRECISION)  # fp32 accumulation
        c = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
        tl.atomic_add(c, acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    ws = torch.zeros((M, N), dtype=torch.float32, device=a.device)
    on_gpu = a.is_cuda and not gpuperf.kernels.interpreter_enabled()
    wide = 128 if a.element_size() == 2 else 64  # fp32 tiles take twice the memory
    block_m = block_m or (wide if on_gpu else 32)
    block_n = block_n or (wide if on_gpu else 32)
    block_k = block_k or 32
    # fp32 inputs: true fp32 products ("ieee"); Triton's default rounds them to TF32.
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = (1, 2)
    matmul_kernel[grid](a, b, ws, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                        b.stride(1), ws.stride(0), ws.stride(1), BLOCK_M=block_m,
                        BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m,
                        PRECISION=precision)
    cast_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](ws, c, M, N, BLOCK=32)
    return c



@triton.jit
def cast_kernel(src_ptr, dst_ptr, M, N, BLOCK: tl.constexpr):
    r = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    c = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = (r[:, None] < M) & (c[None, :] < N)
    offs = r[:, None] * N + c[None, :]
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m).to(dst_ptr.dtype.element_ty), mask=m)


result = grading.grade("L4.matmul", matmul)
