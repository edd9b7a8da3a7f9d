"""The third regime: time a kernel spends waiting for the host (Python, the framework, the launch).

A model in three numbers for one kernel (He, "Making Deep Learning Go Brrrr From First Principles", 2022):
its compute time F / P, its memory time Q / B, and a fixed overhead t_o paid by the host to issue it::

    time = max(F / P, Q / B) + t_o          (issued one at a time, waiting for each)

When kernels are issued back to back the host runs ahead and the GPU overlaps its work with the next issue,
so a long run of them takes ``max(gpu_time, host_time)`` per kernel (:func:`steady_state_time_s`): the GPU is
busy only ``gpu_time / max(gpu_time, host_time)`` of the time (:func:`gpu_busy_fraction`). A CUDA Graph
records the launches once and replays them with one call: the host pays one call per graph, and what remains
per kernel is a gap on the device between one kernel and the next (:func:`graph_busy_fraction`; a tiny
kernel replayed costs about a microsecond on an H200 including its run time, ``book/data/overhead_h200.json``).

The batch-doubling test: double the work; if the time barely changes, the kernel is overhead-bound
(:func:`doubling_ratio`, :func:`regime_from_doubling`).

A profiler timeline is a list of :class:`TimelineEvent`: measured live on the reader's CPU by
:func:`gpuperf.benchmark.host_overhead.host_timeline`, or read from a recorded GPU trace
(``bench/overhead.py --parts sync_trace``) with :func:`timeline_from_rows`, cut with :func:`timeline_window`
and summarised with :func:`summarize_sync_trace`. The live measurements of the host (a Python call's time,
the ATen operators a function dispatches) are in :mod:`gpuperf.benchmark.host_overhead`.

This module imports neither torch nor triton at import time.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Callable, Sequence

REGIMES = ("overhead", "memory", "compute")


def _check_nonneg(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def _check_pos(name: str, value: object) -> float:
    value = _check_nonneg(name, value)
    if value == 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return value


@dataclass(frozen=True)
class KernelTime:
    """The three terms of one kernel's time (seconds) and which one decides it."""

    compute_s: float
    memory_s: float
    overhead_s: float

    @property
    def time_s(self) -> float:
        """Issued and waited for one at a time: max(compute, memory) + overhead."""
        return max(self.compute_s, self.memory_s) + self.overhead_s

    @property
    def regime(self) -> str:
        """The largest of the three terms: "overhead", "memory" or "compute"."""
        terms = {"overhead": self.overhead_s, "memory": self.memory_s, "compute": self.compute_s}
        return max(REGIMES, key=lambda r: terms[r])


def kernel_time(flop: float, bytes_moved: float, peak_flop_per_s: float, bytes_per_s: float,
                overhead_s: float) -> KernelTime:
    """The model's terms for one kernel: F / P, Q / B and the fixed host overhead t_o."""
    flop = _check_nonneg("flop", flop)
    bytes_moved = _check_nonneg("bytes_moved", bytes_moved)
    return KernelTime(flop / _check_pos("peak_flop_per_s", peak_flop_per_s),
                      bytes_moved / _check_pos("bytes_per_s", bytes_per_s), _check_nonneg("overhead_s", overhead_s))


def steady_state_time_s(gpu_time_s: float, host_time_s: float) -> float:
    """Time per kernel in a long run of kernels issued back to back: max(GPU time, host time per kernel)."""
    return max(_check_nonneg("gpu_time_s", gpu_time_s), _check_nonneg("host_time_s", host_time_s))


def gpu_busy_fraction(gpu_time_s: float, host_time_s: float) -> float:
    """Fraction of the time the GPU works in that run: gpu / max(gpu, host) (1 when the GPU is the bottleneck)."""
    g = _check_pos("gpu_time_s", gpu_time_s)
    return g / steady_state_time_s(g, host_time_s)


