"""The FlashAttention backward pass in Triton, and an autograd Function that trains with it.

What this module shows: the backward pass of attention needs the probabilities P = softmax(scale Q K^T), an
N x N matrix per head, but it does not need them *stored*. The forward pass keeps only O and the row
log-sum-exp L (one float per query row); the backward pass recomputes each tile of P on chip,
``P_ij = exp(scale q_i . k_j - L_i)``, uses it and throws it away (Dao et al. 2022, Algorithm 4; one program
per key block as in FlashAttention-2, Dao 2023, Section 3.2).

The gradients, with S = scale Q K^T, P = softmax(S) row-wise and dO the gradient of the output:

* ``dV = P^T dO``
* ``dP = dO V^T``
* ``dS = P * (dP - D)`` with ``D_i = sum_j P_ij dP_ij = rowsum(dO * O)_i`` (the identity that avoids P)
* ``dQ = scale dS K`` and ``dK = scale dS^T Q``.

Two designs, chosen per head dimension by measurement (:data:`GPU_CONFIGS`, bench/NOTES.md "bwd"):

* **split** (the default at d <= 64): ``_preprocess_kernel`` computes ``D = rowsum(dO * O)`` in fp32;
  ``_dkdv_kernel``, one program per (key block, batch x head), keeps ``K_j, V_j`` and the fp32 accumulators
  ``dK_j, dV_j`` on chip and streams every query block (Q, dO, L, D) past them; ``_dq_kernel``, one program
  per (query block, batch x head), keeps ``Q_i, dO_i, dQ_i`` and streams every key block. No atomics and a
  deterministic result, at the price of recomputing ``S`` and ``dP`` a second time: 7 tile matmuls
  instead of 5 (as in Triton's fused-attention tutorial).
* **fused** (the default at d = 128; ``BackwardConfig(fused=True)``): FlashAttention-2's single loop
  (Section 3.2). The preprocess kernel also zeroes an fp32 copy of dQ; ``_dkdv_kernel`` also multiplies
  each ``dS_ij`` tile by ``K_j`` and adds it into that copy with atomic adds (or, with ``tma=True``, one TMA
  bulk reduction per tile); ``_dq_convert_kernel`` scales and casts it. 5 tile matmuls; the order of the
  additions, hence the last bits of dQ, varies from run to run.

Benchmarks count the customary ``2.5 x 4 B H N_q N_k d`` FLOP (5 matmuls), halved for a causal mask.

HBM bytes (b bytes per element, T_q = ceil(N_q / BLOCK_M) query blocks, T_k = ceil(N_k / BLOCK_N) key
blocks of the respective kernel, per batch x head, ignoring the 4-byte L and D vectors):

* preprocess: read O, dO (2 N_q d b), write D;
* dK/dV: read K, V once (2 N_k d b), read Q and dO once per key block (2 T_k N_q d b), write dK, dV
  (2 N_k d b);
* dQ: read Q, dO once (2 N_q d b), read K and V once per query block (2 T_q N_k d b), write dQ (N_q d b);
* fused: the dK/dV kernel's traffic plus, per key block, an fp32 reduction of N_q d values into dQ in L2
  (4 T_k N_q d bytes), and the zeroing and conversion of the fp32 copy (8 N_q d bytes + N_q d b).

Traffic therefore grows like N^2 d^2 / (block size), like the forward pass (chapter 15 counts it exactly in
``gpuperf.attention_backward``); what no longer grows like N^2 is memory: nothing of size N x N exists.

The causal mask is top-left aligned, as in ``scaled_dot_product_attention(is_causal=True)``: query i sees
keys j <= i. Blocks entirely above the diagonal are skipped, and only blocks that cross it apply the mask.

**Where it runs.** On a machine without a CUDA GPU, ``gpuperf.kernels`` switches on Triton's interpreter
before this module is imported; the wrappers then take CPU tensors in fp32 or fp16 (bf16 is refused there:
the interpreter cannot do bf16 arithmetic). With a GPU they take CUDA tensors in fp16, bf16 and fp32.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from gpuperf.kernels import _checks, _launch, interpreter_enabled
# TMA detection and Triton's scratch allocator: one copy, shared with the forward pass.
from gpuperf.kernels.flash_attention import _ensure_allocator, _tma_available

#: True when this module's kernels were defined for Triton's interpreter (fixed at import, see
#: ``gpuperf.kernels``).
INTERPRETED = interpreter_enabled()

#: Head dimensions the kernels are compiled for (``tl.arange`` needs a power of two; 16 is ``tl.dot``'s
#: smallest tile side).
HEAD_DIMS = (16, 32, 64, 128)

#: Storage dtypes, with the short names used in recorded results.
DTYPE_NAMES = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}

_LOG2E = 1.4426950408889634


@dataclass(frozen=True)
class BackwardConfig:
    """Tile sizes and launch options of the two main backward kernels.

    ``dkdv_block_m`` x ``dkdv_block_n``: query rows x key rows of one tile in the dK/dV kernel (the program
    owns ``dkdv_block_n`` keys); ``dq_block_m`` x ``dq_block_n`` likewise in the dQ kernel (the program owns
    ``dq_block_m`` queries). ``num_warps`` and ``num_stages`` are Triton launch options of the dK/dV kernel,
    ``dq_num_warps`` and ``dq_num_stages`` of the dQ kernel (default: the same). The interpreter ignores them.
    ``fused``: the dK/dV kernel also computes dQ (FlashAttention-2's single loop, 5 tile matmuls, dQ summed
    over key blocks with fp32 atomic adds); the ``dq_*`` fields are then unused. ``tma``: the dK/dV
    kernel loads Q and dO tiles through tensor descriptors (the TMA unit of a Hopper GPU) and, if fused,
    adds each dQ tile with one bulk reduction instead of an atomic per element; ignored where TMA is
    unavailable (before compute capability 9, and under the interpreter). **Experimental, never a
    default**: it was timed (bench/NOTES.md "bwd-5", "bwd-6": no faster, more spills) but its GPU
    correctness test (``test_tma_option_matches_float64_autograd_gpu``) has not run yet; the CPU tests
    cannot reach it.
    """

    dkdv_block_m: int
    dkdv_block_n: int
    dq_block_m: int
    dq_block_n: int
    num_warps: int = 4
    num_stages: int = 3
    dq_num_warps: int | None = None
    dq_num_stages: int | None = None
    fused: bool = False
    tma: bool = False

    def __post_init__(self) -> None:
        for name in ("dkdv_block_m", "dkdv_block_n", "dq_block_m", "dq_block_n"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 16 or value & (value - 1):
                raise ValueError(f"{name} must be a power of two >= 16, got {value!r}")
        if self.dq_num_warps is None:
            object.__setattr__(self, "dq_num_warps", self.num_warps)
        if self.dq_num_stages is None:
            object.__setattr__(self, "dq_num_stages", self.num_stages)
        for name in ("num_warps", "dq_num_warps"):
            if getattr(self, name) not in (1, 2, 4, 8, 16):
                raise ValueError(f"{name} must be 1, 2, 4, 8 or 16, got {getattr(self, name)!r}")
        for name in ("num_stages", "dq_num_stages"):
            value = getattr(self, name)
            if not isinstance(value, int) or not 1 <= value <= 8:
                raise ValueError(f"{name} must be an integer in [1, 8], got {value!r}")
        if not isinstance(self.fused, bool):
            raise ValueError(f"fused must be a bool, got {self.fused!r}")
        if not isinstance(self.tma, bool):
            raise ValueError(f"tma must be a bool, got {self.tma!r}")


#: The split design's tiles per head dimension on a GPU (a dK/dV kernel and a dQ kernel): last session's
#: sweep of each kernel alone on an NVIDIA H200 (fp16, N = 4096, no mask; bench/NOTES.md "bwd"). At d = 64:
#: dK/dV 32 x 128 with 4 warps, dQ 128 x 64 with 8 warps. At d = 128: 64 x 64 with 4 warps and 2 stages
#: for both kernels. Head dimensions 16 and 32 use the d = 64 tiles (not swept).
SPLIT_CONFIGS = {
    16: BackwardConfig(32, 128, 128, 64, num_warps=4, num_stages=3, dq_num_warps=8),
    32: BackwardConfig(32, 128, 128, 64, num_warps=4, num_stages=3, dq_num_warps=8),
    64: BackwardConfig(32, 128, 128, 64, num_warps=4, num_stages=3, dq_num_warps=8),
    128: BackwardConfig(64, 64, 64, 64, num_warps=4, num_stages=2),
}

#: The fused design's tiles (one kernel per key block; dQ by fp32 atomic adds): 64 queries x 128 keys
#: per tile with 8 warps and 3 stages, the best fused launch of job bwd-4 at d = 64 and 128 (two warp
#: groups share the fp32 dK, dV accumulators: 64 + 64 registers per thread at d = 128). The dq_* fields
#: are unused.
FUSED_CONFIGS = {d: BackwardConfig(64, 128, 64, 128, num_warps=8, num_stages=3, fused=True)
                 for d in HEAD_DIMS}

#: The default per (head dimension, causal) on a GPU for 16-bit inputs, chosen by measurement against
#: cuDNN in two jobs (bench/NOTES.md "bwd-4", "bwd-6"; fp16, N = 4096, 2^19 rows): at d = 128 the fused
#: design (0.74 / 0.65 of cuDNN full, 0.69 / 0.69 causal, against 0.74 / 0.64 and 0.65 / 0.66 for split);
#: at d <= 64 the split one (0.78 / 0.81 full, 0.69 / 0.67 causal; fused 0.63 / 0.62 and 0.69 / 0.67).
GPU_CONFIGS = {(d, causal): (FUSED_CONFIGS if d == 128 else SPLIT_CONFIGS)[d]
               for d in HEAD_DIMS for causal in (False, True)}

#: fp32 tiles take twice the shared memory and registers of 16-bit ones: small tiles, correctness first
#: (fp32 is not a performance target).
GPU_CONFIG_FP32 = BackwardConfig(32, 64, 64, 32, num_warps=4, num_stages=2)

#: Under the interpreter every program instance costs about half a millisecond, whatever its size: one
#: tile size for all head dimensions, small enough that tests at N ~ 100 cross several blocks.
INTERPRETER_CONFIG = BackwardConfig(16, 32, 32, 16, num_warps=4, num_stages=1)


def default_config(head_dim: int, dtype: torch.dtype = torch.float16,
                   causal: bool = False) -> BackwardConfig:
    """The tiles :func:`flash_attention_backward` uses for ``head_dim`` (and dtype, mask) in this mode."""
    if head_dim not in HEAD_DIMS:
        raise ValueError(f"head_dim must be one of {HEAD_DIMS}, got {head_dim!r}")
    if INTERPRETED:
        return INTERPRETER_CONFIG
    if dtype == torch.float32:
        return GPU_CONFIG_FP32
    return GPU_CONFIGS[(head_dim, bool(causal))]


def variant_config(head_dim: int, variant: str) -> BackwardConfig:
    """The tiles of one design, ``"split"`` or ``"fused"``, for ``head_dim`` in this mode (tests, sweeps)."""
    if variant not in ("split", "fused"):
        raise ValueError(f"variant must be 'split' or 'fused', got {variant!r}")
    if head_dim not in HEAD_DIMS:
        raise ValueError(f"head_dim must be one of {HEAD_DIMS}, got {head_dim!r}")
    if INTERPRETED:
        return dataclasses.replace(INTERPRETER_CONFIG, fused=variant == "fused")
    return (FUSED_CONFIGS if variant == "fused" else SPLIT_CONFIGS)[head_dim]


# --------------------------------------------------------------------------------------------------------
# Plain torch references (readable, and the float64 ground truth of the tests).
# --------------------------------------------------------------------------------------------------------


def _causal_mask(n_q: int, n_k: int, device) -> torch.Tensor:
    """True where query i may see key j (top-left aligned: j <= i), shape (n_q, n_k)."""
    i = torch.arange(n_q, device=device)[:, None]
    j = torch.arange(n_k, device=device)[None, :]
    return j <= i


def attention_forward_torch(q, k, v, causal: bool = False, softmax_scale: float | None = None):
    """Standard attention in float64, returning ``(o, lse)`` (lse natural-log, float64, shape (B, H, N_q)).

    Materialises the N_q x N_k scores: a reference for small shapes, not a fast path.
    """
    scale = 1.0 / math.sqrt(q.shape[-1]) if softmax_scale is None else float(softmax_scale)
    q64, k64, v64 = q.double(), k.double(), v.double()
    s = scale * q64 @ k64.transpose(-1, -2)
    if causal:
        s = s.masked_fill(~_causal_mask(q.shape[-2], k.shape[-2], q.device), float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None])
    return p @ v64, lse


def attention_backward_tiled_torch(q, k, v, o, lse, do, causal: bool = False,
                                   softmax_scale: float | None = None, block_rows: int = 16,
                                   block_cols: int = 16):
    """The recomputed backward pass in plain PyTorch, tile by tile (same algorithm as the Triton kernels).

    Loops over key blocks (outer) and query blocks (inner) like the paper's Algorithm 4, recomputing each
    tile ``P_ij = exp(scale Q_i K_j^T - L_i)`` from the saved ``lse``; never forms an N x N matrix. Works in
    the dtype of its inputs (float64 for ``gradcheck``). Returns ``(dq, dk, dv)``.
    """
    scale = 1.0 / math.sqrt(q.shape[-1]) if softmax_scale is None else float(softmax_scale)
    n_q, n_k = q.shape[-2], k.shape[-2]
    delta = (do * o).sum(-1)  # D_i = rowsum(dO * O)
    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    for j0 in range(0, n_k, block_cols):
        kj, vj = k[..., j0:j0 + block_cols, :], v[..., j0:j0 + block_cols, :]
        dkj, dvj = torch.zeros_like(kj), torch.zeros_like(vj)
        first_row = (j0 // block_rows) * block_rows if causal else 0
        for i0 in range(first_row, n_q, block_rows):
            rows = slice(i0, i0 + block_rows)
            qi, doi = q[..., rows, :], do[..., rows, :]
            p = torch.exp(scale * qi @ kj.transpose(-1, -2) - lse[..., rows, None])
            if causal:
                mask = _causal_mask(n_q, n_k, q.device)[rows, j0:j0 + block_cols]
                p = p.masked_fill(~mask, 0.0)
            dvj = dvj + p.transpose(-1, -2) @ doi
            dp = doi @ vj.transpose(-1, -2)
            ds = p * (dp - delta[..., rows, None])
            dq[..., rows, :] += scale * ds @ kj
            dkj = dkj + scale * ds.transpose(-1, -2) @ qi
        dk[..., j0:j0 + block_cols, :] = dkj
        dv[..., j0:j0 + block_cols, :] = dvj
    return dq, dk, dv


def attention_backward_split_torch(q, k, v, o, lse, do, causal: bool = False,
                                   softmax_scale: float | None = None,
                                   block_m: int = 16, block_n: int = 16):
    """The split Triton backward as PyTorch loops: same walks, same causal bounds."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if softmax_scale is None else float(softmax_scale)
    n_q, n_k = q.shape[-2], k.shape[-2]
    delta = (do * o).sum(-1)  # D_i = rowsum(dO * O)
    seen = _causal_mask(n_q, n_k, q.device)  # True where query i may see key j

    def tile(rows, cols, masked):  # P_ij rebuilt from L, and dS_ij
        p = torch.exp(scale * q[..., rows, :] @ k[..., cols, :].mT - lse[..., rows, None])
        if masked:
            p = p.masked_fill(~seen[rows, cols], 0.0)
        dp = do[..., rows, :] @ v[..., cols, :].mT
        return p, p * (dp - delta[..., rows, None])

    dk, dv = torch.zeros_like(k), torch.zeros_like(v)
    for start_n in range(0, n_k, block_n):  # one dK/dV program per key block
        cols = slice(start_n, start_n + block_n)
        lo = start_n // block_m * block_m if causal else 0  # rows above see none of these keys
        mid = min(-(-(start_n + block_n - 1) // block_m) * block_m, n_q) if causal else 0
        for start_m in range(lo, n_q, block_m):
            rows = slice(start_m, start_m + block_m)
            p, ds = tile(rows, cols, masked=start_m < mid)  # [lo, mid) crosses the diagonal
            dv[..., cols, :] += p.mT @ do[..., rows, :]
            dk[..., cols, :] += scale * ds.mT @ q[..., rows, :]
    dq = torch.zeros_like(q)
    for start_m in range(0, n_q, block_m):  # one dQ program per query block
        rows = slice(start_m, start_m + block_m)
        end = min(start_m + block_m, n_k) if causal else n_k  # keys past `end` are unseen
        mid = min((start_m + 1) // block_n * block_n, end) if causal else end
        for start_n in range(0, end, block_n):
            cols = slice(start_n, start_n + block_n)
            _, ds = tile(rows, cols, masked=start_n >= mid)  # [mid, end) crosses the diagonal
            dq[..., rows, :] += scale * ds @ k[..., cols, :]
    return dq, dk, dv


class TiledAttentionFunction(torch.autograd.Function):
    """Forward: :func:`attention_forward_torch`; backward: :func:`attention_backward_tiled_torch`.

    Exists so that ``torch.autograd.gradcheck`` can check the tiled, recomputing backward against finite
    differences in float64 (the Triton kernels cannot run in float64).
    """

    @staticmethod
    def forward(ctx, q, k, v, causal=False, softmax_scale=None, block_rows=16, block_cols=16):
        o, lse = attention_forward_torch(q, k, v, causal, softmax_scale)
        o, lse = o.to(q.dtype), lse.to(q.dtype)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.options = (causal, softmax_scale, block_rows, block_cols)
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        causal, scale, block_rows, block_cols = ctx.options
        dq, dk, dv = attention_backward_tiled_torch(q, k, v, o, lse, do, causal, scale, block_rows,
                                                    block_cols)
        return dq, dk, dv, None, None, None, None


# --------------------------------------------------------------------------------------------------------
# Triton kernels.
# --------------------------------------------------------------------------------------------------------


@triton.jit
def _preprocess_kernel(o_ptr, do_ptr, delta_ptr, dq_acc_ptr, n_q, BLOCK_M: tl.constexpr,
                       HEAD_DIM: tl.constexpr, ZERO_DQ: tl.constexpr):
    # HBM bytes: read O and dO (2 N_q d b per head), write D (4 N_q); with ZERO_DQ also write the zeroed
    # fp32 dQ accumulator of the fused kernel (4 N_q d), which saves a separate memset launch.
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < n_q
    offsets = pid_bh * n_q * HEAD_DIM + offs_m[:, None] * HEAD_DIM + offs_d[None, :]
    o = tl.load(o_ptr + offsets, mask=row_ok[:, None], other=0.0).to(tl.float32)
    do = tl.load(do_ptr + offsets, mask=row_ok[:, None], other=0.0).to(tl.float32)
    tl.store(delta_ptr + pid_bh * n_q + offs_m, tl.sum(o * do, axis=1), mask=row_ok)
    if ZERO_DQ:
        tl.store(dq_acc_ptr + offsets, tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32),
                 mask=row_ok[:, None])


@triton.jit
def _dq_convert_kernel(dq_acc_ptr, dq_ptr, n_elements, softmax_scale, BLOCK: tl.constexpr):
    # dQ = scale * (the fp32 sum of the fused kernel's partial products), cast to the storage dtype.
    # HBM bytes: read 4 N_q d, write N_q d b per head.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n_elements
    acc = tl.load(dq_acc_ptr + offs, mask=ok, other=0.0)
    tl.store(dq_ptr + offs, (acc * softmax_scale).to(dq_ptr.dtype.element_ty), mask=ok)


@triton.jit
def _dot(a, b, PRECISION: tl.constexpr):
    if PRECISION == "default":
        return tl.dot(a, b)
    else:
        return tl.dot(a, b, input_precision=PRECISION)


@triton.jit
def _dkdv_tiles(dk, dv, k, v, q_base, do_base, lse_base, delta_base, dq_base, stride_qm, stride_dom,
                offs_n, offs_d, n_q, qk_scale_log2, start_m, end_m, BLOCK_M: tl.constexpr,
                HEAD_DIM: tl.constexpr, APPLY_MASK: tl.constexpr, FUSED_DQ: tl.constexpr,
                USE_TMA: tl.constexpr, PRECISION: tl.constexpr):
    # Streams query blocks [start_m, end_m) past one key block, accumulating dK and dV (both unscaled).
    # With FUSED_DQ it also adds this key block's share of dQ, dS K (unscaled), into the fp32 accumulator
    # at dq_base with atomic adds: 5 tile matmuls per tile instead of the split design's 4 + 3.
    offs_m0 = tl.arange(0, BLOCK_M)
    # listing: dkdv-loop
    for start in range(start_m, end_m, BLOCK_M):
        offs_m = start + offs_m0
        row_ok = offs_m < n_q
        if USE_TMA:  # per-head tensor descriptors: TMA zero-fills rows past n_q
            q = q_base.load([start, 0])
            do = do_base.load([start, 0])
        else:
            q = tl.load(q_base + offs_m[:, None] * stride_qm + offs_d[None, :],
                        mask=row_ok[:, None], other=0.0)
            do = tl.load(do_base + offs_m[:, None] * stride_dom + offs_d[None, :],
                         mask=row_ok[:, None], other=0.0)
        # Padded query rows get L = +inf, so their recomputed probabilities are exactly 0.
        lse2 = tl.load(lse_base + offs_m, mask=row_ok,
                       other=float("inf")) * 1.4426950408889634
        delta = tl.load(delta_base + offs_m, mask=row_ok, other=0.0)
        # Transposed tiles (keys x queries): no tile has to be transposed in registers.
        s_t = _dot(k, tl.trans(q), PRECISION)
        p_t = tl.math.exp2(s_t * qk_scale_log2 - lse2[None, :])
        if APPLY_MASK:
            p_t = tl.where(offs_m[None, :] >= offs_n[:, None], p_t, 0.0)
        dv += _dot(p_t.to(do.dtype), do, PRECISION)
        dp_t = _dot(v, tl.trans(do), PRECISION)
        ds_t = (p_t * (dp_t - delta[None, :])).to(q.dtype)
        dk += _dot(ds_t, q, PRECISION)
        if FUSED_DQ:
            dq = _dot(tl.trans(ds_t), k, PRECISION)
            if USE_TMA:  # one bulk reduction of the tile by the TMA unit
                dq_base.atomic_add([start, 0], dq)
            else:
                tl.atomic_add(dq_base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], dq,
                              mask=row_ok[:, None], sem="relaxed")
    return dk, dv
    # end listing: dkdv-loop


@triton.jit
def _dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, dq_acc_ptr,
                 n_q, n_k, qk_scale_log2, softmax_scale,
                 CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 HEAD_DIM: tl.constexpr, FUSED_DQ: tl.constexpr, USE_TMA: tl.constexpr,
                 PRECISION: tl.constexpr):
    # HBM bytes per program: read K_j, V_j once (2 BLOCK_N d b); read Q, dO (2 d b per query row), L and D
    # (8 bytes per query row) once for each query block it visits; write dK_j, dV_j (2 BLOCK_N d b); with
    # FUSED_DQ, add 4 d bytes per visited query row into the fp32 dQ accumulator (atomics, in L2).
    pid_n = tl.program_id(0)
    pid_bh = tl.program_id(1).to(tl.int64)
    start_n = pid_n * BLOCK_N
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    key_ok = offs_n < n_k
    # Contiguous (B, H, N, d) tensors: head pid_bh starts at pid_bh * N * d, rows are d apart.
    kv_offsets = pid_bh * n_k * HEAD_DIM + offs_n[:, None] * HEAD_DIM + offs_d[None, :]
    k = tl.load(k_ptr + kv_offsets, mask=key_ok[:, None], other=0.0)
    v = tl.load(v_ptr + kv_offsets, mask=key_ok[:, None], other=0.0)
    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    q_base = q_ptr + pid_bh * n_q * HEAD_DIM
    do_base = do_ptr + pid_bh * n_q * HEAD_DIM
    lse_base = lse_ptr + pid_bh * n_q
    delta_base = delta_ptr + pid_bh * n_q
    dq_base = dq_acc_ptr + pid_bh * n_q * HEAD_DIM
    if USE_TMA:  # (needs contiguous q, do) one 2-D descriptor per head, bounds (n_q, d)
        q_base = tl.make_tensor_descriptor(q_base, shape=[n_q, HEAD_DIM], strides=[HEAD_DIM, 1],
                                           block_shape=[BLOCK_M, HEAD_DIM])
        do_base = tl.make_tensor_descriptor(do_base, shape=[n_q, HEAD_DIM], strides=[HEAD_DIM, 1],
                                            block_shape=[BLOCK_M, HEAD_DIM])
        dq_base = tl.make_tensor_descriptor(dq_base, shape=[n_q, HEAD_DIM], strides=[HEAD_DIM, 1],
                                            block_shape=[BLOCK_M, HEAD_DIM])
    if CAUSAL:
        # Query rows below start_n see none of these keys. Rows from `mid` on see all of them; the blocks
        # between cross the diagonal and need the mask.
        lo = (start_n // BLOCK_M) * BLOCK_M
        mid = ((start_n + BLOCK_N - 1 + BLOCK_M - 1) // BLOCK_M) * BLOCK_M
        mid = tl.minimum(mid, n_q)
        dk, dv = _dkdv_tiles(dk, dv, k, v, q_base, do_base, lse_base, delta_base, dq_base, HEAD_DIM,
                             HEAD_DIM, offs_n, offs_d, n_q, qk_scale_log2, lo, mid, BLOCK_M, HEAD_DIM,
                             True, FUSED_DQ, USE_TMA, PRECISION)
        dk, dv = _dkdv_tiles(dk, dv, k, v, q_base, do_base, lse_base, delta_base, dq_base, HEAD_DIM,
                             HEAD_DIM, offs_n, offs_d, n_q, qk_scale_log2, mid, n_q, BLOCK_M, HEAD_DIM,
                             False, FUSED_DQ, USE_TMA, PRECISION)
    else:
        dk, dv = _dkdv_tiles(dk, dv, k, v, q_base, do_base, lse_base, delta_base, dq_base, HEAD_DIM,
                             HEAD_DIM, offs_n, offs_d, n_q, qk_scale_log2, 0, n_q, BLOCK_M, HEAD_DIM,
                             False, FUSED_DQ, USE_TMA, PRECISION)
    dk *= softmax_scale
    # dK and dV are written contiguous (B, H, N_k, d).
    tl.store(dk_ptr + kv_offsets, dk.to(dk_ptr.dtype.element_ty), mask=key_ok[:, None])
    tl.store(dv_ptr + kv_offsets, dv.to(dv_ptr.dtype.element_ty), mask=key_ok[:, None])


@triton.jit
def _dq_tiles(dq, q, do, lse2, delta, k_base, v_base, stride_kn, stride_vn, offs_m, offs_d, n_k,
              qk_scale_log2, start_n, end_n, BLOCK_N: tl.constexpr, APPLY_MASK: tl.constexpr,
              PRECISION: tl.constexpr):
    # Streams key blocks [start_n, end_n) past one query block, accumulating dQ (unscaled). Padded key rows
    # load as zeros, so their contribution dS K vanishes without a mask.
    offs_n0 = tl.arange(0, BLOCK_N)
    # listing: dq-loop
    for start in range(start_n, end_n, BLOCK_N):
        offs_n = start + offs_n0
        key_ok = offs_n < n_k
        k = tl.load(k_base + offs_n[:, None] * stride_kn + offs_d[None, :],
                    mask=key_ok[:, None], other=0.0)
        v = tl.load(v_base + offs_n[:, None] * stride_vn + offs_d[None, :],
                    mask=key_ok[:, None], other=0.0)
        s = _dot(q, tl.trans(k), PRECISION)
        p = tl.math.exp2(s * qk_scale_log2 - lse2[:, None])
        if APPLY_MASK:
            p = tl.where(offs_m[:, None] >= offs_n[None, :], p, 0.0)
        dp = _dot(do, tl.trans(v), PRECISION)
        ds = p * (dp - delta[:, None])
        dq += _dot(ds.to(k.dtype), k, PRECISION)
    return dq
    # end listing: dq-loop


@triton.jit
def _dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr,
               n_q, n_k, qk_scale_log2, softmax_scale,
               CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               HEAD_DIM: tl.constexpr, PRECISION: tl.constexpr):
    # HBM bytes per program: read Q_i, dO_i once (2 BLOCK_M d b) with their L and D; read K, V once for
    # each key block it visits (2 BLOCK_N d b each); write dQ_i (BLOCK_M d b).
    pid_m = tl.program_id(0)
    if CAUSAL:
        # Query block i visits i + 1 key blocks: start the longest programs first (a shorter tail).
        pid_m = tl.num_programs(0) - 1 - pid_m
    pid_bh = tl.program_id(1).to(tl.int64)
    start_m = pid_m * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < n_q
    q_offsets = pid_bh * n_q * HEAD_DIM + offs_m[:, None] * HEAD_DIM + offs_d[None, :]
    q = tl.load(q_ptr + q_offsets, mask=row_ok[:, None], other=0.0)
    do = tl.load(do_ptr + q_offsets, mask=row_ok[:, None], other=0.0)
    lse2 = tl.load(lse_ptr + pid_bh * n_q + offs_m, mask=row_ok, other=float("inf")) * 1.4426950408889634
    delta = tl.load(delta_ptr + pid_bh * n_q + offs_m, mask=row_ok, other=0.0)
    dq = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    k_base = k_ptr + pid_bh * n_k * HEAD_DIM
    v_base = v_ptr + pid_bh * n_k * HEAD_DIM
    if CAUSAL:
        # Keys below `mid` are visible to every row of this block; keys in [mid, end) cross the diagonal.
        end = tl.minimum(start_m + BLOCK_M, n_k)
        mid = tl.minimum(((start_m + 1) // BLOCK_N) * BLOCK_N, end)
        dq = _dq_tiles(dq, q, do, lse2, delta, k_base, v_base, HEAD_DIM, HEAD_DIM, offs_m, offs_d, n_k,
                       qk_scale_log2, 0, mid, BLOCK_N, False, PRECISION)
        dq = _dq_tiles(dq, q, do, lse2, delta, k_base, v_base, HEAD_DIM, HEAD_DIM, offs_m, offs_d, n_k,
                       qk_scale_log2, mid, end, BLOCK_N, True, PRECISION)
    else:
        dq = _dq_tiles(dq, q, do, lse2, delta, k_base, v_base, HEAD_DIM, HEAD_DIM, offs_m, offs_d, n_k,
                       qk_scale_log2, 0, n_k, BLOCK_N, False, PRECISION)
    dq *= softmax_scale
    tl.store(dq_ptr + q_offsets, dq.to(dq_ptr.dtype.element_ty), mask=row_ok[:, None])


# --------------------------------------------------------------------------------------------------------
# Validation and public wrappers.
# --------------------------------------------------------------------------------------------------------


def _check_attention_inputs(q, k, v) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        _checks.check_is_tensor(name, t)
        _checks.check_ndim(name, t, 4, "must be 4-D (batch, heads, seq_len, head_dim)")
        _checks.check_dtype(name, t, DTYPE_NAMES)
        _checks.check_device(name, t, INTERPRETED)
    for name, t in (("k", k), ("v", v)):
        _checks.check_same_dtype_and_device(name, t, "q", q)
        if t.shape[:2] != q.shape[:2]:
            raise ValueError(f"{name}.shape[:2] (batch, heads) must equal q's {tuple(q.shape[:2])}, "
                             f"got {tuple(t.shape[:2])} (grouped-query attention is not supported)")
        if t.shape[3] != q.shape[3]:
            raise ValueError(f"{name}.shape[3] (head_dim) must equal q's {q.shape[3]}, got {t.shape[3]}")
    if v.shape[2] != k.shape[2]:
        raise ValueError(f"v.shape[2] (keys) must equal k.shape[2] {k.shape[2]}, got {v.shape[2]}")
    if q.shape[3] not in HEAD_DIMS:
        raise ValueError(f"q.shape[3] (head_dim) must be one of {HEAD_DIMS}, got {q.shape[3]}")
    for name, t in (("q", q), ("k", k)):
        if min(t.shape) < 1:
            raise ValueError(f"{name} must not be empty, got shape {tuple(t.shape)}")


def _check_causal_and_scale(causal, softmax_scale) -> float | None:
    if not isinstance(causal, bool):
        raise ValueError(f"causal must be a bool, got {causal!r}")
    if softmax_scale is None:
        return None
    if (isinstance(softmax_scale, bool) or not isinstance(softmax_scale, numbers.Real)
            or not math.isfinite(softmax_scale) or softmax_scale <= 0):
        raise ValueError(f"softmax_scale must be None or a finite positive number, got {softmax_scale!r}")
    return float(softmax_scale)


#: (head_dim, causal) cases where the Gluon backward (:mod:`gpuperf.kernels.gluon_attention_bwd`) replaces
#: the Triton kernels for fp16/bf16 on Hopper, in :func:`flash_attention_backward`'s default launch and in
#: :class:`FlashAttentionFunction`: those an A/B on the H200 measured faster (bench/NOTES.md, gluonbwd).
#: Empty: no case was measured faster yet.
GLUON_CASES: frozenset = frozenset()


def _gluon_backward(q, k, v, o, lse, do, causal, softmax_scale):
    """The Gluon backward's (dq, dk, dv) where :data:`GLUON_CASES` names the case and the kernel can run
    (Hopper, compiled kernels, fp16/bf16, contiguous aligned inputs); None otherwise (the Triton kernels
    then run)."""
    if (q.shape[-1], causal) not in GLUON_CASES or INTERPRETED or q.dtype not in (torch.float16,
                                                                                  torch.bfloat16):
        return None
    from gpuperf.kernels import gluon_attention_bwd as gab

    do = do.contiguous() if do.dtype == q.dtype else do.to(q.dtype).contiguous()
    if not gab.usable_for(q, k, v, do):
        return None
    return gab.gluon_attention_backward(q, k, v, o, lse, do, causal, softmax_scale)


def flash_attention_backward(q, k, v, o, lse, do, causal: bool = False, softmax_scale: float | None = None,
                             *, config: BackwardConfig | None = None, fp32_precision: str = "ieee",
                             return_kernels: bool = False):
    """dQ, dK, dV of ``o = softmax(scale q k^T [+ causal mask]) v`` by recomputation from ``lse``.

    Parameters
    ----------
    q: (B, H, N_q, d); k, v: (B, H, N_k, d); fp16, bf16 or fp32 (GPU), fp16 or fp32 (interpreter); d in
        :data:`HEAD_DIMS`.
    o, do: (B, H, N_q, d), the forward output and the gradient of the loss with respect to it.
    lse: (B, H, N_q), the natural-log row log-sum-exp of the scaled, masked scores (float32 from the
        forward kernel).
    causal: top-left aligned causal mask (query i sees keys j <= i).
    softmax_scale: defaults to 1/sqrt(d).
    config: tile sizes (default :func:`default_config`).
    fp32_precision: ``"ieee"`` (exact fp32 products) or ``"tf32"`` for fp32 inputs; ignored otherwise.
    return_kernels: also return a dict of the launched kernels (Triton's compiled-kernel objects, with
        ``n_regs`` and ``n_spills`` on a GPU), for tuning scripts.

    Returns ``(dq, dk, dv)``, contiguous, in q's dtype. Raises ``ValueError`` naming a bad argument.
    """
    plain = config is None and fp32_precision == "ieee" and not return_kernels and not INTERPRETED
    if plain:  # a call like an earlier one, already checked: straight to the launches
        key = _plan_key(q, k, v, o, lse, do, causal, softmax_scale)
        plan = _PLANS.get(key) if key is not None else None
        if plan is not None:
            return _launch_backward(q, k, v, o, lse, do, causal, plan[0], plan[1], launchers=plan[2])
    _check_attention_inputs(q, k, v)
    scale = _check_causal_and_scale(causal, softmax_scale)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    head_dim = q.shape[3]
    for name, t in (("o", o), ("do", do)):
        if not isinstance(t, torch.Tensor) or t.shape != q.shape:
            shape = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"{name} must be a tensor of q's shape {tuple(q.shape)}, got {shape}")
        if t.device != q.device:
            raise ValueError(f"{name}.device must equal q.device {q.device}, got {t.device}")
        if t.dtype not in DTYPE_NAMES or (INTERPRETED and t.dtype == torch.bfloat16):
            raise ValueError(f"{name}.dtype must be a supported float dtype, got {t.dtype}")
    if not isinstance(lse, torch.Tensor) or lse.shape != q.shape[:3]:
        shape = tuple(lse.shape) if isinstance(lse, torch.Tensor) else type(lse).__name__
        raise ValueError(f"lse must be a tensor of shape {tuple(q.shape[:3])}, got {shape}")
    if lse.device != q.device:
        raise ValueError(f"lse.device must equal q.device {q.device}, got {lse.device}")
    if fp32_precision not in ("ieee", "tf32"):
        raise ValueError(f"fp32_precision must be 'ieee' or 'tf32', got {fp32_precision!r}")
    if plain and GLUON_CASES:
        grads = _gluon_backward(q.contiguous(), k.contiguous(), v.contiguous(), o, lse, do, causal, scale)
        if grads is not None:
            return grads
    if config is None:
        config = default_config(head_dim, q.dtype, causal)
        if plain:
            key = _plan_key(q, k, v, o, lse, do, causal, softmax_scale)
            if key is not None:
                if len(_PLANS) >= 1024:
                    _PLANS.clear()
                _PLANS[key] = (scale, config, {})
    elif not isinstance(config, BackwardConfig):
        raise ValueError(f"config must be a BackwardConfig or None, got {type(config).__name__}")
    return _launch_backward(q, k, v, o, lse, do, causal, scale, config, fp32_precision, return_kernels)


#: Checked default launches by :func:`_plan_key`: (scale, BackwardConfig, {kernel: launcher}) (the
#: launchers, :class:`gpuperf.kernels._launch.Launcher`, from the first launches through the plan).
_PLANS: dict = {}


def _plan_key(q, k, v, o, lse, do, causal, softmax_scale):
    """Everything the checks and the default configuration read from the arguments (classes, shapes,
    dtypes, devices, mask, scale; contiguity, which the launches need and the checks do not), or None for
    inputs left to the full checks."""
    ts = (q, k, v, o, lse, do)
    if not (all(t.__class__ is torch.Tensor and t.is_contiguous() for t in ts) and causal.__class__ is bool
            and (softmax_scale is None or softmax_scale.__class__ is float)):
        return None
    return (*(t.shape for t in ts), *(t.dtype for t in ts), *(t.get_device() for t in ts),
            *(t.data_ptr() & 15 for t in ts), causal, softmax_scale)


def _launch_backward(q, k, v, o, lse, do, causal, scale, config, fp32_precision="ieee",
                     return_kernels=False, launchers: dict | None = None):
    # The launches, without the checks (the autograd Function's inputs were checked by its forward).
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    use_tma = config.tma and _tma_available(q.device)
    if use_tma:
        _ensure_allocator()
    # The kernels address contiguous (B, H, N, d) tensors (fewer launch arguments: ~1 us of host time
    # each); .contiguous() is free for the usual, already contiguous inputs.
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    if lse.dtype != torch.float32 or not lse.is_contiguous():
        lse = lse.to(torch.float32).contiguous()
    if do.dtype != q.dtype:
        do = do.to(q.dtype)
    precision = fp32_precision if q.dtype == torch.float32 else "default"
    delta = torch.empty((batch, heads, n_q), device=q.device, dtype=torch.float32)
    dq = torch.empty_like(q)
    dk = torch.empty_like(k)
    dv = torch.empty_like(k)
    # The fused variant sums dQ over key blocks in fp32 (zeroed by the preprocess kernel).
    dq_acc = torch.empty_like(q, dtype=torch.float32) if config.fused else delta

    pre_block = 64 if not INTERPRETED else 32
    handles = {}  # the compiled kernels (Triton's launch result): registers and spills for the sweep
    launch = _launch.launch if launchers is None else _plan_launch(launchers, q.get_device())
    handles["preprocess"] = launch(_preprocess_kernel, (triton.cdiv(n_q, pre_block), batch * heads, 1),
                                   (o, do, delta, dq_acc, n_q, pre_block, head_dim, config.fused))
    common = (n_q, n_k, scale * _LOG2E, scale)
    handles["dkdv"] = launch(
        _dkdv_kernel, (triton.cdiv(n_k, config.dkdv_block_n), batch * heads, 1),
        (q, k, v, do, lse, delta, dk, dv, dq_acc, *common, causal, config.dkdv_block_m, config.dkdv_block_n,
         head_dim, config.fused, use_tma, precision),
        (("num_warps", config.num_warps), ("num_stages", config.num_stages)))
    if config.fused:
        n_elements = dq.numel()
        convert_block = 1024 if not INTERPRETED else 4096
        handles["convert"] = launch(_dq_convert_kernel, (triton.cdiv(n_elements, convert_block), 1, 1),
                                    (dq_acc, dq, n_elements, scale, convert_block))
    else:
        handles["dq"] = launch(
            _dq_kernel, (triton.cdiv(n_q, config.dq_block_m), batch * heads, 1),
            (q, k, v, do, lse, delta, dq, *common, causal, config.dq_block_m, config.dq_block_n, head_dim,
             precision),
            (("num_warps", config.dq_num_warps), ("num_stages", config.dq_num_stages)))
    if return_kernels:
        return dq, dk, dv, handles
    return dq, dk, dv


def _plan_launch(launchers: dict, device: int):
    """:func:`gpuperf.kernels._launch.launch` for a plan's launches: each kernel's first launch through
    the plan keeps its launcher in ``launchers``; the next ones call it directly (same key: the plan's key
    fixes every argument but the tensors' addresses, and fresh outputs are aligned)."""
    stream = _launch.current_stream(device)

    def launch(kernel, grid, args, options=()):
        launcher = launchers.get(kernel)
        if launcher is None:
            launcher = _launch.launcher(kernel, grid, args, options)
            if launcher is None:
                return None
            launchers[kernel] = launcher
        else:  # pointers as integers: the launcher then skips asking the driver about each one
            launcher(grid, stream, tuple(a.data_ptr() if a.__class__ is torch.Tensor else a for a in args))
        return launcher.compiled

    return launch


def _forward(q, k, v, causal, softmax_scale):
    from gpuperf.kernels.flash_attention import flash_attention_forward

    return flash_attention_forward(q, k, v, causal=causal, softmax_scale=softmax_scale)


class FlashAttentionFunction(torch.autograd.Function):
    """Forward: ``gpuperf.kernels.flash_attention.flash_attention_forward`` (saves O and L);
    backward: :func:`flash_attention_backward` (recomputes P tile by tile). Use :func:`flash_attention`."""

    @staticmethod
    def forward(ctx, q, k, v, causal, softmax_scale):
        o, lse = _forward(q, k, v, causal, softmax_scale)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.causal = causal
        ctx.softmax_scale = softmax_scale
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        if GLUON_CASES:
            grads = _gluon_backward(q, k, v, o, lse, do, ctx.causal, ctx.softmax_scale)
            if grads is not None:
                return (*grads, None, None)
        scale = 1.0 / math.sqrt(q.shape[-1]) if ctx.softmax_scale is None else ctx.softmax_scale
        config = default_config(q.shape[-1], q.dtype, ctx.causal)
        dq, dk, dv = _launch_backward(q, k, v, o, lse, do, ctx.causal, scale, config)
        return dq, dk, dv, None, None


def flash_attention(q, k, v, causal: bool = False, softmax_scale: float | None = None) -> torch.Tensor:
    """Exact attention with a FlashAttention forward and backward: a drop-in for
    ``torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=softmax_scale)``
    in the cases it supports, differentiable with respect to q, k and v.

    Supported: 4-D (B, H, N, d) tensors with equal B, H and d (no grouped-query attention), d in
    :data:`HEAD_DIMS`, any N_q and N_k, fp16/bf16/fp32 on a GPU (fp16/fp32 under the interpreter), no
    attention mask other than ``causal`` (top-left aligned, like SDPA's ``is_causal``), no dropout. Other
    cases raise ``ValueError`` naming the argument.
    """
    _check_attention_inputs(q, k, v)
    scale = _check_causal_and_scale(causal, softmax_scale)
    # The forward kernel takes contiguous tensors; .contiguous() is free for those and differentiable.
    q, k, v = (t.contiguous() for t in (q, k, v))
    return FlashAttentionFunction.apply(q, k, v, causal, scale)


__all__ = [
    "BackwardConfig", "DTYPE_NAMES", "FUSED_CONFIGS", "FlashAttentionFunction", "GLUON_CASES", "GPU_CONFIGS",
    "GPU_CONFIG_FP32", "HEAD_DIMS", "INTERPRETED", "INTERPRETER_CONFIG", "SPLIT_CONFIGS",
    "TiledAttentionFunction", "attention_backward_split_torch", "attention_backward_tiled_torch",
    "attention_forward_torch", "default_config",
    "flash_attention", "flash_attention_backward", "variant_config",
]
