"""Latencies read off a recorded pointer chase: one dependent load's time per level of the memory hierarchy.

The chase (``bench/part1_gpu.py``, recorded as ``book/data/pointer_chase_h200.json``) times one dependent
load at working sets from 4 KiB to 1 GiB and in shared memory, in SM cycles. :func:`latency_levels` reads
its rows as plateaus (L1, L2, HBM, shared memory) and :func:`recorded_latency_levels` gives the course's one
set of measured latencies, which chapters 02, 04 and 05 (and :mod:`gpuperf.littles_law`'s users) all read.
Pure; no torch, no GPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpuperf import hardware
from gpuperf.littles_law import _positive  # the model's check of a positive, finite number


@dataclass(frozen=True)
class LatencyLevels:
    """Latencies read off a pointer-chase run (SM cycles per dependent load, and seconds at ``clock_hz``)."""

    clock_hz: float
    shared_cycles: float | None
    l1_cycles: float
    l2_cycles: float
    hbm_cycles: float
    #: first touches of L2-resident lines (the chase's first pass), where the run recorded it
    l2_first_touch_cycles: float | None = None

    def seconds(self, level: str) -> float:
        cycles = getattr(self, f"{level}_cycles")
        if cycles is None:
            raise ValueError(f"level {level!r} was not measured")
        return cycles / self.clock_hz


def latency_levels(rows, l2_bytes: float, clock_hz: float, l1_bytes: float = 128 * 1024) -> LatencyLevels:
    """Summarise pointer-chase rows (``level``, ``working_set_bytes``, ``cycles_per_load``): the median over
    working sets that fit in ``l1_bytes`` (L1), those from 4x ``l1_bytes`` up to ``l2_bytes / 4`` (L2: well
    inside it, away from where its partitions and capacity show) and those of at least 4x ``l2_bytes``
    (HBM), and the shared-memory rows."""
    _positive("l2_bytes", l2_bytes)
    clock = _positive("clock_hz", clock_hz)
    glob = [r for r in rows if r["level"] == "global"]
    shared = [r["cycles_per_load"] for r in rows if r["level"] == "shared"]

    def median(lo: float, hi: float) -> float:
        vals = [r["cycles_per_load"] for r in glob if lo <= r["working_set_bytes"] <= hi]
        if not vals:
            raise ValueError(f"rows have no global-memory working set in [{lo:.3g}, {hi:.3g}] bytes")
        return float(np.median(vals))

    first = [r["first_pass_cycles_per_load"] for r in glob
             if "first_pass_cycles_per_load" in r and 4 * l1_bytes <= r["working_set_bytes"] <= l2_bytes / 4]
    return LatencyLevels(
        clock_hz=clock,
        shared_cycles=float(np.median(shared)) if shared else None,
        l1_cycles=median(0, l1_bytes),
        l2_cycles=median(4 * l1_bytes, l2_bytes / 4),
        hbm_cycles=median(4 * l2_bytes, math.inf),
        l2_first_touch_cycles=float(np.median(first)) if first else None,
    )


def recorded_latency_levels(run_name: str = "pointer_chase_h200") -> tuple[LatencyLevels, dict]:
    """The course's one set of measured latencies: the recorded pointer chase, summarised by
    :func:`latency_levels` at the SM clock the run measured right after the chase. Returns the levels and
    the run (for its provenance and rows). Chapters 02, 04 and 05 all read latencies through this."""
    from gpuperf import records as recorded

    run = recorded.load_run(run_name)
    l2_bytes = hardware.get_accelerator(run["provenance"]["device"]).l2_bytes
    clock = float(run["provenance"]["sm_clock_hz_after_chase"])
    return latency_levels(run["results"], l2_bytes, clock), run


__all__ = ["LatencyLevels", "latency_levels", "recorded_latency_levels"]