def graph_busy_fraction(gpu_time_s: float, device_gap_s: float) -> float:
    """Fraction of the time the GPU works when kernels are replayed from a CUDA Graph: the host issues one
    replay for the whole graph, so no host time is paid per kernel, but the device still spends a gap
    between consecutive kernels (finishing one, starting the next) that does not overlap them:
    gpu / (gpu + gap). A measured replay time per tiny kernel (its run time plus that gap) bounds the gap
    from above, so this is a lower bound when given that measurement."""
    g = _check_pos("gpu_time_s", gpu_time_s)
    return g / (g + _check_nonneg("device_gap_s", device_gap_s))


def min_gpu_time_to_hide_host_s(host_time_s: float, busy_fraction: float = 1.0) -> float:
    """Shortest GPU time per kernel for which the GPU stays busy ``busy_fraction`` of the time:
    host_time x busy_fraction (a kernel shorter than its own launch leaves the GPU idle)."""
    host = _check_nonneg("host_time_s", host_time_s)
    if isinstance(busy_fraction, bool) or not isinstance(busy_fraction, numbers.Real) or not 0 < busy_fraction <= 1:
        raise ValueError(f"busy_fraction must be in (0, 1], got {busy_fraction!r}")
    return host * busy_fraction


def sweep_times_s(sizes: Sequence[float], flop_per_size: float, bytes_per_size: float, peak_flop_per_s: float,
                  bytes_per_s: float, host_time_s: float, flop_power: float = 1.0,
                  bytes_power: float = 1.0, synchronous: bool = False) -> list[float]:
    """Time per call over a size sweep with F(s) = flop_per_size s^flop_power and
    Q(s) = bytes_per_size s^bytes_power (an add: F = n, Q = 12 n in fp32; an n x n matmul: F = 2 n^3,
    Q = 3 b n^2).

    ``synchronous=False`` (a GPU: launches are asynchronous, the host prepares call i + 1 while the device
    runs call i): the steady state max(F / P, Q / B, host time). ``synchronous=True`` (a CPU op, which
    dispatches and computes in the same thread, so nothing overlaps): host time + max(F / P, Q / B)."""
    out = []
    for s in sizes:
        s = _check_pos("sizes", s)
        gpu = max(flop_per_size * s**flop_power / _check_pos("peak_flop_per_s", peak_flop_per_s),
                  bytes_per_size * s**bytes_power / _check_pos("bytes_per_s", bytes_per_s))
        host = _check_nonneg("host_time_s", host_time_s)
        out.append(host + gpu if synchronous else steady_state_time_s(gpu, host))
    return out


def doubling_ratio(time_at: Callable[[int], float], size: int) -> float:
    """t(2 size) / t(size) for a timing function ``time_at(size) -> seconds``: near 1 when overhead-bound,
    near 2 when the time is proportional to the work (memory- or compute-bound)."""
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
        raise ValueError(f"size must be an integer >= 1, got {size!r}")
    return _check_pos("time_at(2 size)", time_at(2 * size)) / _check_pos("time_at(size)", time_at(size))


def regime_from_doubling(ratio: float, threshold: float = 1.5) -> str:
    """"overhead" when doubling the work multiplied the time by less than ``threshold``, else "work-bound"
    (memory or compute: the roofline of chapter 06 says which)."""
    ratio = _check_pos("ratio", ratio)
    return "overhead" if ratio < _check_pos("threshold", threshold) else "work-bound"


@dataclass(frozen=True)
class TimelineEvent:
    """One range of a profiler timeline: its name, start and duration (seconds, from the trace's first
    event) and its nesting depth (0: called from Python; 1: an operator that one called)."""

    name: str
    start_s: float
    duration_s: float
    depth: int


def timeline_from_rows(rows, variant: str) -> list[TimelineEvent]:
    """The ranges of one variant of a recorded ``sync_trace`` run (``bench/overhead.py --parts sync_trace``)
    as :class:`TimelineEvent`s: depth 0 for the host lane, 1 for the device lane, ordered by start."""
    picked = [r for r in rows if r.get("experiment") == "sync_trace" and r.get("variant") == variant]
    if not picked:
        raise ValueError(f"variant {variant!r}: no sync_trace rows with that variant")
    for r in picked:
        if r.get("lane") not in ("host", "device"):
            raise ValueError(f"rows: lane must be 'host' or 'device', got {r.get('lane')!r}")
    return sorted((TimelineEvent(str(r["name"]), float(r["start_s"]), float(r["duration_s"]),
                                 0 if r["lane"] == "host" else 1) for r in picked),
                  key=lambda ev: ev.start_s)


