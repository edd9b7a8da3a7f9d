"""A plain tiled matmul kernel shared by the L4 attacks (each attack changes one thing around it)."""
import triton
import triton.language as tl


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr, ACC16: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = k0 + ks < K
        a = tl.load(a_ptr + rows[:, None].to(tl.int64) * sam + (k0 + ks)[None, :] * sak,
                    mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None].to(tl.int64) * sbk + cols[None, :] * sbn,
                    mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        if ACC16:
            acc = acc.to(tl.float16).to(tl.float32)  # the running sum kept in 16 bits
    tl.store(c_ptr + rows[:, None].to(tl.int64) * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def launch(a, b, c, sbk=None, sbn=None, precision=None, acc16=False, bm=32, bn=32, bk=32):
    import torch
    M, K = a.shape
    N = b.shape[1]
    if precision is None:
        precision = "ieee" if a.dtype == torch.float32 else "tf32"
    mm_kernel[(triton.cdiv(M, bm), triton.cdiv(N, bn))](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0) if sbk is None else sbk,
        b.stride(1) if sbn is None else sbn, c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
        PRECISION=precision, ACC16=acc16)
    return c
