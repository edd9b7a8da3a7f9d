"""Little's law for memory: how many bytes must be in flight to reach a device's bandwidth.

Little's law (Little 1961) says that in any system in a steady state, the mean number of items inside it
equals their arrival rate times the mean time each spends inside: L = lambda W. Read with bytes for items,
a memory system that delivers B bytes/s while each request takes a latency of t seconds holds
``B * t`` bytes in flight on average. Turned around, a kernel that keeps only X bytes of loads outstanding
can get at most ``X / t`` bytes/s, whatever the datasheet says. A GPU reaches its bandwidth only when its
warps together keep ``B * t`` bytes outstanding: that is what its many resident warps, and the loads each
thread issues before it needs their results, are for.

All functions are pure; device figures come from :mod:`gpuperf.hardware`, latencies from the caller (the
chapters use the H200's measured pointer-chase latencies, ``book/data/pointer_chase_h200.json``, through
:func:`gpuperf.results.latency.recorded_latency_levels`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpuperf import hardware

WARP_SIZE = 32


def _positive(name: str, value: object) -> float:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number > 0, got {value!r}") from None
    if not (x > 0 and math.isfinite(x)):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return x


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def required_bytes_in_flight(bytes_per_s: float, latency_s: float) -> float:
    """Little's law: bytes that must be outstanding to sustain ``bytes_per_s`` at ``latency_s``."""
    return _positive("bytes_per_s", bytes_per_s) * _positive("latency_s", latency_s)


def bandwidth_from_bytes_in_flight(bytes_in_flight, latency_s: float, peak_bytes_per_s: float) -> np.ndarray:
    """The model: ``min(peak, bytes_in_flight / latency)`` (bytes/s), element-wise over ``bytes_in_flight``.

    Below the knee the memory system is idle part of the time (too few requests to cover the latency);
    above it, requests queue and more bytes in flight only add latency, not bandwidth.
    """
    x = np.asarray(bytes_in_flight, dtype=float)
    if (x < 0).any() or not np.isfinite(x).all():
        raise ValueError(f"bytes_in_flight must be finite and >= 0, got {bytes_in_flight!r}")
    t = _positive("latency_s", latency_s)
    peak = _positive("peak_bytes_per_s", peak_bytes_per_s)
    return np.minimum(peak, x / t)


def bytes_in_flight_per_sm(warps_per_sm, loads_per_thread, bytes_per_load: int = 16) -> np.ndarray:
    """Bytes one SM keeps outstanding when each of its resident warps' 32 threads has ``loads_per_thread``
    independent loads of ``bytes_per_load`` bytes in flight (element-wise over the first two arguments)."""
    w = np.asarray(warps_per_sm, dtype=float)
    loads = np.asarray(loads_per_thread, dtype=float)
    if (w < 0).any() or (loads < 0).any():
        raise ValueError(f"warps_per_sm and loads_per_thread must be >= 0, got {warps_per_sm!r}, "
                         f"{loads_per_thread!r}")
    return w * WARP_SIZE * loads * _positive_int("bytes_per_load", bytes_per_load)


@dataclass(frozen=True)
class InFlightRequirement:
    """What one accelerator needs in flight to reach its HBM bandwidth at a given latency."""

    accelerator: str
    latency_s: float
    hbm_bytes_per_s: float
    sm_count: int
    bytes_in_flight: float  # whole device
    bytes_in_flight_per_sm: float
    bytes_per_load: int
    loads_per_thread: int
    warps_per_sm_needed: float  # at loads_per_thread loads of bytes_per_load bytes per thread
    max_warps_per_sm: int | None  # None where gpuperf.hardware has no per-SM limits for the part

    @property
    def fraction_of_max_warps(self) -> float | None:
        """Warps needed over the warps an SM can hold (> 1: more loads per thread are needed)."""
        return None if self.max_warps_per_sm is None else self.warps_per_sm_needed / self.max_warps_per_sm


