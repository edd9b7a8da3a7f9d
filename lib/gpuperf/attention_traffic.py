"""Where FlashAttention's traffic lands on a real GPU: the two levels behind the chip, and the kernel's budget.

Theorem 2 of the FlashAttention paper (Dao et al., 2022) counts the transfers between on-chip memory (M
elements) and *the memory behind it*. On an H200 that memory has two levels: a 60 MiB L2 cache and HBM
(DRAM). The query-outer kernel of chapter 14 loads every tile it needs from the level behind the chip: Q
and O once, K and V once per query block (:func:`q_outer_tile_bytes`). Which of those loads reach DRAM
depends on whether the K and V that the programs in flight are reading still sit in L2
(:func:`q_outer_dram_model`). That is a working-set argument, not Theorem 2 again: the L2 is a cache
shared by every head in flight, not a scratchpad the algorithm fills, and while the K and V of those heads
fit in it, every re-read after the first hits.

:func:`forward_kernel_budget` derives the shared memory and registers of one program of the Hopper
forward kernel from its block sizes, pipeline stages and dtypes (chapter 14 compares it with the
compiler's numbers recorded by Nsight Compute).

Pure functions of sizes; bytes are SI (1 MB = 1e6 bytes) unless a name says otherwise. No torch import.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


@dataclass(frozen=True)
class TileBytes:
    """Bytes one forward call loads from and stores to the level behind on-chip memory (all heads)."""

    q_read_bytes: int
    kv_read_bytes: int
    o_write_bytes: int
    query_blocks: int  # T_r, per head

    @property
    def read_bytes(self) -> int:
        return self.q_read_bytes + self.kv_read_bytes


def _kv_rows_visited(n_seq: int, block_m: int, causal: bool) -> int:
    """Key rows summed over a head's query blocks (causal: block i sees keys up to its last row)."""
    t_r = math.ceil(n_seq / block_m)
    if not causal:
        return t_r * n_seq
    return sum(min(n_seq, (i + 1) * block_m) for i in range(t_r))


def q_outer_tile_bytes(batch: int, heads: int, n_seq: int, head_dim: int, block_m: int,
                       causal: bool = False, bytes_per_element: int = 2) -> TileBytes:
    """Theorem 2's level for the query-outer kernel: every program reads its Q block once and every key
    block it needs (K and V, ``head_dim`` wide) once, and writes its O block once. Rows past a causal
    diagonal are not read (whole blocks skipped; the diagonal block is read whole)."""
    b, h, n, d, bm, e = (_positive_int(a, x) for a, x in (
        ("batch", batch), ("heads", heads), ("n_seq", n_seq), ("head_dim", head_dim),
        ("block_m", block_m), ("bytes_per_element", bytes_per_element)))
    per_head_q = n * d * e
    per_head_kv = 2 * _kv_rows_visited(n, bm, bool(causal)) * d * e
    return TileBytes(q_read_bytes=b * h * per_head_q, kv_read_bytes=b * h * per_head_kv,
                     o_write_bytes=b * h * per_head_q, query_blocks=math.ceil(n / bm))


@dataclass(frozen=True)
class DramModel:
    """A two-level model of one forward call's DRAM reads (see :func:`q_outer_dram_model`)."""

    tile_read_bytes: int  # what the programs load from L2 or DRAM (Theorem 2's level)
    one_pass_read_bytes: int  # Q, K and V read once each
    kv_bytes_per_head: int
    heads_in_flight: int  # heads whose K and V the resident programs read at one time
    fits_in_l2: bool  # those heads' K and V fit in the L2
    kv_passes_from_dram: int  # times each head's K and V come from DRAM in the model
    dram_read_bytes: int  # the model's DRAM reads


