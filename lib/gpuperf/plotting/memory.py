"""Figures of chapter 04: the memory hierarchy, coalescing, bank conflicts and occupancy.

Every function draws on an ``ax`` it is given (so notebooks use :func:`gpuperf.plotting.style.new_figure`
and explorers a bare ``matplotlib.figure.Figure``) and returns it.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from gpuperf.memory.banks import NUM_BANKS, BankAccess
from gpuperf.memory.hierarchy import Level
from gpuperf.plotting.style import PALETTE


def plot_hierarchy(ax_capacity, ax_bandwidth, levels_by_device: Mapping[str, Sequence[Level]]):
    """Two panels of grouped horizontal bars, one group per level: capacity (whole chip) and bandwidth, one
    colour per device; a level without a published figure gets an "n/a" label instead of a bar."""
    devices = list(levels_by_device)
    names = [lv.name for lv in levels_by_device[devices[0]]]
    height = 0.8 / len(devices)
    y = np.arange(len(names))
    for ax, attr, xlabel in ((ax_capacity, "capacity_bytes", "capacity, whole chip (bytes)"),
                             (ax_bandwidth, "bytes_per_s", "bandwidth (bytes/s)")):
        values_all = [getattr(lv, attr) for d in devices for lv in levels_by_device[d] if getattr(lv, attr)]
        low = min(values_all) / 3
        for d, device in enumerate(devices):
            values = [getattr(lv, attr) for lv in levels_by_device[device]]
            pos = y + (d - (len(devices) - 1) / 2) * height
            ax.barh(pos, [v or 0 for v in values], height=height * 0.95, color=PALETTE[d], label=device)
            for p_, v in zip(pos, values):
                if not v:
                    ax.text(low * 1.1, p_, "n/a", va="center", fontsize=7, color=PALETTE[d])
        ax.set_xscale("log")
        ax.set_xlim(left=low)
        ax.set_yticks(y, names)
        ax.invert_yaxis()
        ax.set_xlabel(xlabel)
        ax.grid(axis="y", visible=False)
    ax_bandwidth.legend(loc="lower right")
    return ax_capacity, ax_bandwidth


def plot_latency(ax, latency_cycles: Mapping[str, float], clock_hz: float | None = None):
    """Horizontal bars of measured latency per level (SM cycles; nanoseconds at ``clock_hz`` if given)."""
    names = list(latency_cycles)
    values = [latency_cycles[n] for n in names]
    y = np.arange(len(names))
    ax.barh(y, values, color=PALETTE[0])
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    for yi, v in zip(y, values):
        label = f"{v:.0f} cycles" + (f" = {v / clock_hz * 1e9:.0f} ns" if clock_hz else "")
        ax.text(v, yi, "  " + label, va="center", fontsize=8)
    ax.set_xlabel("latency of one dependent load (SM cycles)")
    ax.set_xlim(0, max(values) * 1.6)
    ax.grid(axis="y", visible=False)
    return ax


def plot_sectors_vs_stride(ax, strides: Sequence[int], predicted: Sequence[float],
                           measured: Sequence[float] | None = None):
    """Sectors per warp request against stride: the simulator's line and, if given, measured points."""
    ax.plot(strides, predicted, color=PALETTE[0], label="simulator (gpuperf.memory)")
    if measured is not None:
        ax.plot(strides, measured, "o", color=PALETTE[1], markersize=5, label="Nsight Compute, H200")
    ax.set_xlabel("stride between neighbouring threads (4-byte elements)")
    ax.set_ylabel("32-byte sectors per warp request")
    ax.set_ylim(0, 34)
    ax.legend(loc="lower right")
    return ax


def plot_bandwidth_vs_stride(ax, strides: Sequence[int], useful_bytes_per_s: Sequence[float],
                             model_useful_bytes_per_s: Sequence[float] | None = None,
                             copy_bytes_per_s: float | None = None):
    """Useful load bandwidth (bytes the threads asked for, per second) against stride; optionally a model
    curve and the same run's device-copy rate."""
    strides = np.asarray(strides)
    ax.plot(strides, np.asarray(useful_bytes_per_s) / 1e9, "o-", color=PALETTE[0], markersize=4,
            label="measured, useful bytes")
    if model_useful_bytes_per_s is not None:
        ax.plot(strides, np.asarray(model_useful_bytes_per_s) / 1e9, "--", color=PALETTE[1],
                label="model: HBM reads 64-byte pieces at the copy rate")
    if copy_bytes_per_s:
        ax.axhline(copy_bytes_per_s / 1e9, color=PALETTE[6], linewidth=1, linestyle=":",
                   label="device copy, same run")
    ax.set_yscale("log")
    ax.set_xlabel("stride between neighbouring threads (4-byte elements)")
    ax.set_ylabel("useful bandwidth (GB/s)")
    ax.legend(loc="center right")
    return ax


