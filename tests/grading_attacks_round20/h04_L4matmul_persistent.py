# HONEST: persistent grouped matmul: a fixed number of programs, each walking tiles
# pid, pid + P, pid + 2P, ... in grouped order; 32 x 32 x 32 tiles.
import math
import torch, triton, triton.language as tl
import gpuperf, gpuperf.kernels
from gpuperf import grading

@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  NUM_PROGS, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, PRECISION: tl.constexpr):
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    n_tiles = tiles_m * tiles_n
    per_group = GROUP_M * tiles_n
    for tile in range(tl.program_id(0), n_tiles, NUM_PROGS):
        first_m = (tile // per_group) * GROUP_M
        height = tl.minimum(tiles_m - first_m, GROUP_M)
        pid_m = first_m + (tile % per_group) % height
        pid_n = (tile % per_group) // height
        rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
        ks = tl.arange(0, BLOCK_K).to(tl.int64)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            kk = k0 + ks
            a = tl.load(a_ptr + rows[:, None] * stride_am + kk[None, :] * stride_ak,
                        mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
            b = tl.load(b_ptr + kk[:, None] * stride_bk + cols[None, :] * stride_bn,
                        mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc, input_precision=PRECISION)
        tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
                 mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    on_gpu = a.is_cuda and not gpuperf.kernels.interpreter_enabled()
    block_m = block_m or (128 if on_gpu else 32)
    block_n = block_n or (128 if on_gpu else 32)
    block_k = block_k or 32
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    n_tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
    progs = min(n_tiles, 132 if on_gpu else 4)
    matmul_kernel[(progs,)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                            c.stride(1), progs, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
                            GROUP_M=group_m, PRECISION=precision)
    return c

result = grading.grade("L4.matmul", matmul)