def q_outer_dram_model(batch: int, heads: int, n_seq: int, head_dim: int, block_m: int,
                       programs_in_flight: int, l2_bytes: float, bytes_per_element: int = 2) -> DramModel:
    """DRAM reads of the query-outer forward pass (no mask) in a two-level model.

    The grid runs the query blocks of one head next to each other, so the ``programs_in_flight`` resident
    programs read the K and V of about ``ceil(programs_in_flight / T_r)`` heads at a time. If those fit
    in ``l2_bytes``, every head's K and V come from DRAM once and L2 serves the other T_r - 1 passes: DRAM
    sees Q, K and V once. If not, the L2 holds only the most recent part of a head's K and V, and every
    wave of ``programs_in_flight`` programs streams them from DRAM again: ``ceil(T_r / programs_in_flight)``
    passes. A model with two cases, not a cache simulation (it ignores the L2's partitions and its
    replacement policy); the profile is the test.
    """
    b, h, n, d, e = (_positive_int(a, x) for a, x in (
        ("batch", batch), ("heads", heads), ("n_seq", n_seq), ("head_dim", head_dim),
        ("bytes_per_element", bytes_per_element)))
    p = _positive_int("programs_in_flight", programs_in_flight)
    if not l2_bytes > 0:
        raise ValueError(f"l2_bytes must be positive, got {l2_bytes!r}")
    tiles = q_outer_tile_bytes(b, h, n, d, block_m, False, e)
    t_r = tiles.query_blocks
    kv_head = 2 * n * d * e
    in_flight = min(b * h, math.ceil(p / t_r))
    fits = in_flight * kv_head <= l2_bytes
    passes = 1 if fits else math.ceil(t_r / p)
    return DramModel(tile_read_bytes=tiles.read_bytes, one_pass_read_bytes=3 * b * h * n * d * e,
                     kv_bytes_per_head=kv_head, heads_in_flight=in_flight, fits_in_l2=fits,
                     kv_passes_from_dram=passes,
                     dram_read_bytes=b * h * (n * d * e + passes * kv_head))


def largest_n_fitting_l2(head_dim: int, l2_bytes: float, bytes_per_element: int = 2,
                         heads_in_flight: int = 1) -> int:
    """The largest power-of-two N whose K and V (``heads_in_flight`` heads) fit in ``l2_bytes``."""
    d, e, hf = (_positive_int(a, x) for a, x in (("head_dim", head_dim),
                                                  ("bytes_per_element", bytes_per_element),
                                                  ("heads_in_flight", heads_in_flight)))
    n = 1
    while hf * 2 * (2 * n) * d * e <= l2_bytes:
        n *= 2
    return n


@dataclass(frozen=True)
class KernelBudget:
    """Shared memory and registers of one program of the Hopper forward kernel, derived from its launch."""

    q_tile_bytes: int  # the Q block, loaded once, kept in shared memory (the Tensor Cores read it there)
    kv_stage_bytes: int  # one K block and one V block
    stages: int
    shared_bytes: int  # Q + stages x (K + V)
    threads: int
    score_registers: int  # fp32 S tile per thread
    probability_registers: int  # P in 16 bits, two values per 32-bit register
    accumulator_registers: int  # fp32 output accumulator per thread
    row_registers: int  # m, l and the rescale factor per row the thread holds

    @property
    def tile_registers(self) -> int:
        return (self.score_registers + self.probability_registers + self.accumulator_registers
                + self.row_registers)


def forward_kernel_budget(block_m: int, block_n: int, head_dim: int, num_warps: int, num_stages: int,
                          bytes_per_element: int = 2) -> KernelBudget:
    """The tile budget of one program: shared memory for Q and ``num_stages`` buffers of (K, V); registers
    for the fp32 score tile, its 16-bit copy P, the fp32 accumulator, spread over 32 x ``num_warps``
    threads. Rows: a warpgroup's wgmma gives each thread 2 rows of every 64 (so ``2 * block_m / 64 /
    (num_warps / 4)``) and each row needs m, l and alpha. Addresses, loop counters and temporaries come on
    top; the compiler's count is the test."""
    bm, bn, d, w, s, e = (_positive_int(a, x) for a, x in (
        ("block_m", block_m), ("block_n", block_n), ("head_dim", head_dim), ("num_warps", num_warps),
        ("num_stages", num_stages), ("bytes_per_element", bytes_per_element)))
    threads = 32 * w
    q_tile = bm * d * e
    kv_stage = 2 * bn * d * e
    rows_per_thread = max(1, 2 * bm // 64 // max(1, w // 4))
    return KernelBudget(
        q_tile_bytes=q_tile, kv_stage_bytes=kv_stage, stages=s, shared_bytes=q_tile + s * kv_stage,
        threads=threads, score_registers=bm * bn // threads,
        probability_registers=bm * bn * e // 4 // threads,
        accumulator_registers=bm * d // threads, row_registers=3 * rows_per_thread)


__all__ = ["DramModel", "KernelBudget", "TileBytes", "forward_kernel_budget", "largest_n_fitting_l2",
           "q_outer_dram_model", "q_outer_tile_bytes"]