def plot_bank_access(ax, access: BankAccess, title: str | None = None):
    """Distinct words each bank must deliver, per phase (stacked): the tallest single-phase segment is the
    conflict degree, and the phases' maxima add up to the wavefronts."""
    table = np.array(access.words_per_bank)
    bottom = np.zeros(NUM_BANKS)
    for p, row in enumerate(table):
        label = f"phase {p + 1}" if len(table) > 1 else None
        ax.bar(np.arange(NUM_BANKS), row, bottom=bottom, color=PALETTE[p % len(PALETTE)], label=label,
               edgecolor="white", linewidth=0.5)
        bottom = bottom + row
    ax.set_xlim(-0.7, NUM_BANKS - 0.3)
    ax.set_xticks(range(0, NUM_BANKS, 4))
    ax.set_xlabel("bank")
    ax.set_ylabel("distinct 4-byte words")
    top = max(4, int(bottom.max()) + 1)
    ax.set_ylim(0, top)
    if len(table) > 1:
        ax.legend(loc="upper right", ncol=len(table))
    ax.set_title(title or f"{access.wavefronts} wavefront(s), {access.ideal_wavefronts} needed")
    ax.grid(axis="x", visible=False)
    return ax


def plot_bank_cases(ax, labels: Sequence[str], predicted: Sequence[float], measured: Sequence[float] | None = None):
    """Wavefronts per warp instruction for named cases: predicted bars, measured markers."""
    y = np.arange(len(labels))
    ax.barh(y, predicted, color=PALETTE[0], alpha=0.8, label="simulator")
    if measured is not None:
        ax.plot(measured, y, "D", color=PALETTE[1], markersize=6, label="Nsight Compute, H200")
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log", base=2)
    ax.set_xlabel("shared-memory wavefronts per warp instruction (log scale)")
    ax.legend(loc="lower right")
    ax.grid(axis="y", visible=False)
    return ax


def plot_occupancy_curve(ax, x: Sequence[float], occupancy: Sequence[float], label: str, *, xlabel: str,
                         color_index: int = 0):
    """One staircase of occupancy against a resource (registers per thread or shared memory per block)."""
    ax.step(x, occupancy, where="post", color=PALETTE[color_index % len(PALETTE)], label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("occupancy (resident warps / 64)")
    ax.set_ylim(0, 1.05)
    ax.legend(loc="upper right")
    return ax


def plot_live_strides(ax, recorded_strides: Sequence[int], recorded_useful_bytes_per_s: Sequence[float],
                      recorded_copy_bytes_per_s: float, live: Mapping | None = None,
                      recorded_label: str = "H200, recorded"):
    """Useful bandwidth of a strided read as a fraction of the same run's device copy, against stride (log
    axes): the recorded H200 run (grey) and, given ``live`` (the result of
    :func:`gpuperf.benchmark.memory_live.sweep_strides`), the reader's GPU in colour; a dotted 1/stride line
    through the recorded stride-8 point shows the slope of a fixed number of bytes moved per sector."""
    s = np.asarray(recorded_strides, dtype=float)
    y = np.asarray(recorded_useful_bytes_per_s, dtype=float) / recorded_copy_bytes_per_s
    ax.plot(s, y, "o-", color="0.45", markersize=4, label=recorded_label)
    if 8 in list(recorded_strides):
        at8 = y[list(recorded_strides).index(8)]
        ax.plot(s, at8 * 8 / s, ":", color="0.6", label="slope 1/stride")
    if live:
        rows = live["results"]
        ax.plot([r["stride"] for r in rows], [r["useful_bytes_per_s"] / live["copy"]["bytes_per_s"] for r in rows],
                "o-", color=PALETTE[0], markersize=5, lw=1.6, label=f"{live['device']['device']} (yours)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("stride between neighbouring threads (4-byte elements)")
    ax.set_ylabel("useful bandwidth / same-run copy")
    ax.legend(loc="lower left", fontsize=8)
    return ax
