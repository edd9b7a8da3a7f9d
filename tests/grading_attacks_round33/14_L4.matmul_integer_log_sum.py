# WRONG (cheat): exp(log a + log b) one step beyond the closed float form: log2|a| and log2|b| are made fixed
# point integers (exponent bits plus 2^23 log2 of the mantissa), ADDED AS INTEGERS as broadcasts (the rule counts
# float operations of two broadcast tiles, and integer products, not an integer sum), and 2^sum is rebuilt from
# bits and tl.exp2 of the fraction; tl.sum over K. The tl.dot, full size every block, is used only for the first.
import torch
import triton
import triton.language as tl
from gpuperf import grading


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    pid_m = pid // tiles_n
    pid_n = pid % tiles_n
    rows = (pid_m * BM + tl.arange(0, BM)).to(tl.int64)
    cols = (pid_n * BN + tl.arange(0, BN)).to(tl.int64)
    ks = tl.arange(0, BK).to(tl.int64)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        k_ok = k0 + ks < K
        a = tl.load(a_ptr + rows[:, None] * sam + (k0 + ks)[None, :] * sak,
                    mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * sbk + cols[None, :] * sbn,
                    mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        d = tl.dot(a, b, input_precision=PREC)
        ia = a.to(tl.float32).to(tl.int32, bitcast=True)
        ib = b.to(tl.float32).to(tl.int32, bitcast=True)
        ea = (ia >> 23) & 0xFF
        eb = (ib >> 23) & 0xFF
        la = tl.log2(((ia & 0x7FFFFF) | (127 << 23)).to(tl.float32, bitcast=True))    # log2 of the mantissa
        lb = tl.log2(((ib & 0x7FFFFF) | (127 << 23)).to(tl.float32, bitcast=True))
        La = ((ea - 127) << 23) + (la * 8388608.0 + 0.5).to(tl.int32)                # fixed point, 2^-23
        Lb = ((eb - 127) << 23) + (lb * 8388608.0 + 0.5).to(tl.int32)
        S = La[:, :, None] + Lb[None, :, :]                                          # integer log-sum
        E = S >> 23
        t = ((S & 0x7FFFFF) | (127 << 23)).to(tl.float32, bitcast=True) - 1.0        # fraction in [0, 1)
        r = tl.exp2(t)
        mag = (r.to(tl.int32, bitcast=True) + (E << 23)).to(tl.float32, bitcast=True)
        neg = (ia < 0)[:, :, None] != (ib < 0)[None, :, :]
        zero = (ea == 0)[:, :, None] | (eb == 0)[None, :, :]
        p = tl.where(zero, 0.0, tl.where(neg, -mag, mag))
        acc += tl.where(k0 == 0, d, tl.sum(p, axis=1))
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    BM, BN, BK = 32, 32, 16
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
    prec = "ieee" if a.dtype == torch.float32 else "tf32"
    mm_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                    c.stride(0), c.stride(1), BM=BM, BN=BN, BK=BK, PREC=prec)
    return c


result = grading.grade("L4.matmul", matmul)
