"""Measuring the host's overhead on the reader's own machine (chapters 07 and 09; torch imported inside).

:func:`python_call_time_s` times back-to-back Python calls; :func:`count_aten_ops` counts the ATen operators
a function dispatches (each a kernel launch on a GPU); :func:`host_timeline` profiles one call on the CPU
into :class:`gpuperf.overhead.TimelineEvent` ranges, the model's timeline type. Live timings are shown,
never asserted (CONTRIBUTING.md, "Live measurements").
"""

from __future__ import annotations

import numbers
import time
from collections import Counter
from typing import Callable

from gpuperf.overhead import TimelineEvent


def python_call_time_s(fn: Callable[[], object], number: int = 10_000, repeats: int = 5,
                       statistic: str = "median") -> float:
    """The ``statistic`` ("median" or "min") over ``repeats`` of the wall time of ``number`` back-to-back calls
    of ``fn``, per call (seconds). "min" is the least disturbed by other work on a shared machine."""
    for name, v in (("number", number), ("repeats", repeats)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    if statistic not in ("median", "min"):
        raise ValueError(f"statistic must be 'median' or 'min', got {statistic!r}")
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    samples.sort()
    return samples[0] if statistic == "min" else samples[len(samples) // 2]


def count_aten_ops(fn: Callable[[], object]) -> Counter:
    """The ATen operators ``fn()`` dispatches, counted by name (``Counter``), through a
    ``TorchDispatchMode``: every one is a separate kernel launch on a GPU. Views and factory calls count too."""
    from torch.utils._python_dispatch import TorchDispatchMode

    counts: Counter = Counter()

    class _Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            counts[str(func.overloadpacket.__name__)] += 1
            return func(*args, **(kwargs or {}))

    with _Count():
        fn()
    return counts



def host_timeline(fn: Callable[[], object], max_depth: int = 1) -> list[TimelineEvent]:
    """Profile one call of ``fn()`` with ``torch.profiler`` on the CPU and return its ranges down to
    ``max_depth`` (0: the calls Python made; 1: the operators they dispatched), ordered by start. On a CPU
    the operators run in the host thread, so the gaps between depth-0 ranges are Python's own time. The
    profiler's native start/stop messages on file descriptor 2 are discarded (a page shows no stderr)."""
    import os

    from torch.profiler import ProfilerActivity, profile

    if isinstance(max_depth, bool) or not isinstance(max_depth, numbers.Integral) or max_depth < 0:
        raise ValueError(f"max_depth must be an integer >= 0, got {max_depth!r}")
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                fn()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    events = []
    for e in prof.events():
        depth, parent = 0, e.cpu_parent
        while parent is not None:
            depth, parent = depth + 1, parent.cpu_parent
        if depth <= max_depth:
            events.append((e.name, e.time_range.start, e.time_range.end - e.time_range.start, depth))
    if not events:
        return []
    t0 = min(start for _, start, _, _ in events)
    return sorted((TimelineEvent(name, (start - t0) * 1e-6, dur * 1e-6, depth)
                   for name, start, dur, depth in events), key=lambda ev: ev.start_s)
