# HONEST: FlashAttention-2 forward in base 2 (scale * log2 e folded in, exp2, lse converted
# back to natural log), K loaded transposed, 16 x 64 blocks on the CPU.
import math
import torch, triton, triton.language as tl
import gpuperf, gpuperf.kernels
from gpuperf import grading

@triton.jit
def attention_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale,
                             CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                mask=rows[:, None] < N_Q, other=0.0)
    qk_scale = scale * 1.4426950408889634  # scores in base 2
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    k_base = k_ptr + head * N_K * HEAD_DIM
    v_base = v_ptr + head * N_K * HEAD_DIM
    hi = N_K
    if CAUSAL:
        hi = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
    for start in range(0, hi, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        kt = tl.load(k_base + keys[None, :] * HEAD_DIM + dims[:, None], mask=keys[None, :] < N_K, other=0.0)
        v = tl.load(v_base + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        s = tl.dot(q, kt, input_precision=PRECISION) * qk_scale
        ok = keys[None, :] < N_K
        if CAUSAL:
            ok = ok & (keys[None, :] <= rows[:, None])
        s = tl.where(ok, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp2(m - m_new)
        p = tl.exp2(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m = m_new
    tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
             (acc / l[:, None]).to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, (m + tl.log2(l)) * 0.6931471805599453, mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    on_gpu = q.is_cuda and not gpuperf.kernels.interpreter_enabled()
    block_m, block_n = (64, 32) if on_gpu else (16, 64)
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(n_q, block_m), batch * heads)
    attention_forward_kernel[grid](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(head_dim), CAUSAL=causal,
                                   HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n, PRECISION=precision)
    return o, lse

result = grading.grade("L5.forward", attention_forward)
