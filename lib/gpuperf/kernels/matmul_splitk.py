"""Small and ragged matmuls: a split-K Triton kernel with a deterministic reduction, and the dispatch.

Why split K: a product whose output has fewer tiles than the GPU has SMs (1000^3 in 128 x 128 tiles is
8 x 8 = 64 tiles for 132 SMs; a decoding step's m = 1..64 rows against a 4096 x 4096 weight is 1 x 32 tiles)
leaves most SMs idle, whatever each tile's speed. Cutting the k loop of every tile into ``SPLIT_K`` slices,
each slice a separate program, multiplies the programs by ``SPLIT_K``; the slices' fp32 partial sums are then
added. :func:`gpuperf.tiling.split_k_model` predicts what a split buys for a shape and a tile, and
:func:`plan_matmul` (a pure function) picks the kernel, tile and split from it.

The reduction is **deterministic**: every slice stores its fp32 partial tile in a workspace and increments
the tile's counter (an atomic add with release-acquire ordering); the slice that finds the counter at
``SPLIT_K - 1`` is the last to finish, and it adds the ``SPLIT_K`` partials in the fixed order 0, 1, ...,
``SPLIT_K - 1`` (never in arrival order), rounds once to the output dtype, stores the tile and resets the
counter to 0 for the next launch. The same inputs, shape and plan on the same GPU give the same bits on
every run, unlike a reduction by fp32 atomic adds into the output, whose order (and so whose rounding)
changes from run to run. It is not batch-invariant: :func:`plan_matmul` picks the tile, k step and split
by m and by SM count, so one row's result can change with the number of rows. The counters
live in one zeroed int32 buffer per device that every launch leaves zeroed again; two launches running at
the same time on different streams of one device would share it (not supported).

HBM or L2 traffic of the reduction: each slice writes and the last reads ``4 t_m t_n`` bytes per tile and
slice (fp32), against ``b (t_m + t_n) t_k`` bytes per k step of the tile's own loads.

**Stream-K** (:func:`matmul_streamk`): one program per SM, each an equal run of the k steps of all tiles
(tile after tile), so that no SM idles in a partial last wave; a tile cut between runs is added up by the
program that holds its last k step, which reads one fp32 part from every other program holding part of the
tile, in a fixed order (deterministic for a given number of programs). A program pays the pipeline's fill
and drain once per tile it touches (:func:`gpuperf.tiling.stream_k_model` counts both). Its programs wait
for lower-numbered ones: safe when every program is resident at once, or when the GPU starts programs in
id order (which NVIDIA GPUs do, though no document promises it); :func:`matmul_streamk` allows at most one
program per SM. Not built: the Stream-K paper's hybrid (Osama et al., PPoPP 2023), whole waves of tiles
as usual and stream-K for the remainder only, the next thing to try where full waves exist (777 rows).

Loads, two ways (``MatmulPlan.tma``): through TMA descriptors built on the host (Hopper and later; row-major
operands whose rows are multiples of 16 bytes; the hardware zero-fills past M, N and K, so no masks), or
through pointers with any strides (transposed or sliced inputs): A's rows always masked (uniform along k,
A's contiguous dimension when A is row-major, so its loads stay 16-byte vectors), B's columns only in the
last tile column (a mask along B's contiguous dimension makes its loads scalar), the last, partial k step
masked along k. The pointer path runs under Triton's interpreter (fp32, fp16) and compiled on any GPU
Triton supports. Timed on the H200 in ``book/data/matmul_small_h200.json`` (2026-12-06); a probe on an H100 the
next day (bench/NOTES.md, fifteenth session) found those launches host-bound: about 100-150 us of host time a
call, Triton encoding the two TMA descriptors on every launch, around kernels of 11-54 us. Launches with
descriptors now go through the launcher's per-address encoding
(:func:`gpuperf.kernels._launch.launch_described`); not yet timed.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from gpuperf.kernels import _checks, _launch, interpreter_enabled
from gpuperf.kernels import matmul as _mm
from gpuperf.kernels.matmul import _grouped_tile

INTERPRETED = interpreter_enabled()

KERNELS = ("tma", "splitk")


@triton.jit
def _load_masked(ptrs, rows_ok, cols_ok):
    # rows_ok / cols_ok: None (no mask along that dimension) or a boolean vector.
    if rows_ok is None:
        if cols_ok is None:
            x = tl.load(ptrs)
        else:
            x = tl.load(ptrs, mask=cols_ok[None, :], other=0.0)
    else:
        if cols_ok is None:
            x = tl.load(ptrs, mask=rows_ok[:, None], other=0.0)
        else:
            x = tl.load(ptrs, mask=rows_ok[:, None] & cols_ok[None, :], other=0.0)
    return x


@triton.jit
def _k_slice(a_ptrs, b_ptrs, row_ok, col_ok, span, stride_ak, stride_bk,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
             INPUT_PRECISION: tl.constexpr):
    # Sum over `span` values of k from the pointers' start: full steps, then one masked.
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    full_steps = span // BLOCK_K
    for _ in range(0, full_steps):
        a = _load_masked(a_ptrs, row_ok, None)
        b = _load_masked(b_ptrs, None, col_ok)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    rest = span - full_steps * BLOCK_K
    if rest > 0:
        k_ok = tl.arange(0, BLOCK_K) < rest
        a = _load_masked(a_ptrs, row_ok, k_ok)
        b = _load_masked(b_ptrs, k_ok, col_ok)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
    return acc


@triton.jit
def _tile_k_range(a_ptr, b_ptr, a_desc, b_desc, pid_m, pid_n, k_lo, span, M, N,
                  stride_am, stride_ak, stride_bk, stride_bn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  INPUT_PRECISION: tl.constexpr, USE_TMA: tl.constexpr):
    # fp32 sum over k in [k_lo, k_lo + span) of one output tile.
    if USE_TMA:  # TMA descriptors: the hardware zero-fills beyond M, N, K
        acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
        for kk in range(0, tl.cdiv(span, BLOCK_K)):
            k = k_lo + kk * BLOCK_K
            a = a_desc.load([pid_m * BLOCK_M, k])
            b = b_desc.load([k, pid_n * BLOCK_N])
            acc = tl.dot(a, b, acc)
    else:
        rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
        ks = k_lo + tl.arange(0, BLOCK_K).to(tl.int64)
        a_ptrs = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
        b_ptrs = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
        if (pid_n + 1) * BLOCK_N <= N:  # B's columns unmasked: vector loads
            acc = _k_slice(a_ptrs, b_ptrs, rows < M, None, span, stride_ak, stride_bk,
                           BLOCK_M, BLOCK_N, BLOCK_K, INPUT_PRECISION)
        else:
            acc = _k_slice(a_ptrs, b_ptrs, rows < M, cols < N, span, stride_ak, stride_bk,
                           BLOCK_M, BLOCK_N, BLOCK_K, INPUT_PRECISION)
    return acc


@triton.jit
def _matmul_splitk_kernel(
    a_ptr, b_ptr, a_desc, b_desc, c_ptr, ws_ptr, lock_ptr, M, N, K, K_PER_SPLIT,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr, INPUT_PRECISION: tl.constexpr,
    USE_TMA: tl.constexpr,
):
    # One program per (output tile, slice of k). No slice waits for another: the
    # last to arrive adds them all, so the order the slices run in does not matter.
    tile = tl.program_id(0) // SPLIT_K
    split = tl.program_id(0) % SPLIT_K
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = _grouped_tile(tile, num_pid_m, num_pid_n, GROUP_M)
    k_lo = split * K_PER_SPLIT
    span = tl.minimum(K - k_lo, K_PER_SPLIT)  # this slice's k values
    acc = _tile_k_range(a_ptr, b_ptr, a_desc, b_desc, pid_m, pid_n, k_lo, span, M, N,
                        stride_am, stride_ak, stride_bk, stride_bn,
                        BLOCK_M, BLOCK_N, BLOCK_K, INPUT_PRECISION, USE_TMA)
    rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    c_ok = (rows < M)[:, None] & (cols < N)[None, :]
    if SPLIT_K == 1:
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=c_ok)
    else:
        # Publish this slice's fp32 partial, then count it in.
        TILE: tl.constexpr = BLOCK_M * BLOCK_N
        offs = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
        ws_tile = ws_ptr + tile.to(tl.int64) * (SPLIT_K * TILE)
        tl.store(ws_tile + split * TILE + offs, acc)
        tl.debug_barrier()  # all threads' stores precede the atomic: its release covers them
        arrived = tl.atomic_add(lock_ptr + tile, 1, sem="acq_rel")
        if arrived == SPLIT_K - 1:  # the last (its acquire sees all partials): add in order
            total = tl.load(ws_tile + offs, cache_modifier=".cg")
            for s in range(1, SPLIT_K):
                total += tl.load(ws_tile + s * TILE + offs, cache_modifier=".cg")
            tl.store(c_ptrs, total.to(c_ptr.dtype.element_ty), mask=c_ok)
            tl.atomic_xchg(lock_ptr + tile, 0)  # zero again for the next launch


@triton.jit
def _matmul_streamk_kernel(
    a_ptr, b_ptr, a_desc, b_desc, c_ptr, ws_ptr, flag_ptr, M, N, K, ITERS_PER_PROGRAM,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, INPUT_PRECISION: tl.constexpr, USE_TMA: tl.constexpr,
):
    # Stream-K: the k steps of all tiles, tile after tile, dealt in equal runs to
    # the programs (one per SM). A program walks its run from the top down, so a
    # tile it shares with the next program comes first (it publishes its part)
    # and a tile it shares with the previous one comes last (it adds their parts).
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_steps = tl.cdiv(K, BLOCK_K)
    total = num_pid_m * num_pid_n * k_steps
    it_lo = pid * ITERS_PER_PROGRAM
    it = tl.minimum(total, it_lo + ITERS_PER_PROGRAM)
    TILE: tl.constexpr = BLOCK_M * BLOCK_N
    offs = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    while it > it_lo:
        tile = (it - 1) // k_steps
        tile_lo = tile * k_steps
        seg_lo = tl.maximum(tile_lo, it_lo)
        pid_m, pid_n = _grouped_tile(tile, num_pid_m, num_pid_n, GROUP_M)
        k_lo = (seg_lo - tile_lo) * BLOCK_K
        span = tl.minimum(K, (it - tile_lo) * BLOCK_K) - k_lo
        acc = _tile_k_range(a_ptr, b_ptr, a_desc, b_desc, pid_m, pid_n, k_lo, span, M, N,
                            stride_am, stride_ak, stride_bk, stride_bn,
                            BLOCK_M, BLOCK_N, BLOCK_K, INPUT_PRECISION, USE_TMA)
        if it < tile_lo + k_steps:
            # Not the tile's end: publish this part for the program that has it.
            tl.store(ws_ptr + pid.to(tl.int64) * TILE + offs, acc)
            tl.debug_barrier()
            tl.atomic_xchg(flag_ptr + pid, 1, sem="release")
        else:
            # The tile's end: add the parts of the programs below, nearest first.
            p = pid - 1
            lo = seg_lo
            while lo > tile_lo:
                while tl.atomic_add(flag_ptr + p, 0, sem="acquire") == 0:
                    pass
                tl.debug_barrier()
                acc += tl.load(ws_ptr + p.to(tl.int64) * TILE + offs, cache_modifier=".cg")
                tl.atomic_xchg(flag_ptr + p, 0)  # zero again for the next launch
                lo = tl.maximum(tile_lo, p * ITERS_PER_PROGRAM)
                p -= 1
            rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
            cols = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
            c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
            tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
                     mask=(rows < M)[:, None] & (cols < N)[None, :])
        it = seg_lo


# --------------------------------------------------------------------------------------------------------
# Plans: which kernel, tile and split for a shape (pure), and the launches.
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatmulPlan:
    """One launch: ``kernel`` ("tma": the persistent TMA kernel of :mod:`gpuperf.kernels.matmul`, its own
    tile; "splitk": :func:`matmul_splitk` with this tile, split, warps and stages; "streamk":
    :func:`matmul_streamk` with this tile, one program per SM). ``tma``: the split-K and stream-K kernels
    load A and B through TMA descriptors built on the host (Hopper and later; row-major operands whose
    rows are multiples of 16 bytes), else through pointers."""

    kernel: str
    block_m: int = 128
    block_n: int = 128
    block_k: int = 64
    split_k: int = 1
    num_warps: int = 8
    num_stages: int = 3
    group_m: int = 8
    tma: bool = False


#: Tiles the dispatch considers for the split-K and stream-K kernels: (BLOCK_M, BLOCK_N, BLOCK_K, warps,
#: stages) -> the fraction of the 128 x 128 tile's rate per SM a full wave of it reaches (the model's
#: step costs are divided by it). Not measured: all are 1.0 (every tile assumed to keep the SM's full
#: rate) until a GPU sweep calibrates them, `PYTHONPATH=$PWD/lib python3 bench/matmul_small_sweep.py OUT`
#: (bench/NOTES.md, smallmm).
SPLITK_TILES = {
    (128, 128, 64, 8, 3): 1.0,
    (128, 64, 64, 4, 4): 1.0,
    (64, 128, 64, 4, 4): 1.0,
}
#: Rows of a decoding step (m <= 64): the narrowest m tile that holds them, whose k steps stream the weight.
GEMV_TILES = {16: (16, 128, 128, 4, 4), 32: (32, 128, 128, 4, 4), 64: (64, 128, 64, 4, 4)}
#: The dispatch's split-K and stream-K plans load through TMA (no masks, no spills in the sm_90 builds of
#: bench/matmul_small_compile.py; rows of any length that is a multiple of 16 bytes, such as k = 1000);
#: operands TMA cannot take (transposed, sliced, fp32) fall back to pointer loads.
PLAN_TMA = True
#: Kernels the dispatch may pick for products that do not fill the GPU.
SMALL_KERNELS = ("splitk", "streamk")

#: At least this many output tiles of 128 x 256 per SM and the persistent TMA kernel runs unsplit. The model
#: alone (every tile at the SM's full rate) would split down to 0.9; measured on an H100 on 2026-12-05
#: (bench/profiles/h100-2026-12-05b, same run, bf16), the TMA kernel beat the split/stream-K plans at
#: 777 x 4096 x 4096 (0.85 of a wave: 0.76 of cuBLAS against 0.40) and 1536^3 (0.55: 0.63 against 0.53),
#: and lost at 1000^3 and 1000 x 1000 x 8192 (0.24 of a wave: 0.76 against 0.86, 0.74 against 0.80).
TMA_MIN_WAVES = 0.5
#: Products with m at most this take the narrow GEMV-like tiles.
DECODE_MAX_M = 64
#: Blocks of a decoding tile one H200 SM holds at once (registers and shared memory of the sm_90 builds,
#: bench/matmul_small_compile.py): the wave the split is chosen for is this many per SM.
DECODE_BLOCKS_PER_SM = 2


@functools.lru_cache(maxsize=4096)
def plan_matmul(m: int, n: int, k: int, sm_count: int, tma_ok: bool = True) -> MatmulPlan:
    """The launch for an m x n x k product on a GPU of ``sm_count`` SMs (pure: no GPU needed).

    * m <= :data:`DECODE_MAX_M` (a decoding step): the time is reading B; the narrowest m tile that holds the
      rows (16, 32, 64), 128 columns, and the split of k that :func:`gpuperf.tiling.best_split_k` predicts
      fastest for waves of :data:`DECODE_BLOCKS_PER_SM` blocks per SM (every program streams its slice of
      the weight; a split that leaves a second wave mostly empty loses).
    * otherwise, when the persistent TMA kernel can run (``tma_ok``) and its 128 x 256 tiles fill
      :data:`TMA_MIN_WAVES` of the SMs or more: that kernel, unsplit;
    * otherwise, among :data:`SPLITK_TILES` and the kernels of :data:`SMALL_KERNELS`, the launch that
      :func:`gpuperf.tiling.best_split_k` predicts fastest (split-K at its best split, or stream-K),
      each tile's cost divided by its efficiency in :data:`SPLITK_TILES` (assumed 1.0, not yet
      measured); ties go to split-K.
    """
    from gpuperf import tiling

    for name, v in (("m", m), ("n", n), ("k", k), ("sm_count", sm_count)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    if m <= DECODE_MAX_M:
        rows = 16 if m <= 16 else (32 if m <= 32 else 64)
        bm, bn, bk, warps, stages = GEMV_TILES[rows]
        split = tiling.best_split_k(m, n, k, bm, bn, bk, DECODE_BLOCKS_PER_SM * sm_count, max_split=32).split_k
        return MatmulPlan("splitk", bm, bn, bk, split, warps, stages, 1, PLAN_TMA)
    if tma_ok and (-(-m // 128)) * (-(-n // 256)) >= TMA_MIN_WAVES * sm_count:
        return MatmulPlan("tma")
    best = None
    for (bm, bn, bk, warps, stages), efficiency in SPLITK_TILES.items():
        model = tiling.best_split_k(m, n, k, bm, bn, bk, sm_count)
        scale = model.predicted_cost / model.predicted_steps / efficiency
        options = [(model.predicted_steps * scale, 0, MatmulPlan("splitk", bm, bn, bk, model.split_k, warps,
                                                                  stages, 8, PLAN_TMA))]
        if "streamk" in SMALL_KERNELS:
            options.append((model.stream_k_steps * scale, 1, MatmulPlan("streamk", bm, bn, bk, 1, warps,
                                                                         stages, 8, PLAN_TMA)))
        for option in options:
            if best is None or option[:2] < best[:2]:
                best = option
    return best[2]


_locks: dict = {}


def _lock_buffer(device: torch.device, n: int) -> torch.Tensor:
    """A zeroed int32 counter per tile, at least ``n``, kept per device (every launch leaves it zeroed)."""
    key = str(device)
    buf = _locks.get(key)
    if buf is None or buf.numel() < n:
        buf = torch.zeros(max(n, 1024), dtype=torch.int32, device=device)
        _locks[key] = buf
    return buf


def _check_operands(a, b, out, input_precision):
    for name, t in (("a", a), ("b", b)):
        _checks.check_is_tensor(name, t)
        _checks.check_ndim(name, t, 2, "must be a 2-D matrix")
        _checks.check_dtype(name, t, _mm.DTYPE_NAMES)
        _checks.check_device(name, t, INTERPRETED, bf16_note=" (bf16 arithmetic is unsupported there)")
    _checks.check_same_dtype_and_device("b", b, "a", a)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"b.shape[0] must equal a.shape[1] = {a.shape[1]} (the k dimension), got {b.shape[0]}")
    if a.dtype == torch.float32:
        if input_precision not in _mm.INPUT_PRECISIONS:
            raise ValueError(f"input_precision must be one of {_mm.INPUT_PRECISIONS} for fp32 inputs, "
                             f"got {input_precision!r}")
    elif input_precision is not None:
        raise ValueError(f"input_precision applies to fp32 inputs only; got {input_precision!r} for {a.dtype}")
    shape = (a.shape[0], b.shape[1])
    if out is None:
        return torch.empty(shape, dtype=a.dtype, device=a.device)
    _checks.check_is_tensor("out", out)
    _checks.check_same_dtype_and_device("out", out, "a", a)
    if tuple(out.shape) != shape:
        raise ValueError(f"out.shape must be (m, n) = {shape}, got {tuple(out.shape)}")
    for name, t in (("a", a), ("b", b)):
        if out.numel() and t.numel() and _checks.byte_ranges_overlap(out, t):
            raise ValueError(f"out must not overlap {name}")
    return out


def matmul_splitk(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None, *,
                  plan: MatmulPlan | None = None, input_precision: str | None = None) -> torch.Tensor:
    """``a @ b`` by the split-K kernel with ``plan``'s tile and split (default: :func:`plan_matmul`'s
    split-K plan for the shape; under the interpreter a 32 x 32 x 32 tile). ``a`` (m, k), ``b`` (k, n): any
    strides, one dtype (fp16, bf16, fp32 with ``input_precision``), one device. Deterministic: the same
    inputs give the same bits. Returns ``out``."""
    out = _check_operands(a, b, out, input_precision)
    m, k = a.shape
    n = b.shape[1]
    if m == 0 or n == 0:
        return out
    if k == 0:
        return out.zero_()
    if plan is None:
        if INTERPRETED:
            plan = MatmulPlan("splitk", 32, 32, 32, 1, 4, 1, 4)
        else:
            plan = _planned(m, n, k, _mm._device_info(a.device)[1], False)
            if plan.kernel != "splitk":
                plan = dataclasses.replace(plan, kernel="splitk", split_k=1)
            plan = _loadable(plan, a, b, input_precision)
    _check_plan(plan)
    _check_int32(plan, a, b, 0)
    bm, bn, bk, split = plan.block_m, plan.block_n, plan.block_k, plan.split_k
    k_steps = triton.cdiv(k, bk)
    steps_per_split = triton.cdiv(k_steps, split)
    split = triton.cdiv(k_steps, steps_per_split)  # no empty slices
    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    if split > 1:
        ws = torch.empty(tiles * split * bm * bn, dtype=torch.float32, device=a.device)
        locks = _lock_buffer(a.device, tiles)
    else:
        ws = locks = out  # unused
    precision = input_precision or "tf32"
    a_desc, b_desc = _descriptors(a, b, plan)
    args = (a, b, a_desc, b_desc, out, ws, locks, m, n, k, steps_per_split * bk, a.stride(0), a.stride(1),
            b.stride(0), b.stride(1), out.stride(0), out.stride(1), bm, bn, bk, plan.group_m, split, precision,
            plan.tma)
    options = (("num_warps", plan.num_warps), ("num_stages", plan.num_stages))
    _launch.launch_described(_matmul_splitk_kernel, (tiles * split,), args, options)
    return out


def matmul_streamk(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None, *,
                   plan: MatmulPlan | None = None, programs: int | None = None,
                   input_precision: str | None = None) -> torch.Tensor:
    """``a @ b`` by the stream-K kernel: ``plan``'s tile (its ``split_k`` is ignored), the k steps of all
    tiles dealt in equal runs to ``programs`` programs (default: one per SM; under the interpreter 4).
    A program may wait for a lower one's part, so on a GPU ``programs`` may not exceed the SMs (each then
    holds one at once). Deterministic (fixed assignment, parts added in a fixed order).
    Same operands as :func:`matmul_splitk`."""
    out = _check_operands(a, b, out, input_precision)
    m, k = a.shape
    n = b.shape[1]
    if m == 0 or n == 0:
        return out
    if k == 0:
        return out.zero_()
    if plan is None:
        plan = MatmulPlan("splitk", 32, 32, 32, 1, 4, 1, 4) if INTERPRETED else MatmulPlan("splitk")
        plan = _loadable(plan, a, b, input_precision)
    _check_plan(plan)
    if programs is None:
        programs = 4 if INTERPRETED or a.device.type != "cuda" else _mm._device_info(a.device)[1]
    if a.device.type == "cuda" and not INTERPRETED and programs > _mm._device_info(a.device)[1]:
        raise ValueError(f"programs must not exceed the GPU's SMs, got {programs}")
    bm, bn, bk = plan.block_m, plan.block_n, plan.block_k
    total = triton.cdiv(m, bm) * triton.cdiv(n, bn) * triton.cdiv(k, bk)
    _check_int32(plan, a, b, total)
    per_program = triton.cdiv(total, programs)
    programs = triton.cdiv(total, per_program)
    ws = torch.empty(programs * bm * bn, dtype=torch.float32, device=a.device)
    flags = _lock_buffer(a.device, programs)
    a_desc, b_desc = _descriptors(a, b, plan)
    args = (a, b, a_desc, b_desc, out, ws, flags, m, n, k, per_program, a.stride(0), a.stride(1), b.stride(0),
            b.stride(1), out.stride(0), out.stride(1), bm, bn, bk, plan.group_m, input_precision or "tf32",
            plan.tma)
    options = (("num_warps", plan.num_warps), ("num_stages", plan.num_stages))
    _launch.launch_described(_matmul_streamk_kernel, (programs,), args, options)
    return out


def tma_operands_ok(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when the TMA variants can load ``a`` and ``b``: fp16 or bf16, both row-major (last stride 1)
    with rows and bases on 16 bytes, on a Hopper-or-later GPU (or CPU tensors under the interpreter, which
    emulates the descriptors' loads)."""
    if a.dtype not in (torch.float16, torch.bfloat16) or a.stride(1) != 1 or b.stride(1) != 1:
        return False
    if not INTERPRETED and (a.device.type != "cuda" or _mm._device_info(a.device)[0] < 9):
        return False
    size = a.element_size()
    return all(x % 16 == 0 for x in (a.stride(0) * size, b.stride(0) * size, a.data_ptr(), b.data_ptr()))


