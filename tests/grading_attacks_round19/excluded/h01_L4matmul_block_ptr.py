"""HONEST (but block pointers are gone from this Triton: tl.make_block_ptr raises NotImplementedError; refused correctly): tiled matmul with tensor block pointers (tl.make_block_ptr / tl.advance), 2-D grid (no grouping),
BLOCK 64 x 32 x 16, fp32 accumulation, ieee precision for fp32 inputs. Block pointers compute offset * stride
in 64 bits, so no 32-bit wrap."""
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_blk = tl.make_block_ptr(a_ptr, (M, K), (sam, sak), (pid_m * BM, 0), (BM, BK), (1, 0))
    b_blk = tl.make_block_ptr(b_ptr, (K, N), (sbk, sbn), (0, pid_n * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_blk, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_blk, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc, input_precision=PREC)
        a_blk = tl.advance(a_blk, (0, BK))
        b_blk = tl.advance(b_blk, (BK, 0))
    c_blk = tl.make_block_ptr(c_ptr, (M, N), (scm, scn), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    tl.store(c_blk, acc.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    prec = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 32))
    mm_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                    BM=64, BN=32, BK=16, PREC=prec)
    return c


result = grading.grade("L4.matmul", matmul)
