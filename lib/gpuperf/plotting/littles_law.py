"""Figures of chapter 02: the latency ladder, bandwidth against bytes in flight, Little's law per GPU."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from gpuperf.littles_law import InFlightRequirement, bandwidth_from_bytes_in_flight
from gpuperf.plotting.style import PALETTE


def plot_latency_ladder(ax, rows: Sequence[Mapping], clock_hz: float | None = None,
                        cache_bytes: Mapping[str, float] | None = None) -> None:
    """Pointer-chase latency (SM cycles per dependent load) against working-set size, log x.

    ``rows`` are the recorded run's results (``level``, ``working_set_bytes``, ``cycles_per_load``);
    ``cache_bytes`` draws a vertical line at each named capacity (e.g. ``{"L2 60 MiB": ...}``).
    """
    glob = sorted((r for r in rows if r["level"] == "global"), key=lambda r: r["working_set_bytes"])
    shared = [r for r in rows if r["level"] == "shared"]
    x = np.array([r["working_set_bytes"] for r in glob])
    y = np.array([r["cycles_per_load"] for r in glob])
    ax.plot(x, y, marker="o", ms=3.5, color=PALETTE[0], label="global memory (L1, L2, HBM)")
    if shared:
        ax.plot([r["working_set_bytes"] for r in shared], [r["cycles_per_load"] for r in shared],
                marker="s", ms=5, ls="none", color=PALETTE[1], label="shared memory")
    for i, (name, size) in enumerate((cache_bytes or {}).items()):
        ax.axvline(size, color="0.5", ls=":", lw=1)
        ax.text(size * 1.1, ax.get_ylim()[1] * 0.8 if i % 2 else ax.get_ylim()[1] * 0.55, name,
                fontsize=8, color="0.3")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("working set (bytes)")
    ax.set_ylabel("latency (SM cycles per load)")
    if clock_hz:
        sec = ax.secondary_yaxis("right", functions=(lambda c: c / clock_hz * 1e9, lambda ns: ns * clock_hz / 1e9))
        sec.set_ylabel("ns")
    ax.legend(loc="upper left")


def plot_bandwidth_vs_in_flight(ax, rows: Sequence[Mapping], latency_s: float | None = None,
                                peak_bytes_per_s: float | None = None, n_sms: int | None = None,
                                reference_bytes_per_s: float | None = None) -> None:
    """Measured bandwidth (TB/s) against bytes in flight per SM, one colour per loads in flight per thread,
    and, given ``latency_s``, ``peak_bytes_per_s`` and ``n_sms``, the Little's-law model
    ``min(peak, n_sms * in_flight / latency)`` as a dashed line."""
    measured = [r for r in rows if "bytes_per_s" in r and "warps_per_sm" in r]
    loads = sorted({r["loads_in_flight_per_thread"] for r in measured})
    for i, ilp in enumerate(loads):
        pts = sorted((r["bytes_in_flight_per_sm"], r["bytes_per_s"]) for r in measured
                     if r["loads_in_flight_per_thread"] == ilp)
        ax.plot([p[0] for p in pts], [p[1] / 1e12 for p in pts], marker="o", ms=4, lw=1,
                color=PALETTE[i % len(PALETTE)], label=f"{ilp} load(s) per thread")
    if latency_s and peak_bytes_per_s and n_sms and measured:
        x = np.array([r["bytes_in_flight_per_sm"] for r in measured], dtype=float)
        xs = np.geomspace(x.min(), x.max(), 200)
        model = bandwidth_from_bytes_in_flight(xs * n_sms, latency_s, peak_bytes_per_s)
        ax.plot(xs, model / 1e12, color="0.2", ls="--", lw=1.6,
                label=f"model: min(B, in flight / {latency_s * 1e9:.0f} ns)")
    if reference_bytes_per_s:
        ax.axhline(reference_bytes_per_s / 1e12, color="0.5", ls=":", lw=1,
                   label="device-to-device copy (same run)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bytes in flight per SM")
    ax.set_ylabel("read bandwidth (TB/s)")
    ax.legend(loc="upper left", fontsize=8)


def plot_requirements(ax, requirements: Sequence[InFlightRequirement]) -> None:
    """Bytes that must be in flight per SM (KiB) for each GPU, with the warps that takes at one 16-byte
    load per thread written on each bar."""
    names = [r.accelerator for r in requirements]
    kib = [r.bytes_in_flight_per_sm / 1024 for r in requirements]
    ax.barh(range(len(names)), kib, color=PALETTE[0])
    for i, r in enumerate(requirements):
        ax.text(kib[i] * 1.02, i, f"{r.warps_per_sm_needed:.0f} warps", va="center", fontsize=8)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("bytes in flight per SM to reach HBM bandwidth (KiB)")
    ax.set_xlim(0, max(kib) * 1.3)


def plot_small_transfers(ax, bytes_moved, fraction_of_peak, label: str) -> None:
    """Fraction of peak bandwidth reached by transfers of each size issued all at once."""
    ax.plot(bytes_moved, fraction_of_peak, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("bytes read by the kernel")
    ax.set_ylabel("fraction of peak bandwidth")
    ax.set_ylim(0, 1.05)
    ax.legend(loc="upper left")


def plot_gpu_anatomy(ax, sm_count: int, warps_per_sm: int, schedulers: int, l2_label: str,
                     hbm_label: str) -> None:
    """Chapter 02's primer figure: the GPU as SMs sharing L2 and HBM; one SM's schedulers and warp
    slots (a block shaded); one warp's 32 threads. Sizes come from the caller (``gpuperf.hardware``)."""
    from matplotlib.patches import Rectangle

    def box(x, y, w, h, fc="none", ec="0.35", lw=1.0, **kw):
        ax.add_patch(Rectangle((x, y), w, h, fc=fc, ec=ec, lw=lw, **kw))

    # the GPU: a grid of SMs above L2 and HBM
    cols = 12
    rows = -(-sm_count // cols)
    cell = 0.3
    for i in range(sm_count):
        r, c = divmod(i, cols)
        box(0.2 + c * cell, 1.6 + (rows - 1 - r) * cell, cell * 0.8, cell * 0.8,
            fc=PALETTE[0] if i else PALETTE[1], ec="none", alpha=0.8)
    ax.text(0.2 + cols * cell / 2, 1.7 + rows * cell, f"GPU: {sm_count} SMs", ha="center", fontsize=9)
    box(0.2, 0.95, cols * cell - 0.06, 0.45, fc="0.85")
    ax.text(0.2 + cols * cell / 2, 1.17, l2_label, ha="center", va="center", fontsize=8)
    box(0.2, 0.3, cols * cell - 0.06, 0.45, fc="0.7")
    ax.text(0.2 + cols * cell / 2, 0.52, hbm_label, ha="center", va="center", fontsize=8)
    # one SM, enlarged: its schedulers and warp slots
    x0, y0, w, h = 4.5, 0.3, 3.9, 4.3
    box(x0, y0, w, h, ec=PALETTE[1], lw=1.5)
    ax.text(x0 + w / 2, y0 + h + 0.1, "one SM", ha="center", fontsize=9)
    per = warps_per_sm // schedulers
    lane_w = (w - 0.4) / schedulers
    for s in range(schedulers):
        sx = x0 + 0.2 + s * lane_w
        ax.text(sx + lane_w / 2 - 0.05, y0 + h - 0.3, f"scheduler {s}", ha="center", fontsize=7)
        for k in range(per):
            in_block = k < 2  # the first two slots of every scheduler: one block of 8 warps
            box(sx + 0.05, y0 + h - 0.6 - (k + 1) * 0.17, lane_w - 0.2, 0.12,
                fc=PALETTE[2] if in_block else "0.9", ec="none")
    ax.text(x0 + w / 2, y0 + 0.85, f"{warps_per_sm} warp slots; shaded: one block of "
            f"{2 * schedulers} warps", ha="center", fontsize=7)
    box(x0 + 0.2, y0 + 0.15, w - 0.4, 0.5, fc="0.85")
    ax.text(x0 + w / 2, y0 + 0.4, "registers  |  L1 + shared memory", ha="center", va="center",
            fontsize=7)
    # one warp: 32 threads
    x1 = 9.0
    for t in range(32):
        r, c = divmod(t, 8)
        box(x1 + c * 0.34, 2.9 - r * 0.34, 0.28, 0.28, fc=PALETTE[2], ec="none")
    ax.text(x1 + 1.35, 3.35, "one warp: 32 threads", ha="center", fontsize=9)
    ax.text(x1 + 1.35, 1.25, "one instruction,\n32 lanes at once", ha="center", fontsize=8)
    ax.annotate("", xy=(x0, 2.5), xytext=(0.2 + cols * cell, 2.2),
                arrowprops=dict(arrowstyle="->", color="0.4"))
    ax.annotate("", xy=(x1 - 0.1, 2.6), xytext=(x0 + w, 2.6),
                arrowprops=dict(arrowstyle="->", color="0.4"))
    ax.set_xlim(0, 12)
    ax.set_ylim(0, 5)
    ax.set_aspect("equal")
    ax.axis("off")


def plot_live_in_flight(ax, recorded_rows: Sequence[Mapping], recorded_copy_bytes_per_s: float,
                        live: Mapping | None = None, recorded_label: str = "H200, recorded") -> None:
    """Read bandwidth as a fraction of the same run's device copy against bytes in flight per SM: the
    recorded H200 sweep (grey, one line per loads in flight per thread, 1 to 4) and, given ``live`` (the
    result of :func:`gpuperf.benchmark.memory_live.sweep_bytes_in_flight`), the reader's GPU in colour."""
    rec = [r for r in recorded_rows if "warps_per_sm" in r and r["loads_in_flight_per_thread"] <= 4]
    for i, k in enumerate(sorted({r["loads_in_flight_per_thread"] for r in rec})):
        pts = sorted((r["bytes_in_flight_per_sm"], r["bytes_per_s"] / recorded_copy_bytes_per_s)
                     for r in rec if r["loads_in_flight_per_thread"] == k)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=str(0.35 + 0.2 * i), lw=1, marker=".",
                label=f"{recorded_label}, {k} load(s) per thread")
    if live:
        name = live["device"]["device"]
        for i, k in enumerate(sorted({r["loads_in_flight_per_thread"] for r in live["results"]})):
            pts = sorted((r["bytes_in_flight_per_sm"], r["fraction_of_copy"]) for r in live["results"]
                         if r["loads_in_flight_per_thread"] == k)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color=PALETTE[i % len(PALETTE)], lw=1.6,
                    marker="o", ms=5, label=f"{name} (yours), {k} load(s) per thread")
    ax.axhline(1.0, color="0.5", ls=":", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.15)
    ax.set_xlabel("bytes in flight per SM")
    ax.set_ylabel("read bandwidth / same-run copy")
    ax.legend(loc="lower right", fontsize=7)
