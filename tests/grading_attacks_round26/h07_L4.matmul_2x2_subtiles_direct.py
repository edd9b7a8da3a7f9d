# what: honest: each program owns a 64 x 64 tile of C computed as 2 x 2 register sub-tiles of 32 x 32 (four tl.dot per K block, reusing each loaded A and B slab twice), each sub-tile cast and stored straight into C
import torch
import triton
import triton.language as tl
import gpuperf.kernels
from gpuperf import grading

@triton.jit
def products_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                    SUB: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, 2 * SUB)
    r0 = ((pid // tiles_n) * 2 * SUB + tl.arange(0, SUB)).to(tl.int64)
    c0 = ((pid % tiles_n) * 2 * SUB + tl.arange(0, SUB)).to(tl.int64)
    r1 = r0 + SUB
    c1 = c0 + SUB
    ks = tl.arange(0, BLOCK_K).to(tl.int64)
    acc00 = tl.zeros((SUB, SUB), dtype=tl.float32)
    acc01 = tl.zeros((SUB, SUB), dtype=tl.float32)
    acc10 = tl.zeros((SUB, SUB), dtype=tl.float32)
    acc11 = tl.zeros((SUB, SUB), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + ks
        a0 = tl.load(a_ptr + r0[:, None] * stride_am + kk[None, :] * stride_ak,
                     mask=(r0[:, None] < M) & (kk[None, :] < K), other=0.0)
        a1 = tl.load(a_ptr + r1[:, None] * stride_am + kk[None, :] * stride_ak,
                     mask=(r1[:, None] < M) & (kk[None, :] < K), other=0.0)
        b0 = tl.load(b_ptr + kk[:, None] * stride_bk + c0[None, :] * stride_bn,
                     mask=(kk[:, None] < K) & (c0[None, :] < N), other=0.0)
        b1 = tl.load(b_ptr + kk[:, None] * stride_bk + c1[None, :] * stride_bn,
                     mask=(kk[:, None] < K) & (c1[None, :] < N), other=0.0)
        acc00 = tl.dot(a0, b0, acc00, input_precision=PRECISION)
        acc01 = tl.dot(a0, b1, acc01, input_precision=PRECISION)
        acc10 = tl.dot(a1, b0, acc10, input_precision=PRECISION)
        acc11 = tl.dot(a1, b1, acc11, input_precision=PRECISION)
    tl.store(c_ptr + r0[:, None] * stride_cm + c0[None, :] * stride_cn, acc00.to(c_ptr.dtype.element_ty), mask=(r0[:, None] < M) & (c0[None, :] < N))
    tl.store(c_ptr + r0[:, None] * stride_cm + c1[None, :] * stride_cn, acc01.to(c_ptr.dtype.element_ty), mask=(r0[:, None] < M) & (c1[None, :] < N))
    tl.store(c_ptr + r1[:, None] * stride_cm + c0[None, :] * stride_cn, acc10.to(c_ptr.dtype.element_ty), mask=(r1[:, None] < M) & (c0[None, :] < N))
    tl.store(c_ptr + r1[:, None] * stride_cm + c1[None, :] * stride_cn, acc11.to(c_ptr.dtype.element_ty), mask=(r1[:, None] < M) & (c1[None, :] < N))


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    sub, bk = 32, block_k or 32
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(M, 2 * sub) * triton.cdiv(N, 2 * sub),)
    products_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                          SUB=sub, BLOCK_K=bk, PRECISION=precision)
    return c


result = grading.grade("L4.matmul", matmul)