def in_flight_requirement(accelerator: str, latency_s: float, bytes_per_load: int = 16,
                          loads_per_thread: int = 1) -> InFlightRequirement:
    """Little's law for one GPU of :mod:`gpuperf.hardware` (TPUs have no SMs and are refused)."""
    acc = hardware.get_accelerator(accelerator)
    if acc.kind != "gpu" or not acc.sm_count:
        raise ValueError(f"accelerator must be a GPU with an SM count, got {accelerator!r} ({acc.kind})")
    t = _positive("latency_s", latency_s)
    b = _positive_int("bytes_per_load", bytes_per_load)
    loads = _positive_int("loads_per_thread", loads_per_thread)
    total = required_bytes_in_flight(acc.hbm_bytes_per_s, t)
    per_sm = total / acc.sm_count
    try:
        max_warps = hardware.get_sm_limits(acc.name).max_warps_per_sm
    except ValueError:
        max_warps = None
    return InFlightRequirement(
        accelerator=acc.name,
        latency_s=t,
        hbm_bytes_per_s=acc.hbm_bytes_per_s,
        sm_count=int(acc.sm_count),
        bytes_in_flight=total,
        bytes_in_flight_per_sm=per_sm,
        bytes_per_load=b,
        loads_per_thread=loads,
        warps_per_sm_needed=per_sm / (WARP_SIZE * loads * b),
        max_warps_per_sm=max_warps,
    )


def requirements_for_all_gpus(latency_s: float, bytes_per_load: int = 16,
                              loads_per_thread: int = 1) -> list[InFlightRequirement]:
    """:func:`in_flight_requirement` for every GPU in :mod:`gpuperf.hardware`, in table order."""
    out = []
    for name in hardware.accelerator_names():
        if hardware.get_accelerator(name).kind == "gpu":
            out.append(in_flight_requirement(name, latency_s, bytes_per_load, loads_per_thread))
    return out


@dataclass(frozen=True)
class SmallTransfer:
    """A read of ``bytes_moved`` issued all at once: it cannot finish before one latency has passed."""

    bytes_moved: float
    latency_s: float
    peak_bytes_per_s: float
    time_s: float  # latency + bytes / peak
    bytes_per_s: float  # effective
    fraction_of_peak: float


def small_transfer(bytes_moved: float, latency_s: float, peak_bytes_per_s: float) -> SmallTransfer:
    """Time and effective bandwidth of reading ``bytes_moved`` with everything in flight at once:
    ``latency + bytes / peak``. Transfers much smaller than ``peak * latency`` (Little's product) are
    latency-bound: the small kernels of LLM decoding live here (before launch overhead, chapter 07)."""
    q = _positive("bytes_moved", bytes_moved)
    t = _positive("latency_s", latency_s)
    peak = _positive("peak_bytes_per_s", peak_bytes_per_s)
    time_s = t + q / peak
    return SmallTransfer(q, t, peak, time_s, q / time_s, q / time_s / peak)


@dataclass(frozen=True)
class SweepPrediction:
    """The model's bandwidth over a grid of resident warps per SM x loads in flight per thread."""

    warps_per_sm: np.ndarray
    loads_per_thread: np.ndarray
    bytes_in_flight_per_sm: np.ndarray  # shape (len(loads), len(warps))
    bytes_per_s: np.ndarray  # same shape


def predict_sweep(warps_per_sm, loads_per_thread, n_sms: int, latency_s: float, peak_bytes_per_s: float,
                  bytes_per_load: int = 16) -> SweepPrediction:
    """Predicted bandwidth for every (loads per thread, warps per SM) pair of the bytes-in-flight sweep."""
    w = np.asarray(warps_per_sm, dtype=float)
    loads = np.asarray(loads_per_thread, dtype=float)
    n = _positive_int("n_sms", n_sms)
    per_sm = bytes_in_flight_per_sm(w[None, :], loads[:, None], bytes_per_load)
    bw = bandwidth_from_bytes_in_flight(per_sm * n, latency_s, peak_bytes_per_s)
    return SweepPrediction(w, loads, per_sm, bw)
