# what: honest: h21's persistent matmul with the tile's store done by a small @triton.jit helper (_store_tile(c_ptr, rows, cols, acc, M, N, scm, scn))
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def _store_tile(c_ptr, rows, cols, acc, M, N, scm, scn):
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def mm_persistent(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, NPROG,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, IEEE: tl.constexpr):
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    for t in range(tl.program_id(0), tiles, NPROG):
        pid_m = t // tiles_n
        pid_n = t % tiles_n
        rows = pid_m.to(tl.int64) * BM + tl.arange(0, BM)
        cols = pid_n.to(tl.int64) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            kk = k0 + tl.arange(0, BK)
            a = tl.load(a_ptr + rows[:, None] * sam + kk[None, :] * sak, mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
            b = tl.load(b_ptr + kk[:, None] * sbk + cols[None, :] * sbn, mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)
            if IEEE:
                acc += tl.dot(a, b, input_precision="ieee")
            else:
                acc += tl.dot(a, b)
        _store_tile(c_ptr, rows, cols, acc, M, N, scm, scn)


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    tiles = triton.cdiv(M, 32) * triton.cdiv(N, 32)
    nprog = min(132, tiles)
    mm_persistent[(nprog,)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                            c.stride(0), c.stride(1), nprog, BM=32, BN=32, BK=32, IEEE=a.dtype == torch.float32)
    return c
result = grading.grade("L4.matmul", matmul)
