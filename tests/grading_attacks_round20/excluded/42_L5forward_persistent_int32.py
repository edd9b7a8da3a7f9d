# WRONG (32-bit offsets): a persistent kernel (a fixed grid of programs walking the
# (query block, head) tiles) whose head offset head * N * HEAD_DIM is computed in 32 bits from the loop's tile index:
# past 2^31 elements per tensor (e.g. B*H = 512, N = 32768, d = 128, fp16: 4 GiB) the product wraps and heads read
# other memory. (The tile index starts at program_id: its products carry the program id.)
import math
import torch, triton, triton.language as tl
import gpuperf, gpuperf.kernels
from gpuperf import grading

@triton.jit
def attention_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, N_TILES, NUM_PROGS,
                             CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    q_blocks = tl.cdiv(N_Q, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    for tile in range(tl.program_id(0), N_TILES, NUM_PROGS):
        head = tile // q_blocks
        block_m = tile % q_blocks
        rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
        q_head = q_ptr + head * N_Q * HEAD_DIM
        k_head = k_ptr + head * N_K * HEAD_DIM
        v_head = v_ptr + head * N_K * HEAD_DIM
        q = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
        m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
        l = tl.zeros((BLOCK_M,), dtype=tl.float32)
        acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
        end = N_K
        if CAUSAL:
            end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
        for start in range(0, end, BLOCK_N):
            keys = start + tl.arange(0, BLOCK_N)
            k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
            v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
            s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
            visible = keys[None, :] < N_K
            if CAUSAL:
                visible = visible & (keys[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m, tl.max(s, axis=1))
            alpha = tl.exp(m - m_new)
            p = tl.exp(s - m_new[:, None])
            l = l * alpha + tl.sum(p, axis=1)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
            m = m_new
        tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                 (acc / l[:, None]).to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
        tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def attention_forward(q, k, v, causal=False):
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    block_m, block_n = 32, 32
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    n_tiles = triton.cdiv(n_q, block_m) * batch * heads
    progs = min(n_tiles, 132)
    attention_forward_kernel[(progs,)](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(head_dim), n_tiles, progs,
                                       CAUSAL=causal, HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n,
                                       PRECISION=precision)
    return o, lse

result = grading.grade("L5.forward", attention_forward)
