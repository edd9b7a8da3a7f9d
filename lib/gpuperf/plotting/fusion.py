"""Figures of chapter 09: fused vs unfused chains, the add + RMSNorm measured against the copy, fusion gains
on the CPU, and the memory of activation checkpointing."""

from __future__ import annotations

from typing import Mapping, Sequence

from gpuperf.plotting.style import PALETTE


def plot_chain_times(ax, k_values: Sequence[int], times_s: Mapping[str, Sequence[float]]):
    """Time (ms) against the number of chained ops k, one line per label (log-log)."""
    for label, ts in times_s.items():
        ax.plot(k_values, [t * 1e3 for t in ts], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("elementwise ops in the chain, k")
    ax.set_ylabel("time (ms)")
    ax.legend()
    return ax


def plot_rate_bars(ax, labels: Sequence[str], rates_tb_per_s: Sequence[float], reference: float | None = None,
                   reference_label: str = "copy"):
    """Horizontal bars of effective TB/s, with the reference rate as a dashed line."""
    ys = range(len(labels))
    ax.barh(list(ys), rates_tb_per_s, color=[PALETTE[i % len(PALETTE)] for i in ys])
    ax.set_yticks(list(ys), labels)
    ax.invert_yaxis()
    if reference is not None:
        ax.axvline(reference, color="black", ls="--", lw=1.2, label=reference_label)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_xlabel("effective bandwidth (TB/s): bytes the operation must move / time")
    ax.grid(axis="y", visible=False)
    return ax


def plot_speedups(ax, labels: Sequence[str], speedups: Sequence[float]):
    """Bars of speed-up (x) with a line at 1."""
    ys = range(len(labels))
    ax.barh(list(ys), speedups, color=[PALETTE[i % len(PALETTE)] for i in ys])
    ax.axvline(1.0, color="black", lw=1)
    ax.set_yticks(list(ys), labels)
    ax.invert_yaxis()
    ax.set_xlabel("speed-up of the fused form over the unfused one (x)")
    ax.grid(axis="y", visible=False)
    return ax


def plot_checkpoint_memory(ax, segments: Sequence[int], model_units: Sequence[float],
                           measured_units: Sequence[float] | None = None, peak_units: Sequence[float] | None = None):
    """Activation memory (in activation-sized tensors) against the segment length."""
    ax.plot(segments, model_units, marker="o", label="kept after the forward pass (schedule)")
    if peak_units is not None:
        ax.plot(segments, peak_units, ls="--", label="peak during the backward pass (schedule)")
    if measured_units is not None:
        ax.plot(segments, measured_units, ls="none", marker="x", ms=9, color="black",
                label="saved by autograd (measured)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("segment length s (layers)")
    ax.set_ylabel("activation memory (tensors)")
    ax.legend()
    return ax
