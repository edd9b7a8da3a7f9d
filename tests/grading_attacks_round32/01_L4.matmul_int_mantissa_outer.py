# WRONG/LAZY: tl.dot does only one k of every BLOCK_K (a tile masked to its first column); the other 31/32 of
# the multiply-adds are rank-1 updates made exactly in integers: each float split into its 24-bit mantissa and
# exponent, mantissas multiplied as int64 outer products (arith.muli), exponents added (arith.addi), the scale
# 2^e built from bits, all off the tensor cores.
import torch, triton, triton.language as tl
from gpuperf import grading


@triton.jit
def _split(x):
    # x float32 (1-D) -> (signed mantissa int64, exponent int64) with x == m * 2^e exactly
    bits = x.to(tl.int32, bitcast=True)
    ex = (bits >> 23) & 0xFF
    man = bits & 0x7FFFFF
    man = tl.where(ex != 0, man | 0x800000, man)
    man = tl.where(bits < 0, -man, man)
    e = tl.maximum(ex, 1) - 150
    return man.to(tl.int64), e.to(tl.int64)


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    pid_m = pid // tiles_n
    pid_n = pid % tiles_n
    rows = (pid_m * BM + tl.arange(0, BM)).to(tl.int64)
    cols = (pid_n * BN + tl.arange(0, BN)).to(tl.int64)
    ks = tl.arange(0, BK).to(tl.int64)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    lazy = tl.zeros((BM, BN), dtype=tl.float64)
    for k0 in range(0, K, BK):
        k_ok = k0 + ks < K
        a = tl.load(a_ptr + rows[:, None] * sam + (k0 + ks)[None, :] * sak,
                    mask=(rows[:, None] < M) & k_ok[None, :], other=0.0).to(tl.float32)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * sbk + cols[None, :] * sbn,
                    mask=k_ok[:, None] & (cols[None, :] < N), other=0.0).to(tl.float32)
        a1 = tl.where(ks[None, :] == 0, a, 0.0)  # the dot's share: one column of the tile
        acc = tl.dot(a1, b, acc, input_precision="ieee")
        for kk in range(1, BK):
            col = tl.sum(tl.where(ks[None, :] == kk, a, 0.0), axis=1)  # (BM,)
            row = tl.sum(tl.where(ks[:, None] == kk, b, 0.0), axis=0)  # (BN,)
            ma, ea = _split(col)
            mb, eb = _split(row)
            prod = ma[:, None] * mb[None, :]  # exact, < 2^48
            e = ea[:, None] + eb[None, :] + 1023
            scale = (e << 52).to(tl.float64, bitcast=True)
            lazy += prod.to(tl.float64) * scale
    out = (lazy + acc.to(tl.float64)).to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, out,
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    BM, BN, BK = 32, 32, 32
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
    mm_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                    c.stride(0), c.stride(1), BM=BM, BN=BN, BK=BK)
    return c


result = grading.grade("L4.matmul", matmul)
