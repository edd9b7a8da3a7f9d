"""What collectives cost (chapter 05): GPUs over NVLink, TPU chips over their torus.

A bandwidth-optimal all-reduce of ``n_bytes`` over ``p`` devices is a reduce-scatter followed by an
all-gather: each device sends (and receives) ``2 (p - 1) / p * n_bytes`` (Patarasuk and Yuan 2009). If a
device can send ``b`` bytes/s in one direction over all its links at once, the all-reduce takes at least

    t >= 2 (p - 1) / p * n_bytes / b,

independent of how many devices there are once p is large. On a ring that is one link each way; on a 2-D
or 3-D torus the data is split over the axes so that all of a chip's links carry a share at once (the way
Google's pod all-reduce figures count: the v5e pod's 51.2 TB/s is 256 chips x 200 GB/s, half its
bidirectional 400 GB/s per chip). The bound leaves out per-hop latency, which grows with the ring's length.

The latency-plus-bandwidth (alpha-beta) model adds it back: a collective that takes ``s`` sequential steps
and moves ``q`` bytes through each device's busiest direction takes

    t = s * alpha + q / b,

with ``alpha`` the fixed cost of one step (launch, synchronisation, one hop) and ``b`` the one-way bandwidth
of a device. Three algorithms, for ``p`` devices and a buffer of ``S`` bytes (``S`` as the NCCL tests count
it: the whole array, for an all-gather the gathered output, for a reduce-scatter the input):

* **ring**: all-reduce in ``2 (p - 1)`` steps moving ``2 (p - 1) / p * S``; all-gather and reduce-scatter in
  ``p - 1`` steps moving ``(p - 1) / p * S`` (Patarasuk and Yuan 2009; the NCCL tests' bus bandwidth);
* **tree** (NCCL's double binary tree, pipelined): all-reduce in ``2 ceil(log2 p)`` steps, every device
  sending and receiving ``2 S`` (half the data on each of two trees, in which a device is once an inner node
  and once a leaf): fewer steps than a ring, a little more data;
* **in-switch** (NVLink SHARP, NCCL's NVLS, on NVSwitch systems since the H100): the switch adds. Each GPU
  reads its ``1/p`` share reduced from the switch (sending its copy of every share, ``S``, and receiving
  ``S / p``), then stores the share to a multicast address (sending ``S / p``, receiving all ``S``): about
  ``(1 + 1/p) * S`` each way in 2 steps, against the ring's ``2 (p - 1) / p * S``. For all-gather and
  reduce-scatter it gains no time: ``S`` one way and ``S / p`` the other (NCCL's maintainers, NVIDIA/nccl
  issues 807, 895, 1031 and 1506).

:func:`fit_alpha_beta` fits ``alpha`` and ``b`` to measured (size, time) pairs; :func:`bus_bytes_per_s` is
the NCCL tests' bus bandwidth (``doc/PERFORMANCE.md`` of NVIDIA/nccl-tests), the measured rate scaled so it
compares with a link's bandwidth whatever ``p``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


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


#: The collectives the model prices, named as torch.distributed names them (less the ``_tensor``).
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter")
#: How the data moves: endpoints along a ring, endpoints along two binary trees, or the switch adding.
ALGORITHMS = ("ring", "tree", "in_switch")


def _check_collective(collective: str, algorithm: str, n_devices) -> int:
    if collective not in COLLECTIVES:
        raise ValueError(f"collective must be one of {COLLECTIVES}, got {collective!r}")
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
    if algorithm == "tree" and collective != "all_reduce":
        raise ValueError(f"algorithm 'tree' is modelled for all_reduce only, got collective {collective!r}")
    if isinstance(n_devices, bool) or not isinstance(n_devices, int) or n_devices < 1:
        raise ValueError(f"n_devices must be an integer >= 1, got {n_devices!r}")
    return n_devices


def collective_steps(collective: str, n_devices: int, algorithm: str = "ring") -> int:
    """Sequential steps of a collective over ``n_devices``: each pays the per-step cost alpha once."""
    p = _check_collective(collective, algorithm, n_devices)
    if p == 1:
        return 0
    if algorithm == "ring":
        return 2 * (p - 1) if collective == "all_reduce" else p - 1
    if algorithm == "tree":
        return 2 * math.ceil(math.log2(p))
    return 2 if collective == "all_reduce" else 1


def collective_bytes_per_device(collective: str, n_bytes: float, n_devices: int, algorithm: str = "ring") -> float:
    """Bytes through a device's busier direction (send or receive) in one collective over ``n_bytes``."""
    p = _check_collective(collective, algorithm, n_devices)
    n = _positive("n_bytes", n_bytes)
    if p == 1:
        return 0.0
    if algorithm == "ring":
        return (2 if collective == "all_reduce" else 1) * (p - 1) / p * n
    if algorithm == "tree":
        return 2 * n
    return (1 + 1 / p) * n if collective == "all_reduce" else n


