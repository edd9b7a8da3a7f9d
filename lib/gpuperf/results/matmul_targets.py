"""Chapter 08's reading of the matmul targets (issue 15): the interleaved target run, the launch sweep and the
before / after profiles, as rows for tables. Pure functions of recorded rows; no torch, no GPU.

* :func:`target_rows` reads a ``matmul`` family run whose target squares were timed in interleaved rounds
  (``Case.rounds``): per product, both kernels' median rates, the ratio of the medians, the range of the
  per-round ratios (:func:`gpuperf.benchmark.round_ratios`), the median SM clock of each, and the target.
* :func:`sweep_table` reads ``bench/matmul_sweep.py``'s recorded rows: one row per launch, its tile and
  resources and its ratio to cuBLAS at each target.
* :func:`profile_table` reads ``bench/matmul_profile.py``'s recorded rows (ncu): one row per stage and kernel.
"""

from __future__ import annotations

import statistics
from typing import Any, Mapping, Sequence

from gpuperf.benchmark import round_ratios, with_ratios
from gpuperf.results.scoreboard import get_target

#: Issue 15's targets: Triton / cuBLAS at least this, by square size (read from the scoreboard's table,
#: :data:`gpuperf.results.scoreboard.TARGETS`, which holds every target once).
TARGETS = {size: get_target(f"matmul-{size}").min_ratio for size in (4096, 8192)}

#: What each launch of ``bench/matmul_sweep.py`` changes from the default (its name in the sweep -> words).
SWEEP_LAUNCHES = {
    "base": "the default tile, warp_specialize flag on (auto's launch when swept)",
    "nows": "the default tile, flag off (auto's launch on Hopper since)",
    "s4": "4 stages",
    "g16": "GROUP_M 16",
    "g16-s4": "GROUP_M 16, 4 stages",
    "m256": "256 x 128 tile",
    "m256-s4": "256 x 128 tile, 4 stages",
    "bk128": "BLOCK_K 128, 2 stages",
    "nosplit": "epilogue not split",
    "ws-w4": "warp_specialize, 4 warps",
    "ws-w4-g16-s4": "warp_specialize, 4 warps, GROUP_M 16, 4 stages",
}


def _median(values: Sequence[float | None]) -> float | None:
    values = [v for v in values if v is not None]
    return float(statistics.median(values)) if values else None


def target_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per (dtype, size) of :data:`TARGETS` found in ``rows`` (dtype order as recorded): ``case``,
    ``cublas`` and ``triton`` (FLOP/s of the medians), ``ratio``, ``ratio_lo`` / ``ratio_hi`` (the per-round
    ratios' range), ``rounds``, ``cublas_mhz`` / ``triton_mhz`` (median SM clock over the rounds),
    ``target`` and ``met`` (the ratio of the medians at least the target). Raises ``ValueError`` when a
    Triton row has no interleaved rounds or no cuBLAS reference."""
    rows = with_ratios(rows)
    per_round = round_ratios(rows)
    by_label = {r["label"]: r for r in rows}
    out = []
    for r in rows:
        if r.get("kernel") == "cublas" or r.get("group") != "square" or r.get("m") not in TARGETS:
            continue
        ref = by_label.get(r.get("reference"))
        if ref is None or r["label"] not in per_round:
            raise ValueError(f"rows: {r['label']!r} needs a cuBLAS reference and interleaved rounds")
        ratios = per_round[r["label"]]
        target = TARGETS[r["m"]]
        out.append({
            "case": f"{r['dtype']} {r['m']}^3", "dtype": r["dtype"], "size": r["m"],
            "cublas": ref["flop_per_s"], "triton": r["flop_per_s"], "ratio": r["ratio_to_reference"],
            "ratio_lo": min(ratios), "ratio_hi": max(ratios), "rounds": len(ratios),
            "cublas_mhz": _median(ref["sm_clock_mhz_rounds"]), "triton_mhz": _median(r["sm_clock_mhz_rounds"]),
            "target": target, "met": r["ratio_to_reference"] >= target,
        })
    return out


def sweep_table(rows: Sequence[Mapping[str, Any]], shapes: Sequence[tuple[str, int]]) -> list[dict[str, Any]]:
    """One row per launch of a sweep (cuBLAS left out), in recorded order: ``launch`` (name), ``what`` (its
    change from the default, :data:`SWEEP_LAUNCHES`), ``tile``
    ("128x256x64"), ``stages``, ``group_m``, ``warps``, ``split`` ("yes"/"no"), ``ws`` ("yes"/"no"),
    ``registers``, ``spilled``, ``shared_kib``, and ``"<dtype> <n>"`` -> ratio to cuBLAS for each of ``shapes``
    (``(dtype, n)`` pairs; None where the sweep lacks one)."""
    launches: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r["kernel"] == "cublas":
            continue
        row = launches.setdefault(r["kernel"], {
            "launch": r["kernel"], "what": SWEEP_LAUNCHES.get(r["kernel"], r["kernel"]),
            "tile": f"{r['block_m']}x{r['block_n']}x{r['block_k']}",
            "stages": r["stages"], "group_m": r["group_m"], "warps": r["warps"],
            "split": "yes" if r["split_epilogue"] else "no", "ws": "yes" if r["warp_specialize"] else "no",
            "registers": r["registers_per_thread"], "spilled": r["spilled_registers"],
            "shared_kib": None if r["shared_bytes"] is None else r["shared_bytes"] / 1024,
            **{f"{dt} {n}": None for dt, n in shapes}})
        key = f"{r['dtype']} {r['n']}"
        if key in row:
            row[key] = r["ratio_to_cublas"]
    return list(launches.values())


def profile_table(rows: Sequence[Mapping[str, Any]], stages: Sequence[str] = ("before", "after"),
                  dtype: str = "bf16", n: int = 4096) -> list[dict[str, Any]]:
    """One row per (stage, kernel) of a recorded ncu profile (``bench/matmul_profile.py``) for one product:
    ``who`` ("before: triton"), ``kernel_name``, ``duration_us``, ``sm_mhz``, ``tensor_pct``, ``threads``
    (per block), ``registers``, ``shared_kib``, ``dram_read_mb``. Stages in the order given; a stage the
    run lacks is left out."""
    out = []
    for stage in stages:
        for r in rows:
            if r["stage"] != stage or r["dtype"] != dtype or r["n"] != n:
                continue
            threads = r["block_size"].strip("()").split(",")
            count = 1
            for t in threads:
                count *= int(t)
            out.append({
                "who": f"{stage}: {r['kernel']}", "kernel_name": r["kernel_name"],
                "duration_us": None if r["duration_ns"] is None else r["duration_ns"] / 1e3,
                "sm_mhz": None if r["sm_frequency_hz"] is None else r["sm_frequency_hz"] / 1e6,
                "tensor_pct": r["tensor_pipe_active_pct"], "threads": count,
                "registers": r["registers_per_thread"],
                "shared_kib": None if r["dynamic_shared_bytes"] is None else r["dynamic_shared_bytes"] / 1024,
                "dram_read_mb": None if r["dram_read_bytes"] is None else r["dram_read_bytes"] / 1e6,
            })
    return out


__all__ = ["SWEEP_LAUNCHES", "TARGETS", "profile_table", "sweep_table", "target_rows"]
