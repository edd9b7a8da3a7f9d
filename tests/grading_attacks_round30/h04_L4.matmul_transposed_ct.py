# HONEST: computes C^T = B^T A^T tile by tile with tl.dot (operands loaded transposed), stores the transpose.
import torch, triton, triton.language as tl
from gpuperf import grading


@triton.jit
def mmt_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    rows = ((pid // tiles_n) * BM + tl.arange(0, BM)).to(tl.int64)
    cols = ((pid % tiles_n) * BN + tl.arange(0, BN)).to(tl.int64)
    ks = tl.arange(0, BK).to(tl.int64)
    acc = tl.zeros((BN, BM), dtype=tl.float32)  # a tile of C^T
    for k0 in range(0, K, BK):
        k_ok = k0 + ks < K
        at = tl.load(a_ptr + rows[None, :] * sam + (k0 + ks)[:, None] * sak,
                     mask=(rows[None, :] < M) & k_ok[:, None], other=0.0)  # (BK, BM) = A^T
        bt = tl.load(b_ptr + (k0 + ks)[None, :] * sbk + cols[:, None] * sbn,
                     mask=k_ok[None, :] & (cols[:, None] < N), other=0.0)  # (BN, BK) = B^T
        acc = tl.dot(bt, at, acc, input_precision="ieee")
    tl.store(c_ptr + rows[None, :] * scm + cols[:, None] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[None, :] < M) & (cols[:, None] < N))


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    BM, BN, BK = block_m or 32, block_n or 32, block_k or 32
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
    mmt_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                     c.stride(0), c.stride(1), BM=BM, BN=BN, BK=BK)
    return c


result = grading.grade("L4.matmul", matmul)
