"""WRONG (lazy): the tiles of C one after another, a Python loop of one launch per tile; in launch t only program t
computes (its tile, as in round 16's 23). Every launch is on the full grid: the programs of the tiles done by
earlier launches add 0 to their tile with `tl.atomic_add` (the values stay), those of the tiles still to come
store zeros (placeholders). 09's trick on L4.

Why the grader should accept it: `_spread_check` (new this session) calls a launch narrow when few programs wrote
C, counting every write (`2 * programs < need`) or the writes the output keeps (`0 < 2 * kept < need`,
`_surviving_writes`, by address, atomics included). Every launch has one program per tile writing; the writes of
every launch but the last are all overwritten later (kept = 0: not narrow), and in the last every program's write
is kept (the atomic adds of 0 are writes). No launch is narrow, though each tile was computed alone.
"""
import gpuperf.kernels
from gpuperf import grading
import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, tile, M, N, K, stride_am, stride_ak, stride_bk,
                  stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  PRECISION: tl.constexpr):
    # Grouped order: GROUP_M rows of tiles are walked column by column, so the programs running
    # at the same time share tiles of A and B in L2.
    pid = tl.program_id(0)  # the tile this program writes in this launch
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
    if tl.program_id(0) != tile:  # not this launch's tile: keep it (done) or hold a place (to come)
        c_at = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
        c_ok = (rows[:, None] < M) & (cols[None, :] < N)
        zero = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32).to(c_ptr.dtype.element_ty)
        if tl.program_id(0) < tile:  # a tile an earlier launch computed: add 0 to it (a write that keeps it)
            tl.atomic_add(c_at, zero, mask=c_ok)
        else:  # a tile a later launch computes: placeholder
            tl.store(c_at, zero, mask=c_ok)
        return
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = k0 + ks < K
        a_tile = a_ptr + rows[:, None] * stride_am + (k0 + ks)[None, :] * stride_ak
        b_tile = b_ptr + (k0 + ks)[:, None] * stride_bk + cols[None, :] * stride_bn
        a = tl.load(a_tile, mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_tile, mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)  # fp32 accumulation
    c = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    on_gpu = a.is_cuda and not gpuperf.kernels.interpreter_enabled()
    wide = 128 if a.element_size() == 2 else 64  # fp32 tiles take twice the memory
    block_m = block_m or (wide if on_gpu else 32)
    block_n = block_n or (wide if on_gpu else 32)
    block_k = block_k or 32
    # fp32 inputs: true fp32 products ("ieee"); Triton's default rounds them to TF32.
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    for tile in range(triton.cdiv(M, block_m) * triton.cdiv(N, block_n)):  # one tile per launch
        matmul_kernel[(triton.cdiv(M, block_m) * triton.cdiv(N, block_n),)](a, b, c, tile, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                            b.stride(1), c.stride(0), c.stride(1), BLOCK_M=block_m,
                            BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=group_m,
                            PRECISION=precision)
    return c


result = grading.grade("L4.matmul", matmul)
