"""The FlashAttention forward pass in Triton, beside a float64 reference and a plain tiled PyTorch version.

Public names (stable: chapter 15's backward pass builds on them):

* :func:`flash_attention_forward` ``(q, k, v, causal=False, softmax_scale=None, *, fp32_precision="ieee")
  -> (o, lse)``: the Triton kernel. ``q`` is (B, H, N_q, d), ``k`` and ``v`` are (B, H, N_k, d), all
  contiguous, of one dtype (fp16, bf16, fp32) and one device; ``o`` is like ``q``; ``lse`` is float32
  (B, H, N_q), the natural-log log-sum-exp of each query row's scaled scores. ``causal`` masks top-left
  aligned (query i sees keys j <= i), as ``scaled_dot_product_attention(is_causal=True)`` does; the scale
  defaults to 1/sqrt(d). Head dims 16, 32, 64, 128.
* :func:`attention_reference` ``(q, k, v, causal=False, softmax_scale=None) -> (o, lse)``: the same in
  float64 on the CPU, materialising the N_q x N_k score matrix (the accuracy reference).
* :func:`attention_tiled_torch` ``(q, k, v, causal=False, softmax_scale=None, block_rows=64,
  block_cols=64) -> (o, lse)``: the algorithm of the kernel written with torch tensor operations on tiles
  (FlashAttention-2 loop order: query blocks outside, key blocks inside), readable and fast on a CPU.

**HBM traffic of the kernel** (b bytes per element, T_r = ceil(N_q / B_r) query blocks): each program
reads its query block once and writes its output block and its B_r log-sum-exp values once, and streams
every key and value block it needs: ``N_q d b`` (Q) + ``T_r * 2 N_k d b`` (K and V, once per query block)
+ ``N_q d b`` (O) + ``4 N_q`` (L), per head; causal masking skips the blocks above the diagonal, about half
of the K/V traffic. The N_q x N_k matrices S and P never leave the chip. FLOP counted as ``4 N_q N_k d``
per head (two matmuls), half of it causal (the convention of the FlashAttention papers).

**Precision.** Scores and the running statistics are fp32; P is rounded to the input dtype before the
P V product for fp16/bf16 (as every FlashAttention kernel does). For fp32 inputs ``fp32_precision`` says
how ``tl.dot`` multiplies: ``"ieee"`` (true fp32 products, slow on tensor cores) or ``"tf32"`` (inputs
rounded to 10-bit significands, Triton's silent default; ~1e-3 relative error). We make the default
"ieee", so fp32 means fp32.

**Three kernels, one algorithm** (``variant``). ``_fwd_kernel`` (``"pointer"``) loads tiles through
pointer arithmetic: it runs under the Triton interpreter, on Ampere and on a T4. On Hopper (compute
capability 9.x) with fp16/bf16 inputs the default is ``_fwd_kernel_desc`` (``"tma_host"``): Q, K, V and O
move by TMA through descriptors built once on the host over the (B*H*N, d) matrices, with a launch per
(head dim, mask, N_k) from :data:`HOPPER_CONFIGS` (H200 sweeps, bench/NOTES.md "fwd"); when N_q is not a
multiple of its query block, Q and O are viewed per head (B*H, N_q, d) instead, so that TMA bound-checks
the last block of each head. For fp32, from :data:`TMA_MIN_KEYS` keys on, ``_fwd_kernel_tma``
(``"tma_device"``) builds per-head descriptors inside each program, which bound-check every head in
hardware. ``use_tma=False`` forces the pointer kernel. TMA needs 16-byte aligned base addresses: inputs
that start elsewhere (a contiguous view into the middle of a buffer) take the pointer kernel by default,
and a forced descriptor variant raises ``ValueError`` for them.
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import torch
import triton
import triton.language as tl

from gpuperf.kernels import _checks, _launch, interpreter_enabled

INTERPRETED = interpreter_enabled()

#: Head dimensions the kernel is compiled for (a tile of d columns must be a power of two >= 16).
SUPPORTED_HEAD_DIMS = (16, 32, 64, 128)

DTYPE_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}

FP32_PRECISIONS = ("ieee", "tf32")

_LOG2E = 1.4426950408889634  # log2(e): the kernel uses exp2, so scores are scaled by log2(e) once
_LN2 = 0.6931471805599453


# --------------------------------------------------------------------------------------------------------
# References.
# --------------------------------------------------------------------------------------------------------


def attention_reference(q, k, v, causal: bool = False, softmax_scale: float | None = None, *,
                        causal_alignment: str = "top_left"):
    """Exact attention in float64 on the CPU; returns ``(o, lse)`` as float64 CPU tensors.

    ``o = softmax(scale * q k^T [+ mask]) v`` and ``lse = logsumexp(scale * q k^T [+ mask])`` over the keys,
    with the causal mask top-left aligned (query i sees keys j <= i) or, with
    ``causal_alignment="bottom_right"``, aligned to the last key (query i sees keys j <= i + N_k - N_q, as
    SDPA's ``causal_lower_right``). Materialises the N_q x N_k scores.
    """
    q, k, v = (t.detach().to(device="cpu", dtype=torch.float64) for t in (q, k, v))
    scale = _default_scale(q.shape[-1], softmax_scale)
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    if causal:
        n_q, n_k = s.shape[-2], s.shape[-1]
        shift = n_k - n_q if _check_alignment(causal_alignment, n_q, n_k) else 0
        hidden = torch.ones(n_q, n_k, dtype=torch.bool).triu(diagonal=1 + shift)
        s = s.masked_fill(hidden, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None])
    return torch.matmul(p, v), lse


def attention_tiled_torch(q, k, v, causal: bool = False,
                          softmax_scale: float | None = None,
                          block_rows: int = 64, block_cols: int = 64):
    """FlashAttention's forward pass with torch operations on tiles (any device;
    computes in fp32 for fp16/bf16 inputs, float64 for float64). Returns ``(o, lse)``:
    ``o`` in the input dtype, ``lse`` float32 (float64 for float64 inputs).

    For each block of ``block_rows`` queries it streams the key/value blocks of
    ``block_cols`` keys, keeps a running row maximum ``m``, a running sum ``l`` of
    exponentials and an unnormalised output ``acc``, rescales both by
    ``exp(m_old - m_new)`` when the maximum grows, and divides by ``l`` once at the end
    (the FlashAttention-2 order). Blocks entirely above the causal diagonal are skipped.
    """
    _check_positive_int("block_rows", block_rows)
    _check_positive_int("block_cols", block_cols)
    compute = torch.float64 if q.dtype == torch.float64 else torch.float32
    scale = _default_scale(q.shape[-1], softmax_scale)
    n_q, n_k = q.shape[-2], k.shape[-2]
    o = torch.empty_like(q)
    lse = torch.empty(q.shape[:-1], dtype=compute, device=q.device)
    kc, vc = k.to(compute), v.to(compute)
    for r0 in range(0, n_q, block_rows):
        qi = q[..., r0:r0 + block_rows, :].to(compute) * scale
        rows = torch.arange(r0, min(r0 + block_rows, n_q), device=q.device)
        m = torch.full(qi.shape[:-1], float("-inf"), dtype=compute, device=q.device)
        l = torch.zeros_like(m)
        acc = torch.zeros(qi.shape, dtype=compute, device=q.device)
        # causal: key blocks right of the diagonal are skipped
        end = min(n_k, r0 + block_rows) if causal else n_k
        for c0 in range(0, end, block_cols):
            s = qi @ kc[..., c0:c0 + block_cols, :].transpose(-1, -2)
            if causal:
                cols = torch.arange(c0, min(c0 + block_cols, n_k), device=q.device)
                s = s.masked_fill(cols[None, :] > rows[:, None], float("-inf"))
            m_new = torch.maximum(m, s.amax(dim=-1))
            alpha = torch.exp(m - m_new)  # exp(-inf) = 0 on the first block
            p = torch.exp(s - m_new[..., None])
            l = alpha * l + p.sum(dim=-1)
            acc = alpha[..., None] * acc + p @ vc[..., c0:c0 + block_cols, :]
            m = m_new
        o[..., r0:r0 + block_rows, :] = (acc / l[..., None]).to(q.dtype)
        lse[..., r0:r0 + block_rows] = m + torch.log(l)
    return o, lse


# --------------------------------------------------------------------------------------------------------
# The Triton kernel (pointer loads: interpreter, Ampere, T4).
# --------------------------------------------------------------------------------------------------------


@triton.jit
def _fwd_block(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, offs_m, offs_d,
               start_n, N_K, qk_scale, BLOCK_N: tl.constexpr, MASKED: tl.constexpr,
               CAUSAL: tl.constexpr, INPUT_PRECISION: tl.constexpr):
    """One key/value block of the online softmax: update (acc, l_i, m_i)."""
    offs_n = start_n + tl.arange(0, BLOCK_N)
    k_ptrs = k_base + offs_n[None, :].to(tl.int64) * stride_kn + offs_d[:, None]
    v_ptrs = v_base + offs_n[:, None].to(tl.int64) * stride_vn + offs_d[None, :]
    if MASKED:
        k = tl.load(k_ptrs, mask=offs_n[None, :] < N_K, other=0.0)
        v = tl.load(v_ptrs, mask=offs_n[:, None] < N_K, other=0.0)
    else:
        k = tl.load(k_ptrs)
        v = tl.load(v_ptrs)
    # (BLOCK_M, BLOCK_N) fp32, stays on chip
    qk = tl.dot(q, k, input_precision=INPUT_PRECISION)
    if MASKED:
        keep = offs_n[None, :] < N_K
        if CAUSAL:
            keep = keep & (offs_n[None, :] <= offs_m[:, None])
        qk = tl.where(keep, qk, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
    p = tl.math.exp2(qk * qk_scale - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None]
    acc = tl.dot(p.to(v.dtype), v, acc, input_precision=INPUT_PRECISION)
    return acc, l_i, m_new


@triton.jit
def _fwd_kernel(Q, K, V, O, LSE,
                stride_qb, stride_qh, stride_qm, stride_kb, stride_kh, stride_kn,
                stride_vb, stride_vh, stride_vn, stride_ob, stride_oh, stride_om,
                H, N_Q, N_K, qk_scale, CAUSAL_SHIFT,
                HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                CAUSAL: tl.constexpr, INPUT_PRECISION: tl.constexpr):
    # CAUSAL_SHIFT: 0 (top-left) or N_K - N_Q >= 0 (bottom-right):
    # query i sees keys j <= i + CAUSAL_SHIFT.
    # HBM per program: its Q and O blocks once, every K/V block it needs once.
    start_m = tl.program_id(0)
    if CAUSAL:  # the longest rows start first, the short ones fill the tail
        start_m = tl.num_programs(0) - 1 - start_m
    off_bh = tl.program_id(1).to(tl.int64)  # 64-bit: B * H * N * d may pass 2**31
    off_b = off_bh // H
    off_h = off_bh % H
    q_base = Q + off_b * stride_qb + off_h * stride_qh
    k_base = K + off_b * stride_kb + off_h * stride_kh
    v_base = V + off_b * stride_vb + off_h * stride_vh
    o_base = O + off_b * stride_ob + off_h * stride_oh

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_base + offs_m[:, None].to(tl.int64) * stride_qm + offs_d[None, :],
                mask=offs_m[:, None] < N_Q, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

    # Key blocks [0, full_end) need no mask: inside N_K and, if causal, left of every
    # row's diagonal. Blocks [full_end, hi) are masked; blocks from hi on are skipped.
    if CAUSAL:
        hi = tl.minimum(N_K, (start_m + 1) * BLOCK_M + CAUSAL_SHIFT)
        diag0 = start_m * BLOCK_M + CAUSAL_SHIFT  # the first row's last key
        full_end = (tl.minimum(N_K, diag0 + 1) // BLOCK_N) * BLOCK_N
    else:
        hi = N_K
        full_end = (N_K // BLOCK_N) * BLOCK_N
    seen_m = offs_m + CAUSAL_SHIFT  # the key on each row's diagonal
    for start_n in range(0, full_end, BLOCK_N):
        acc, l_i, m_i = _fwd_block(
            acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, seen_m, offs_d,
            start_n, N_K, qk_scale, BLOCK_N, False, CAUSAL, INPUT_PRECISION)
    for start_n in range(full_end, hi, BLOCK_N):
        acc, l_i, m_i = _fwd_block(
            acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn, seen_m, offs_d,
            start_n, N_K, qk_scale, BLOCK_N, True, CAUSAL, INPUT_PRECISION)

    # Every row sees key 0 (top-left causal, or bottom-right with N_Q <= N_K),
    # so l_i > 0 and m_i is finite in every row.
    acc = acc / l_i[:, None]
    lse = (m_i + tl.math.log2(l_i)) * 0.6931471805599453  # log2 back to natural log
    row_ok = offs_m < N_Q
    tl.store(LSE + off_bh * N_Q + offs_m, lse, mask=row_ok)
    tl.store(o_base + offs_m[:, None].to(tl.int64) * stride_om + offs_d[None, :],
             acc.to(O.dtype.element_ty), mask=row_ok[:, None])


# --------------------------------------------------------------------------------------------------------
# The Hopper variant: K and V (and Q, O) through tensor descriptors, loaded by the TMA engine.
# --------------------------------------------------------------------------------------------------------


@triton.jit
def _fwd_block_tma(acc, l_i, m_i, q, k_desc, v_desc, row0, offs_m, start_n, N_K, qk_scale,
                   BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr, MASKED: tl.constexpr,
                   CAUSAL: tl.constexpr, INPUT_PRECISION: tl.constexpr):
    # listing: fwd-step
    k = k_desc.load([row0 + start_n, 0])  # (BLOCK_N, HEAD_DIM)
    v = v_desc.load([row0 + start_n, 0])
    qk = tl.dot(q, tl.trans(k), input_precision=INPUT_PRECISION)
    if MASKED:
        offs_n = start_n + tl.arange(0, BLOCK_N)
        keep = offs_n[None, :] < N_K  # keys past N_K: mask them out
        if CAUSAL:
            keep = keep & (offs_n[None, :] <= offs_m[:, None])
        # p = 0 for masked keys, but V rows past N_K (TMA's zeros, or the next head's
        # rows) still enter tl.dot(p, v): harmless unless they hold an inf or a NaN
        qk = tl.where(keep, qk, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
    p = tl.math.exp2(qk * qk_scale - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None]
    acc = tl.dot(p.to(v.dtype), v, acc, input_precision=INPUT_PRECISION)
    return acc, l_i, m_new
    # end listing: fwd-step


@triton.jit
def _fwd_kernel_tma(Q, K, V, O, LSE, H, N_Q, N_K, qk_scale,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    CAUSAL: tl.constexpr, INPUT_PRECISION: tl.constexpr):
    start_m = tl.program_id(0)
    if CAUSAL:
        start_m = tl.num_programs(0) - 1 - start_m
    off_bh = tl.program_id(1)
    # One 2-D descriptor per head: bounds (N, d), so TMA zero-fills rows past the end and clips stores.
    q_desc = tl.make_tensor_descriptor(Q + off_bh.to(tl.int64) * N_Q * HEAD_DIM, shape=[N_Q, HEAD_DIM],
                                       strides=[HEAD_DIM, 1], block_shape=[BLOCK_M, HEAD_DIM])
    o_desc = tl.make_tensor_descriptor(O + off_bh.to(tl.int64) * N_Q * HEAD_DIM, shape=[N_Q, HEAD_DIM],
                                       strides=[HEAD_DIM, 1], block_shape=[BLOCK_M, HEAD_DIM])
    k_desc = tl.make_tensor_descriptor(K + off_bh.to(tl.int64) * N_K * HEAD_DIM, shape=[N_K, HEAD_DIM],
                                       strides=[HEAD_DIM, 1], block_shape=[BLOCK_N, HEAD_DIM])
    v_desc = tl.make_tensor_descriptor(V + off_bh.to(tl.int64) * N_K * HEAD_DIM, shape=[N_K, HEAD_DIM],
                                       strides=[HEAD_DIM, 1], block_shape=[BLOCK_N, HEAD_DIM])
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    q = q_desc.load([start_m * BLOCK_M, 0])
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    if CAUSAL:
        hi = tl.minimum(N_K, (start_m + 1) * BLOCK_M)
        full_end = (tl.minimum(N_K, start_m * BLOCK_M + 1) // BLOCK_N) * BLOCK_N
    else:
        hi = N_K
        full_end = (N_K // BLOCK_N) * BLOCK_N
    for start_n in tl.range(0, full_end, BLOCK_N):
        acc, l_i, m_i = _fwd_block_tma(acc, l_i, m_i, q, k_desc, v_desc, 0, offs_m, start_n, N_K,
                                       qk_scale, BLOCK_N, HEAD_DIM, False, CAUSAL, INPUT_PRECISION)
    for start_n in tl.range(full_end, hi, BLOCK_N):
        acc, l_i, m_i = _fwd_block_tma(acc, l_i, m_i, q, k_desc, v_desc, 0, offs_m, start_n, N_K,
                                       qk_scale, BLOCK_N, HEAD_DIM, True, CAUSAL, INPUT_PRECISION)
    acc = acc / l_i[:, None]
    lse = (m_i + tl.math.log2(l_i)) * 0.6931471805599453
    tl.store(LSE + off_bh.to(tl.int64) * N_Q + offs_m, lse, mask=offs_m < N_Q)
    o_desc.store([start_m * BLOCK_M, 0], acc.to(O.dtype.element_ty))


# --------------------------------------------------------------------------------------------------------
# The Hopper kernel used by default there: TMA descriptors built once on the host.
# --------------------------------------------------------------------------------------------------------


@triton.jit
def _fwd_kernel_desc(desc_q, desc_k, desc_v, desc_o, LSE, N_Q, N_K, qk_scale,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     CAUSAL: tl.constexpr, EVEN_K: tl.constexpr, RAGGED_Q: tl.constexpr):
    """One program per (query block, head). The K and V descriptors view all B*H heads as one (B*H*N, d)
    matrix, so a head starts at row bh*N; a key block past N_K reads the next head's rows (or TMA's zeros
    at the very end), whose scores the masked step sets to -inf, so their probabilities are 0. With finite
    data that keeps them out of the output; a non-finite value in the neighbour's V would still reach it
    through 0 * inf = NaN in tl.dot(p, v). EVEN_K: no causal mask and N_K % BLOCK_N == 0, so there is no
    masked loop at all. Q and O: the same 2-D view when N_Q % BLOCK_M == 0 (a query block never crosses a
    head); otherwise (RAGGED_Q) a 3-D (B*H, N_Q, d) view, whose bounds TMA checks per head: the last
    block's rows past N_Q load as zeros and are dropped by the store."""
    # listing: fwd-program
    # HBM per program: its Q and O blocks once, every K/V block it needs once.
    start_m = tl.program_id(0)
    if CAUSAL:  # the longest rows start first, the short ones fill the tail
        start_m = tl.num_programs(0) - 1 - start_m
    bh = tl.program_id(1)
    q_row = bh * N_Q + start_m * BLOCK_M
    kv_row = bh * N_K
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    if RAGGED_Q:
        q = desc_q.load([bh, start_m * BLOCK_M, 0]).reshape([BLOCK_M, HEAD_DIM])
    else:
        q = desc_q.load([q_row, 0])
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

    # Key blocks [0, full_end) need no mask: inside N_K and, if causal, left of every
    # row's diagonal. Blocks [full_end, hi) are masked; blocks from hi on are skipped.
    if CAUSAL:
        hi = tl.minimum(N_K, (start_m + 1) * BLOCK_M)
        full_end = (tl.minimum(N_K, start_m * BLOCK_M + 1) // BLOCK_N) * BLOCK_N
    else:
        hi = N_K
        full_end = (N_K // BLOCK_N) * BLOCK_N
    for start_n in tl.range(0, full_end, BLOCK_N):
        acc, l_i, m_i = _fwd_block_tma(
            acc, l_i, m_i, q, desc_k, desc_v, kv_row, offs_m, start_n, N_K,
            qk_scale, BLOCK_N, HEAD_DIM, False, CAUSAL, "ieee")
    if not EVEN_K:
        # only the diagonal and a ragged end pay the mask
        for start_n in tl.range(full_end, hi, BLOCK_N):
            acc, l_i, m_i = _fwd_block_tma(
                acc, l_i, m_i, q, desc_k, desc_v, kv_row, offs_m, start_n, N_K,
                qk_scale, BLOCK_N, HEAD_DIM, True, CAUSAL, "ieee")

    # Every row sees key 0 (top-left causal), so l_i > 0 and m_i is finite in every row.
    acc = acc / l_i[:, None]
    lse = (m_i + tl.math.log2(l_i)) * 0.6931471805599453  # log2 back to natural log
    if RAGGED_Q:
        tl.store(LSE + bh.to(tl.int64) * N_Q + offs_m, lse, mask=offs_m < N_Q)
        tile = acc.to(q.dtype).reshape([1, BLOCK_M, HEAD_DIM])
        desc_o.store([bh, start_m * BLOCK_M, 0], tile)
    else:
        tl.store(LSE + bh.to(tl.int64) * N_Q + offs_m, lse)
        desc_o.store([q_row, 0], acc.to(q.dtype))
    # end listing: fwd-program


# --------------------------------------------------------------------------------------------------------
# Launch configuration.
# --------------------------------------------------------------------------------------------------------

#: (BLOCK_M, BLOCK_N, num_warps, num_stages) by head dim on a GPU. d = 64 and 128: the fastest of five
#: candidates for both kernel variants in the sweep recorded on the H200 at N = 4096
#: (book/data/attention_sweep_h200.json); 16 and 32 are not tuned.
GPU_CONFIGS = {16: (128, 64, 4, 3), 32: (128, 64, 4, 3), 64: (128, 64, 8, 3), 128: (128, 128, 8, 3)}

#: The device-descriptor TMA variant is picked on Hopper from this many keys on when the host-descriptor
#: kernel cannot run (fp32 inputs, or a ``config`` given): in the recorded H200 run it was faster
#: than the pointer kernel for N >= 8192 (book/data/attention_h200.json).
TMA_MIN_KEYS = 8192

class HopperConfig(NamedTuple):
    """Launch of the host-descriptor kernel: tile sizes, warps, pipeline stages and a register cap."""

    block_m: int
    block_n: int
    num_warps: int
    num_stages: int
    maxnreg: int | None = None  #: registers per thread at most (None: the compiler's choice)


#: Hopper (compute capability 9.x), fp16/bf16, the host-descriptor kernel: (head_dim, causal) -> launches
#: by key length, ``((n_k_max, config), ..., (None, config))``: the first whose n_k_max >= N_k (None: any).
#: d = 64 and 128: the fastest in the H200 sweeps (bench/NOTES.md, "fwd": jobs fwd-1 and fwd-2, and the
#: interleaved runs 1 and 2 of round 4, which moved three entries: d = 128 full takes 64 x 64 up to 2048
#: keys (+8-9 % at 1K, +3 % at 2K), d = 128 causal keeps 64 x 64 up to 4096 (+4-8 % at 4K), d = 64 full
#: takes 64 x 128 x 4 warps x 2 stages past 2048 keys (+5 % at 4K and 8K)): short rows favour small
#: programs several to an SM (a register cap of 168 fits three 4-warp programs of 128 x 64 at d = 64;
#: 64 x 64 tiles fit two at d = 128), long rows the biggest tiles at d = 128. 16 and 32: not tuned.
HOPPER_CONFIGS = {
    (16, False): ((None, HopperConfig(128, 64, 4, 3)),),
    (16, True): ((None, HopperConfig(128, 64, 4, 3)),),
    (32, False): ((None, HopperConfig(128, 64, 4, 3)),),
    (32, True): ((None, HopperConfig(128, 64, 4, 3)),),
    (64, False): ((1024, HopperConfig(128, 64, 4, 3, maxnreg=168)), (2048, HopperConfig(128, 64, 8, 3)),
                  (None, HopperConfig(64, 128, 4, 2))),
    (64, True): ((1024, HopperConfig(128, 64, 4, 3, maxnreg=168)),
                 (None, HopperConfig(128, 128, 8, 2, maxnreg=128))),
    (128, False): ((2048, HopperConfig(64, 64, 4, 3)), (None, HopperConfig(128, 128, 8, 3))),
    (128, True): ((4096, HopperConfig(64, 64, 4, 3)), (None, HopperConfig(128, 128, 8, 3))),
}


def hopper_config(head_dim: int, causal: bool, n_k: int) -> HopperConfig:
    """The host-descriptor kernel's default launch for these sizes (from :data:`HOPPER_CONFIGS`)."""
    for n_max, cfg in HOPPER_CONFIGS[(head_dim, causal)]:
        if n_max is None or n_k <= n_max:
            return cfg
    raise ValueError(f"HOPPER_CONFIGS[({head_dim}, {causal})] has no entry for N_k = {n_k}")


#: Kernel variants of :func:`flash_attention_forward`'s ``variant`` argument.
VARIANTS = ("pointer", "tma_device", "tma_host")

#: fp32 tiles take twice the shared memory of 16-bit ones: smaller blocks, fewer stages.
GPU_CONFIG_FP32 = (64, 32, 4, 2)

#: Blocks under the interpreter (launch options are ignored there; bigger tiles mean fewer programs).
INTERPRETER_BLOCK = 32

_CAPABILITY: dict = {}


def _tma_available(device: torch.device) -> bool:
    if INTERPRETED or device.type != "cuda" or not hasattr(tl, "make_tensor_descriptor"):
        return False
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index not in _CAPABILITY:  # asked once per device: the query costs microseconds per call
        _CAPABILITY[index] = torch.cuda.get_device_capability(index)
    return _CAPABILITY[index][0] == 9


def _host_descriptors_available(device: torch.device) -> bool:
    if not _tma_available(device):
        return False
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: F401
    except ImportError:
        return False
    return True


def _ensure_allocator() -> None:
    """Device-side tensor descriptors need scratch global memory; Triton asks an allocator for it."""
    _launch.ensure_scratch_allocator()


def _host_descriptor_launch(q, k, v, o, lse, causal: bool, scale: float, cfg: HopperConfig):
    """The host-descriptor kernel's launch for these tensors: (grid, arguments with each descriptor as a
    :class:`gpuperf.kernels._launch.Desc`, launch options)."""
    b, h, n_q, d = q.shape
    n_k = k.shape[2]
    bm, bn = cfg.block_m, cfg.block_n
    ragged = n_q % bm != 0
    Desc = _launch.Desc
    if ragged:  # per-head bounds for Q and O (the kernel's docstring)
        dq = Desc(q, (b * h, n_q, d), (n_q * d, d, 1), [1, bm, d])
        do = Desc(o, (b * h, n_q, d), (n_q * d, d, 1), [1, bm, d])
    else:
        dq = Desc(q, (b * h * n_q, d), (d, 1), [bm, d])
        do = Desc(o, (b * h * n_q, d), (d, 1), [bm, d])
    dk = Desc(k, (b * h * n_k, d), (d, 1), [bn, d])
    dv = Desc(v, (b * h * n_k, d), (d, 1), [bn, d])
    options = (("num_warps", cfg.num_warps), ("num_stages", cfg.num_stages))
    if cfg.maxnreg and not INTERPRETED:
        options += (("maxnreg", cfg.maxnreg),)
    args = (dq, dk, dv, do, lse, n_q, n_k, scale * _LOG2E, d, bm, bn, causal, (not causal) and n_k % bn == 0,
            ragged)
    return (triton.cdiv(n_q, bm), b * h, 1), args, options


def _launch_host_descriptors(q, k, v, o, lse, causal: bool, scale: float, cfg: HopperConfig):
    """Launch the host-descriptor kernel through Triton (descriptors built as ``TensorDescriptor``s);
    returns the launcher that relaunches it (:func:`gpuperf.kernels._launch.launcher`) or None."""
    grid, args, options = _host_descriptor_launch(q, k, v, o, lse, causal, scale, cfg)
    args = tuple(_descriptor(a.base, a.shape, a.strides, a.block_shape) if a.__class__ is _launch.Desc else a
                 for a in args)
    return _launch.launcher(_fwd_kernel_desc, grid, args, options)


_DESC_FIELDS: dict | None = None


def _descriptor(t: torch.Tensor, shape: tuple, strides: tuple, block: list):
    """A host tensor descriptor over contiguous ``t`` viewed with ``shape`` and ``strides`` (elements),
    without ``TensorDescriptor``'s checks, which cost a few microseconds per call: the wrapper has checked
    what they check (16-byte aligned base, contiguous rows of d >= 16 elements, a power-of-two block)."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    global _DESC_FIELDS
    if _DESC_FIELDS is None:
        import dataclasses

        fields = dataclasses.fields(TensorDescriptor) if dataclasses.is_dataclass(TensorDescriptor) else ()
        names = [f.name for f in fields]
        ok = names[:4] == ["base", "shape", "strides", "block_shape"] and all(
            f.default is not dataclasses.MISSING for f in fields[4:])
        _DESC_FIELDS = {f.name: f.default for f in fields[4:]} if ok else {}
        _DESC_FIELDS["_fast"] = ok
    if not _DESC_FIELDS["_fast"]:
        return TensorDescriptor(t, list(shape), list(strides), block)
    desc = object.__new__(TensorDescriptor)
    desc.__dict__.update(base=t, shape=list(shape), strides=list(strides), block_shape=block)
    for name, default in _DESC_FIELDS.items():
        if name != "_fast":
            desc.__dict__[name] = default
    return desc


def _tma_aligned(*tensors) -> bool:
    """TMA needs every tensor's base address 16-byte aligned (its rows are: d >= 16 elements of >= 2 bytes).
    A contiguous view that starts mid-allocation (e.g. ``buf[1:].view(...)``) may not be."""
    return all(t.data_ptr() % 16 == 0 for t in tensors)


def _choose_variant(device, dtype, n_q: int, n_k: int, cfg: HopperConfig, use_tma: bool = False,
                    aligned: bool = True, host_ok: bool = True) -> str:
    """host_ok=False (the caller gave a ``config``, a launch of the other two kernels): not "tma_host"."""
    if not aligned:  # no descriptor kernel can take these inputs; the pointer kernel can
        return "pointer"
    if host_ok and dtype in (torch.float16, torch.bfloat16) and _host_descriptors_available(device):
        return "tma_host"
    if _tma_available(device) and (use_tma or n_k >= TMA_MIN_KEYS):
        return "tma_device"
    return "pointer"


def default_launch(q, k, causal: bool = False) -> tuple[str, list]:
    """What :func:`flash_attention_forward` runs by default for these inputs: ``(variant, config)``, the
    config as a list (a :class:`HopperConfig`'s fields for ``"tma_host"``, else ``[BLOCK_M, BLOCK_N,
    num_warps, num_stages]``). For benchmark records."""
    _check_inputs(q, k, k)
    d = q.shape[3]
    cfg = hopper_config(d, causal, k.shape[2])
    variant = _choose_variant(q.device, q.dtype, q.shape[2], k.shape[2], cfg, aligned=_tma_aligned(q, k))
    if variant == "tma_host":
        return variant, list(cfg)
    if INTERPRETED:
        return variant, [INTERPRETER_BLOCK, INTERPRETER_BLOCK, 4, 1]
    return variant, list(GPU_CONFIG_FP32 if q.dtype == torch.float32 else GPU_CONFIGS[d])


def flash_attention_forward(q, k, v, causal: bool = False, softmax_scale: float | None = None, *,
                            fp32_precision: str = "ieee", use_tma: bool | None = None,
                            config: tuple[int, int, int, int] | None = None, variant: str | None = None,
                            hopper: HopperConfig | None = None, causal_alignment: str = "top_left"):
    """FlashAttention forward pass; returns ``(o, lse)`` (module docstring for shapes and semantics).

    ``causal_alignment``: ``"top_left"`` (query i sees keys j <= i, SDPA's ``is_causal=True``) or
    ``"bottom_right"`` (query i sees keys j <= i + N_k - N_q, SDPA's ``causal_lower_right``: the N_q new
    rows of a chunked prefill against a cache of N_k >= N_q keys ending with them). Bottom-right runs the
    pointer kernel (a forced descriptor ``variant`` raises ``ValueError``); it changes nothing unless
    ``causal`` is True and N_q < N_k. Forward only (:func:`flash_attention`, with autograd, does not take
    it), and N_q <= N_k only: FA2 and SDPA also define N_q > N_k (a row that sees no key gives 0), which
    this raises on.

    Kernel choice (``variant``): None picks, on compute capability 9.x with fp16/bf16 inputs, the
    host-descriptor kernel (``"tma_host"``, any N_q), else (fp32) the
    device-descriptor kernel (``"tma_device"``) for N_k >= :data:`TMA_MIN_KEYS`, else the pointer kernel
    (``"pointer"``, the only one chosen under the interpreter, on Ampere and on a T4, and for inputs whose
    base address is not 16-byte aligned, which TMA cannot read). ``use_tma`` (the
    older spelling): False forces the pointer kernel, True a descriptor kernel. ``config``: ``(BLOCK_M,
    BLOCK_N, num_warps, num_stages)`` overrides the table :data:`GPU_CONFIGS` (pointer and device-descriptor
    kernels; with ``variant=None`` it keeps the choice to those two); ``hopper``: a :class:`HopperConfig`
    overrides :data:`HOPPER_CONFIGS` (host-descriptor kernel only). Both are for benchmarks and tests; an
    override for a kernel that does not run raises ``ValueError``, as does any bad argument (named).
    """
    plain = (not INTERPRETED and use_tma is None and config is None and variant is None and hopper is None
             and fp32_precision == "ieee" and causal_alignment == "top_left")
    if plain:  # a call like an earlier one that ran the host-descriptor kernel: skip straight to its launch
        key = _plan_key(q, k, v, causal, softmax_scale)
        plan = _PLANS.get(key) if key is not None else None
        if plan is not None:
            lse_shape, scale, cfg, launcher = plan
            o = torch.empty_like(q)
            lse = torch.empty(lse_shape, dtype=torch.float32, device=q.device)
            if launcher is None:
                plan[3] = _launch_host_descriptors(q, k, v, o, lse, causal, scale, cfg)
            else:  # the compiled kernel, its tensor maps encoded once per address
                grid, args, _ = _host_descriptor_launch(q, k, v, o, lse.data_ptr(), causal, scale, cfg)
                launcher.launch_described(grid, _launch.current_stream(key[6]), args)
            return o, lse
    _check_inputs(q, k, v)
    if fp32_precision not in FP32_PRECISIONS:
        raise ValueError(f"fp32_precision must be one of {FP32_PRECISIONS}, got {fp32_precision!r}")
    if not isinstance(causal, bool):
        raise ValueError(f"causal must be a bool, got {causal!r}")
    if variant is not None and variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS} or None, got {variant!r}")
    if use_tma is not None and not isinstance(use_tma, bool):
        raise ValueError(f"use_tma must be a bool or None, got {use_tma!r}")
    if hopper is not None and not isinstance(hopper, HopperConfig):
        raise ValueError(f"hopper must be a HopperConfig or None, got {hopper!r}")
    b, h, n_q, d = q.shape
    n_k = k.shape[2]
    if causal_alignment not in CAUSAL_ALIGNMENTS:
        raise ValueError(f"causal_alignment must be one of {CAUSAL_ALIGNMENTS}, got {causal_alignment!r}")
    shift = n_k - n_q if causal and _check_alignment(causal_alignment, n_q, n_k) and n_k != n_q else 0
    if shift:  # only the pointer kernel takes the shifted diagonal
        if variant not in (None, "pointer") or use_tma or hopper is not None:
            raise ValueError(f"causal_alignment='bottom_right' runs the pointer kernel; got variant={variant!r}, "
                             f"use_tma={use_tma!r}, hopper={hopper!r}")
        variant = "pointer"
    scale = _default_scale(d, softmax_scale)
    o = torch.empty_like(q)
    lse = torch.empty((b, h, n_q), dtype=torch.float32, device=q.device)
    if n_q == 0 or b * h == 0:
        return o, lse
    sixteen_bit = q.dtype in (torch.float16, torch.bfloat16)
    cfg = hopper or hopper_config(d, causal, n_k)
    if use_tma is not None and variant is None:
        if use_tma and not _tma_available(q.device):
            raise ValueError(f"use_tma=True needs a compute capability 9.x GPU, got device {q.device}")
        variant = None if use_tma else "pointer"
    aligned = _tma_aligned(q, k, v)
    if (variant in ("tma_host", "tma_device") or (variant is None and use_tma)) and not aligned:
        raise ValueError(f"variant={variant!r}, use_tma={use_tma!r}: TMA needs q, k and v to start at "
                         f"16-byte aligned addresses, got data_ptr() % 16 = "
                         f"{[t.data_ptr() % 16 for t in (q, k, v)]} (pass a fresh tensor or .clone())")
    if variant is None:
        variant = _choose_variant(q.device, q.dtype, n_q, n_k, cfg, bool(use_tma), aligned, config is None)
    if variant != "pointer" and not _tma_available(q.device) and not (INTERPRETED and variant == "tma_host"):
        raise ValueError(f"variant={variant!r} needs a compute capability 9.x GPU, got device {q.device}")
    if hopper is not None and variant != "tma_host":  # an override that would be silently ignored
        raise ValueError(f"hopper (a HopperConfig) applies to variant='tma_host' only; this call runs "
                         f"{variant!r}")
    if config is not None and variant == "tma_host":
        raise ValueError("config applies to the 'pointer' and 'tma_device' kernels, not to variant='tma_host' "
                         "(pass hopper=HopperConfig(...) for its launch)")
    if variant == "tma_host":
        if not sixteen_bit:
            raise ValueError(f"variant='tma_host' takes fp16 or bf16 inputs, got {q.dtype}")
        _launch_host_descriptors(q, k, v, o, lse, causal, scale, cfg)
        if plain and hopper is None:
            key = _plan_key(q, k, v, causal, softmax_scale)
            if key is not None:
                if len(_PLANS) >= 1024:
                    _PLANS.clear()
                _PLANS[key] = [(b, h, n_q), scale, cfg, None]
        return o, lse
    precision = fp32_precision if q.dtype == torch.float32 else "ieee"  # only fp32 dots have a choice
    if config is None:
        if INTERPRETED:
            config = (INTERPRETER_BLOCK, INTERPRETER_BLOCK, 4, 1)
        else:
            config = GPU_CONFIG_FP32 if q.dtype == torch.float32 else GPU_CONFIGS[d]
    block_m, block_n, num_warps, num_stages = config
    grid = (triton.cdiv(n_q, block_m), b * h)
    qk_scale = scale * _LOG2E
    if variant == "tma_device":
        _ensure_allocator()
        _fwd_kernel_tma[grid](q, k, v, o, lse, h, n_q, n_k, qk_scale, HEAD_DIM=d, BLOCK_M=block_m,
                              BLOCK_N=block_n, CAUSAL=causal, INPUT_PRECISION=precision,
                              num_warps=num_warps, num_stages=num_stages)
    else:
        _fwd_kernel[grid](q, k, v, o, lse, *q.stride()[:3], *k.stride()[:3], *v.stride()[:3],
                          *o.stride()[:3], h, n_q, n_k, qk_scale, shift, HEAD_DIM=d, BLOCK_M=block_m,
                          BLOCK_N=block_n, CAUSAL=causal, INPUT_PRECISION=precision,
                          num_warps=num_warps, num_stages=num_stages)
    return o, lse


#: Default launches already checked and chosen, by :func:`_plan_key`: [(B, H, N_q), scale, HopperConfig,
#: launcher] (the launcher from the first launch through the plan).
_PLANS: dict = {}


def _plan_key(q, k, v, causal, softmax_scale):
    """Everything the checks and the choice of kernel read from the arguments (classes, shapes, dtypes,
    devices, contiguity, 16-byte alignment, mask, scale), or None for an input the fast path leaves to the
    full checks. Two calls with one key pass or fail the checks alike and run the same launch."""
    if not (q.__class__ is torch.Tensor and k.__class__ is torch.Tensor and v.__class__ is torch.Tensor
            and causal.__class__ is bool and (softmax_scale is None or softmax_scale.__class__ is float)):
        return None
    if not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous()):
        return None
    return (q.shape, k.shape, v.shape, q.dtype, k.dtype, v.dtype, q.get_device(), k.get_device(),
            v.get_device(), q.data_ptr() % 16 == 0 and k.data_ptr() % 16 == 0 and v.data_ptr() % 16 == 0,
            causal, softmax_scale)


def attention_flop(batch: int, heads: int, n_q: int, n_k: int, head_dim: int, causal: bool) -> float:
    """FLOP of the forward pass as the FlashAttention papers count it: 4 N_q N_k d per head, half causal."""
    flop = 4.0 * batch * heads * n_q * n_k * head_dim
    return flop / 2 if causal else flop


def naive_attention(q, k, v, causal: bool = False, softmax_scale: float | None = None):
    """Eager attention as model code often writes it, S and P stored in HBM: a matmul, a separate scale,
    the softmax in fp32 between two casts, a matmul (plus a masking pass when causal). Per score it moves
    about 28 bytes in 16-bit precision (write S 2; scale 2 + 2; cast up 2 + 4; softmax 4 + 4; cast down
    4 + 2; read P 2) against the 8 of the three-kernel count (Algorithm 0: write and read S and P)."""
    scale = _default_scale(q.shape[-1], softmax_scale)
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    if causal:
        hidden = torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool, device=q.device).triu(1)
        s = s.masked_fill(hidden, float("-inf"))
    p = torch.softmax(s.float(), dim=-1).to(q.dtype)
    return torch.matmul(p, v)


# --------------------------------------------------------------------------------------------------------
# Checks.
# --------------------------------------------------------------------------------------------------------


def _default_scale(head_dim: int, softmax_scale) -> float:
    if softmax_scale is None:
        return 1.0 / math.sqrt(head_dim)
    if (isinstance(softmax_scale, bool) or not isinstance(softmax_scale, numbers.Real)
            or not math.isfinite(softmax_scale) or softmax_scale <= 0):
        raise ValueError(f"softmax_scale must be a positive finite number or None, got {softmax_scale!r}")
    return float(softmax_scale)


#: Where the causal diagonal starts (``causal_alignment``).
CAUSAL_ALIGNMENTS = ("top_left", "bottom_right")


def _check_alignment(causal_alignment, n_q: int, n_k: int) -> bool:
    """True for bottom-right alignment (valid only with N_q <= N_k: every query sees at least one key)."""
    if causal_alignment not in CAUSAL_ALIGNMENTS:
        raise ValueError(f"causal_alignment must be one of {CAUSAL_ALIGNMENTS}, got {causal_alignment!r}")
    if causal_alignment == "bottom_right" and n_q > n_k:
        raise ValueError(f"causal_alignment='bottom_right' needs N_q <= N_k (else the first rows see no key), "
                         f"got N_q = {n_q}, N_k = {n_k}")
    return causal_alignment == "bottom_right"


def _check_positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _check_inputs(q, k, v) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        _checks.check_is_tensor(name, t)
        _checks.check_ndim(name, t, 4, "must have 4 dims (batch, heads, seq, head_dim)")
        _checks.check_dtype(name, t, DTYPE_NAMES)
        _checks.check_contiguous(name, t)
        _checks.check_device(name, t, INTERPRETED)
    d = q.shape[3]
    if d not in SUPPORTED_HEAD_DIMS:
        raise ValueError(f"q.shape[3] (head_dim) must be one of {SUPPORTED_HEAD_DIMS}, got {d}")
    for name, t in (("k", k), ("v", v)):
        _checks.check_same_dtype_and_device(name, t, "q", q)
        if t.shape[:2] != q.shape[:2] or t.shape[3] != d:
            raise ValueError(f"{name}.shape must be (B, H, N_k, d) = ({q.shape[0]}, {q.shape[1]}, N_k, {d}) "
                             f"like q {tuple(q.shape)}, got {tuple(t.shape)}")
    if v.shape != k.shape:
        raise ValueError(f"v.shape must equal k.shape {tuple(k.shape)}, got {tuple(v.shape)}")
    if k.shape[2] < 1:
        raise ValueError(f"k.shape[2] (N_k) must be at least 1, got {k.shape[2]}")


__all__ = [
    "CAUSAL_ALIGNMENTS",
    "DTYPE_NAMES",
    "FP32_PRECISIONS",
    "GPU_CONFIGS",
    "HOPPER_CONFIGS",
    "HopperConfig",
    "INTERPRETED",
    "SUPPORTED_HEAD_DIMS",
    "TMA_MIN_KEYS",
    "VARIANTS",
    "attention_flop",
    "attention_reference",
    "attention_tiled_torch",
    "default_launch",
    "hopper_config",
    "flash_attention_forward",
    "naive_attention",
]
