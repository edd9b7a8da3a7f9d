"""The bandwidth cost of an all-reduce (chapter 05): GPUs over NVLink, TPU chips over their torus.

A bandwidth-optimal all-reduce of ``n_bytes`` over ``p`` devices is a reduce-scatter followed by an
all-gather: each device sends (and receives) ``2 (p - 1) / p * n_bytes`` (Patarasuk and Yuan 2009). If a
device can send ``b`` bytes/s in one direction over all its links at once, the all-reduce takes at least

    t >= 2 (p - 1) / p * n_bytes / b,

independent of how many devices there are once p is large. On a ring that is one link each way; on a 2-D
or 3-D torus the data is split over the axes so that all of a chip's links carry a share at once (the way
Google's pod all-reduce figures count: the v5e pod's 51.2 TB/s is 256 chips x 200 GB/s, half its
bidirectional 400 GB/s per chip). The bound leaves out per-hop latency, which grows with the ring's length.
"""

from __future__ import annotations

import math


def _positive(name: str, value) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number > 0, got {value!r}") from None
    if not (x > 0 and math.isfinite(x)):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return x


def allreduce_bytes_sent_per_device(n_bytes: float, n_devices: int) -> float:
    """Bytes each device sends in a bandwidth-optimal all-reduce: 2 (p - 1) / p * n_bytes."""
    n = _positive("n_bytes", n_bytes)
    if isinstance(n_devices, bool) or not isinstance(n_devices, int) or n_devices < 1:
        raise ValueError(f"n_devices must be an integer >= 1, got {n_devices!r}")
    return 2 * (n_devices - 1) / n_devices * n


def allreduce_time_s(n_bytes: float, n_devices: int, bytes_per_s_one_direction: float) -> float:
    """Lower bound on an all-reduce's time (seconds): bytes sent per device over its one-way bandwidth."""
    b = _positive("bytes_per_s_one_direction", bytes_per_s_one_direction)
    return allreduce_bytes_sent_per_device(n_bytes, n_devices) / b