def collective_time_s(collective: str, n_bytes: float, n_devices: int, bytes_per_s_one_direction: float,
                      alpha_s: float = 0.0, algorithm: str = "ring") -> float:
    """The alpha-beta model's time (seconds): steps * alpha_s + busier-direction bytes / one-way bandwidth."""
    b = _positive("bytes_per_s_one_direction", bytes_per_s_one_direction)
    if not (isinstance(alpha_s, (int, float)) and math.isfinite(alpha_s) and alpha_s >= 0):
        raise ValueError(f"alpha_s must be a finite number >= 0, got {alpha_s!r}")
    steps = collective_steps(collective, n_devices, algorithm)
    return steps * alpha_s + collective_bytes_per_device(collective, n_bytes, n_devices, algorithm) / b


def latency_bound_below_bytes(collective: str, n_devices: int, bytes_per_s_one_direction: float,
                              alpha_s_per_call: float, algorithm: str = "ring") -> float:
    """The buffer size (bytes) whose bandwidth term equals a call's fixed cost ``alpha_s_per_call`` (the
    measured time of a tiny call, all its steps together): below it, the fixed cost dominates."""
    b = _positive("bytes_per_s_one_direction", bytes_per_s_one_direction)
    a = _positive("alpha_s_per_call", alpha_s_per_call)
    per_byte = collective_bytes_per_device(collective, 1.0, n_devices, algorithm)
    if per_byte == 0:
        return math.inf
    return a * b / per_byte


def bus_bandwidth_factor(collective: str, n_devices: int) -> float:
    """The NCCL tests' factor from algorithm bandwidth (size / time) to bus bandwidth: 2 (p - 1) / p for an
    all-reduce, (p - 1) / p for an all-gather or a reduce-scatter, whatever the algorithm used."""
    p = _check_collective(collective, "ring", n_devices)
    return (2 if collective == "all_reduce" else 1) * (p - 1) / p


def bus_bytes_per_s(collective: str, n_bytes: float, n_devices: int, time_s: float) -> float:
    """The NCCL tests' bus bandwidth of one measured collective (bytes/s): n_bytes / time_s times the factor."""
    return _positive("n_bytes", n_bytes) / _positive("time_s", time_s) * bus_bandwidth_factor(collective, n_devices)


@dataclass(frozen=True)
class AlphaBetaFit:
    """``alpha_s`` per call and one-way ``bytes_per_s`` of ``t = alpha_s + bytes_factor * S / bytes_per_s``
    fitted to measurements; ``max_relative_error`` of the fit over the points it was fitted to."""

    alpha_s: float
    bytes_per_s: float
    max_relative_error: float
    n_points: int


def fit_alpha_beta(n_bytes, times_s, bytes_factor: float = 1.0) -> AlphaBetaFit:
    """Least-squares fit of ``t = alpha + bytes_factor * S / b`` to (size ``S``, time) pairs, each point
    weighted by ``1 / t`` so that a sweep over many decades of size is fitted in relative error. Use
    ``bytes_factor = collective_bytes_per_device(collective, 1.0, p, algorithm)`` to get the link's ``b``.
    Raises ValueError for fewer than two points, a non-positive value or mismatched lengths."""
    sizes = [_positive("n_bytes", s) for s in n_bytes]
    times = [_positive("times_s", t) for t in times_s]
    factor = _positive("bytes_factor", bytes_factor)
    if len(sizes) != len(times) or len(sizes) < 2:
        raise ValueError(f"need two or more (size, time) pairs of equal count, got {len(sizes)} and {len(times)}")
    # weighted least squares of t = a + c * x with x = factor * S and weights 1 / t^2 on the squared error
    w = [1 / t**2 for t in times]
    x = [factor * s for s in sizes]
    sw, sx, sy = sum(w), sum(wi * xi for wi, xi in zip(w, x)), sum(wi * ti for wi, ti in zip(w, times))
    sxx = sum(wi * xi * xi for wi, xi in zip(w, x))
    sxy = sum(wi * xi * ti for wi, xi, ti in zip(w, x, times))
    det = sw * sxx - sx * sx
    if det <= 0:
        raise ValueError("n_bytes: the sizes must not all be equal")
    c = (sw * sxy - sx * sy) / det
    a = (sy - c * sx) / sw
    if c <= 0:
        raise ValueError("the times do not grow with size: no bandwidth can be fitted")
    a = max(a, 0.0)
    worst = max(abs(a + c * xi - ti) / ti for xi, ti in zip(x, times))
    return AlphaBetaFit(alpha_s=a, bytes_per_s=1 / c, max_relative_error=worst, n_points=len(sizes))