def _loadable(plan: MatmulPlan, a: torch.Tensor, b: torch.Tensor, input_precision) -> MatmulPlan:
    """``plan``, with pointer loads instead of TMA where TMA cannot take the operands (transposed, sliced,
    unaligned, fp32)."""
    if plan.tma and (input_precision is not None or not tma_operands_ok(a, b)):
        return dataclasses.replace(plan, tma=False)
    return plan


def _descriptors(a: torch.Tensor, b: torch.Tensor, plan: MatmulPlan):
    """(A's, B's) host TMA descriptors for a plan with ``tma``, as :class:`gpuperf.kernels._launch.Desc`
    (launched by :func:`gpuperf.kernels._launch.launch_described`); otherwise the tensors themselves, which the kernels' pointer
    path never reads as descriptors."""
    if not plan.tma:
        return a, b
    if not tma_operands_ok(a, b):
        raise ValueError("plan.tma needs a Hopper-or-later GPU, fp16/bf16 row-major operands and 16-byte "
                         f"aligned rows; got {a.dtype}, strides {a.stride()} and {b.stride()}")
    return (_launch.Desc(a, tuple(a.shape), (a.stride(0), 1), [plan.block_m, plan.block_k]),
            _launch.Desc(b, tuple(b.shape), (b.stride(0), 1), [plan.block_k, plan.block_n]))


