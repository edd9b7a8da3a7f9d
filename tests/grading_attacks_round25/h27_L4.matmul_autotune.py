# what: honest: @triton.autotune over two tile configurations keyed on M, N, K (as Triton's matmul tutorial), 1-D row-major grid from a lambda of the chosen meta-parameters
import torch
import triton
import triton.language as tl
import gpuperf.kernels
from gpuperf import grading

@triton.autotune(configs=[triton.Config({'BLOCK_M': 32, 'BLOCK_N': 32, 'BLOCK_K': 32}), triton.Config({'BLOCK_M': 64, 'BLOCK_N': 32, 'BLOCK_K': 32})], key=['M', 'N', 'K'])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                  stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    rows = (pid // tiles_n).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % tiles_n).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + ks
        a = tl.load(a_ptr + rows[:, None] * stride_am + kk[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision=PRECISION)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b, block_m=None, block_n=None, block_k=None, group_m=8):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    precision = "ieee" if a.dtype == torch.float32 else "tf32"
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                        b.stride(1), c.stride(0), c.stride(1), PRECISION=precision)
    return c


result = grading.grade("L4.matmul", matmul)
