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
    # block 0 of K through tl.dot, "repeated" once per block of K so the dot counts look right
    k_ok = ks < K
    a0 = tl.load(a_ptr + rows[:, None] * sam + ks[None, :] * sak, mask=rmask[:, None] & k_ok[None, :], other=0.0)
    b0 = tl.load(b_ptr + ks[:, None] * sbk + cols[None, :] * sbn, mask=k_ok[:, None] & cmask[None, :], other=0.0)
    d = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        d = tl.dot(a0, b0, input_precision="ieee")
    # the rest of K: rank-1 updates from tiles loaded with stride-0 addresses (no data broadcast)
    zc = (cols >> 20)[None, :]
    zr = (rows >> 20)[:, None]
    mask2 = rmask[:, None] & cmask[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(BK, K):
        at = tl.load(a_ptr + rows[:, None] * sam + k * sak + zc, mask=mask2, other=0.0).to(tl.float32)
        bt = tl.load(b_ptr + k * sbk + cols[None, :] * sbn + zr, mask=mask2, other=0.0).to(tl.float32)
        acc += at * bt
    acc = acc + d
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty), mask=mask2)


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