def timeline_window(events: Sequence[TimelineEvent], start_s: float, length_s: float) -> list[TimelineEvent]:
    """The ranges of ``events`` that overlap ``[start_s, start_s + length_s)``, clipped to it and shifted so
    that the window starts at 0 (for drawing a stretch of a long trace)."""
    start_s = _check_nonneg("start_s", start_s)
    length_s = _check_pos("length_s", length_s)
    end_s = start_s + length_s
    out = []
    for e in events:
        lo, hi = max(e.start_s, start_s), min(e.start_s + e.duration_s, end_s)
        if hi > lo or (e.duration_s == 0 and start_s <= e.start_s < end_s):
            out.append(TimelineEvent(e.name, lo - start_s, max(hi - lo, 0.0), e.depth))
    return out


@dataclass(frozen=True)
class SyncTraceSummary:
    """What a recorded trace of repeated steps shows (:func:`summarize_sync_trace`). Times in seconds;
    medians over the steps counted, the first ``skip`` steps left out (the profiler's start-up)."""

    steps: int
    first_step_s: float
    step_s: float
    kernel_s: float
    host_op_s: dict
    device_busy_fraction: float
    copies: int
    copies_inside_host: int


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])


def summarize_sync_trace(events: Sequence[TimelineEvent], step_op: str = "aten::add",
                         skip: int = 1) -> SyncTraceSummary:
    """Summarise a recorded trace (:func:`timeline_from_rows`) of a loop whose every step starts with the
    host range ``step_op``: the median time from one step's start to the next (``step_s``), the median
    duration of a device kernel (device ranges other than ``Memcpy`` copies), the median duration of each
    host range's name, the fraction of the counted steps' span the device lane was busy, and how many of the
    device-to-host copies lie wholly inside a host range (the host waiting for that copy to finish)."""
    if isinstance(skip, bool) or not isinstance(skip, numbers.Integral) or skip < 0:
        raise ValueError(f"skip must be an integer >= 0, got {skip!r}")
    starts = sorted(e.start_s for e in events if e.depth == 0 and e.name == step_op)[skip:]
    if len(starts) < 2:
        raise ValueError(f"events: need at least {skip + 2} {step_op!r} host ranges, got {len(starts) + skip}")
    lo, hi = starts[0], starts[-1]
    counted = [e for e in events if lo <= e.start_s < hi]
    host = [e for e in counted if e.depth == 0]
    device = [e for e in counted if e.depth != 0]
    kernels = [e.duration_s for e in device if not e.name.startswith("Memcpy")]
    if not kernels:
        raise ValueError("events: no device kernel between the counted steps")
    copies = [e for e in device if e.name.startswith("Memcpy")]
    inside = sum(any(h.start_s <= c.start_s and c.start_s + c.duration_s <= h.start_s + h.duration_s
                     for h in host) for c in copies)
    names = sorted({e.name for e in host})
    return SyncTraceSummary(
        steps=len(starts) - 1,
        first_step_s=lo,
        step_s=_median([b - a for a, b in zip(starts, starts[1:])]),
        kernel_s=_median(kernels),
        host_op_s={n: _median([e.duration_s for e in host if e.name == n]) for n in names},
        device_busy_fraction=sum(min(e.duration_s, hi - e.start_s) for e in device) / (hi - lo),
        copies=len(copies),
        copies_inside_host=inside,
    )


__all__ = [
    "SyncTraceSummary",
    "TimelineEvent",
    "summarize_sync_trace",
    "timeline_from_rows",
    "timeline_window",
    "KernelTime",
    "REGIMES",
    "doubling_ratio",
    "gpu_busy_fraction",
    "graph_busy_fraction",
    "kernel_time",
    "min_gpu_time_to_hide_host_s",
    "regime_from_doubling",
    "steady_state_time_s",
    "sweep_times_s",
]
