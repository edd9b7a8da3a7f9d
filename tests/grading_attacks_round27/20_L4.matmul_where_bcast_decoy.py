# what: CHEAT: tile product done element by element (a[:, :, None] * b[None, :, :], tl.sum) with one operand passed through tl.where so it is no longer a tt.broadcast, beside a decoy full-size tl.dot multiplied by a loaded 0; should be refused (broadcast product rule)
import torch
import triton
import triton.language as tl
from gpuperf import grading

@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, z_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr):
    pid = tl.program_id(0)
    tn = tl.cdiv(N, BN)
    pm = pid // tn
    pn = pid % tn
    rows = (pm * BM + tl.arange(0, BM)).to(tl.int64)
    cols = (pn * BN + tl.arange(0, BN)).to(tl.int64)
    ks = tl.arange(0, BK).to(tl.int64)
    zero = tl.load(z_ptr)
    acc = tl.zeros((BM, BN), tl.float32)
    decoy = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + ks
        a = tl.load(a_ptr + rows[:, None] * sam + kk[None, :] * sak, mask=(rows[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + cols[None, :] * sbn, mask=(kk[:, None] < K) & (cols[None, :] < N), other=0.0)
        decoy = tl.dot(a, b, decoy, input_precision=PREC)
        ok = (rows[:, None, None] < M) & (kk[None, :, None] < K + 1) & (cols[None, None, :] >= 0)
        a3 = tl.where(ok, a.to(tl.float32)[:, :, None], 0.0)
        acc += tl.sum(a3 * b.to(tl.float32)[None, :, :], axis=1)
    acc = acc + decoy * zero
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < M) & (cols[None, :] < N))

def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    z = torch.zeros(1, dtype=torch.float32, device=a.device)
    prec = "ieee" if a.dtype == torch.float32 else "tf32"
    mm_kernel[(triton.cdiv(M, 32) * triton.cdiv(N, 32),)](a, b, c, z, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                                           c.stride(0), c.stride(1), BM=32, BN=32, BK=16, PREC=prec)
    return c

result = grading.grade("L4.matmul", matmul)
