"""Figures of chapter 07: time per call over a size sweep (with the three-term model), launch costs eager vs
CUDA Graph, and the GPU's busy fraction against kernel duration."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from gpuperf import overhead
from gpuperf.plotting.style import PALETTE


def plot_size_sweep(ax, sizes: Sequence[float], times_s: Sequence[float], *, label: str,
                    model_s: Sequence[float] | None = None, x_label: str = "size", color=None):
    """Measured time per call (us, log-log) against size, with the model's steady-state time dashed."""
    colour = color or PALETTE[0]
    ax.plot(sizes, np.asarray(times_s) * 1e6, marker="o", ms=4, color=colour, label=f"{label} (measured)")
    if model_s is not None:
        ax.plot(sizes, np.asarray(model_s) * 1e6, ls="--", lw=1.3, color=colour, label=f"{label} (model)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(x_label)
    ax.set_ylabel("time per call (us)")
    ax.legend()
    return ax


def plot_launch_bars(ax, kernels: Sequence[str], eager_s: Sequence[float], graph_s: Sequence[float]):
    """Grouped horizontal bars: time per kernel (us) issued eagerly from Python vs replayed from a CUDA Graph."""
    ys = np.arange(len(kernels))
    ax.barh(ys - 0.2, np.asarray(eager_s) * 1e6, height=0.4, color=PALETTE[1], label="eager launch from Python")
    ax.barh(ys + 0.2, np.asarray(graph_s) * 1e6, height=0.4, color=PALETTE[0], label="CUDA Graph replay")
    ax.set_yticks(ys, kernels)
    ax.invert_yaxis()
    ax.set_xlabel("time per kernel (us)")
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower right")
    return ax


def plot_busy_fraction(ax, host_times_s: Mapping[str, float], gpu_times_s: Sequence[float] | None = None,
                       graph_gaps_s: Mapping[str, float] | None = None):
    """The GPU's busy fraction against the GPU time per kernel: gpu / max(gpu, host) for each host cost
    (kernels launched one by one from Python), and gpu / (gpu + gap) for each device gap of a CUDA Graph
    replay (dashed; :func:`gpuperf.overhead.graph_busy_fraction`)."""
    g = np.logspace(-7, -3, 200) if gpu_times_s is None else np.asarray(gpu_times_s)
    i = 0
    for i, (label, host) in enumerate(host_times_s.items()):
        ax.plot(g * 1e6, [overhead.gpu_busy_fraction(x, host) for x in g], color=PALETTE[i % len(PALETTE)],
                label=f"{label}: host {host * 1e6:.1f} us per kernel")
    for j, (label, gap) in enumerate((graph_gaps_s or {}).items(), start=i + 1):
        ax.plot(g * 1e6, [overhead.graph_busy_fraction(x, gap) for x in g], ls="--",
                color=PALETTE[j % len(PALETTE)], label=f"{label}: device gap <= {gap * 1e6:.1f} us")
    ax.set_xscale("log")
    ax.set_xlabel("GPU time per kernel (us)")
    ax.set_ylabel("fraction of the time the GPU works")
    ax.set_ylim(0, 1.05)
    ax.legend()
    return ax


def plot_timeline(ax, events, lane_labels=("called from Python", "operators"), *, highlight=None,
                  window_s=None):
    """A profiler timeline (:func:`gpuperf.benchmark.host_overhead.host_timeline`): one lane per nesting
    depth, one bar per range (microseconds from the start). White space in the top lane is the host's own (Python) time. For a
    recorded GPU trace (:func:`gpuperf.overhead.timeline_from_rows`) pass ``lane_labels=("host", "device")``:
    white space in the device lane is time the GPU had nothing to run.

    ``highlight`` maps a prefix of range names to a legend label: those ranges get their own colour.
    ``window_s=(start_s, length_s)`` draws only that stretch (:func:`gpuperf.overhead.timeline_window`),
    with the axis starting at 0."""
    if window_s is not None:
        events = overhead.timeline_window(events, *window_s)
    if not events:
        raise ValueError("events: nothing to draw (empty, or no range inside window_s)")
    highlight = dict(highlight or {})
    depths = sorted({e.depth for e in events})
    labelled = set()
    for e in events:
        lane = depths.index(e.depth)
        prefix = next((p for p in highlight if e.name.startswith(p)), None)
        if prefix is None:
            colour, label = PALETTE[lane % len(PALETTE)], None
        else:
            colour = PALETTE[(2 + list(highlight).index(prefix)) % len(PALETTE)]
            label = highlight[prefix] if prefix not in labelled else None
            labelled.add(prefix)
        ax.barh(lane, e.duration_s * 1e6, left=e.start_s * 1e6, height=0.7, color=colour,
                edgecolor="white", linewidth=0.4, label=label)
    labels = [lane_labels[d] if d < len(lane_labels) else f"depth {d}" for d in depths]
    ax.set_yticks(range(len(depths)), labels)
    ax.invert_yaxis()
    if window_s is not None:
        ax.set_xlim(0, window_s[1] * 1e6)
    ax.set_xlabel("time (us)")
    ax.grid(axis="y", visible=False)
    if labelled:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)
    return ax