def _check_int32(plan: MatmulPlan, a: torch.Tensor, b: torch.Tensor, steps: int) -> None:
    """The kernels step pointers by ``BLOCK_K * stride`` and count stream-K steps in int32."""
    if max(abs(a.stride(1)), abs(b.stride(0))) * plan.block_k >= 2**31 or steps >= 2**31:
        raise ValueError("strides along k times BLOCK_K, and the k steps of all tiles, must be < 2**31")


def _check_plan(plan: object) -> None:
    if not isinstance(plan, MatmulPlan) or plan.kernel not in SMALL_KERNELS:
        raise ValueError(f"plan must be a MatmulPlan of kernel 'splitk' or 'streamk', got {plan!r}")
    for name in ("block_m", "block_n", "block_k", "num_warps", "group_m"):
        v = getattr(plan, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1 or v & (v - 1):
            raise ValueError(f"plan.{name} must be a power of two, got {v!r}")
    if min(plan.block_m, plan.block_n, plan.block_k) < 16:
        raise ValueError(f"plan's blocks must be >= 16 (tl.dot's minimum), got {plan!r}")
    if plan.split_k < 1 or plan.num_stages < 1:
        raise ValueError(f"plan.split_k and plan.num_stages must be >= 1, got {plan!r}")


@functools.lru_cache(maxsize=4096)
def _planned(m: int, n: int, k: int, sm_count: int, tma_ok: bool) -> MatmulPlan:
    """:func:`plan_matmul`, remembered per shape: the model prices every tile and split in Python, 60-300 us a
    call (timed on a CPU); remembering it cut an H100's host time per small call from 63-122 us to 50-62 us
    (bench/NOTES.md, sixteenth session)."""
    return plan_matmul(m, n, k, sm_count, tma_ok=tma_ok)


def matmul_auto(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None, *,
                input_precision: str | None = None) -> torch.Tensor:
    """``a @ b`` by the kernel :func:`plan_matmul` picks for the shape: the persistent TMA kernel
    (:func:`gpuperf.kernels.matmul.matmul`) for products that fill the GPU with large tiles, the split-K
    kernel otherwise. Under the interpreter: the split-K kernel."""
    if INTERPRETED or a.device.type != "cuda":
        return matmul_splitk(a, b, out, input_precision=input_precision)
    m, k = a.shape
    n = b.shape[1]
    tma_ok = (a.is_contiguous() and b.is_contiguous() and input_precision is None
              and _mm.tma_supported(a, b))
    plan = _planned(max(m, 1), max(n, 1), max(k, 1), _mm._device_info(a.device)[1], tma_ok)
    if plan.kernel == "tma":
        return _mm.matmul(a, b, out)
    plan = _loadable(plan, a, b, input_precision)
    if plan.kernel == "streamk":
        return matmul_streamk(a, b, out, plan=plan, input_precision=input_precision)
    return matmul_splitk(a, b, out, plan=plan, input_precision=input_precision)


__all__ = [
    "DECODE_MAX_M",
    "KERNELS",
    "MatmulPlan",
    "SMALL_KERNELS",
    "SPLITK_TILES",
    "matmul_auto",
    "matmul_splitk",
    "matmul_streamk",
    "tma_operands_ok",
    "plan_matmul",
]
