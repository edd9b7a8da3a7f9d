"""Figures of chapter 10: where a layer's FLOP and time go, and the recorded profile against the ledger."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from matplotlib.ticker import FuncFormatter

from gpuperf.ledger import GROUPS, Ledger, ProfiledOperator
from gpuperf.plotting.style import PALETTE

#: One colour per operator group (and for work the ledger does not count).
GROUP_COLORS = {"matmul": PALETTE[0], "attention": PALETTE[1], "norm": PALETTE[2],
                "elementwise": PALETTE[4], "layout": PALETTE[6]}
_PERCENT = FuncFormatter(lambda x, _pos=None: f"{x:.0%}")
GROUP_LABELS = {"matmul": "projections (matmul)", "attention": "attention", "norm": "norms",
                "elementwise": "elementwise (RoPE, activations, residuals)", "layout": "layout copies"}


def _check_ledgers(ledgers) -> dict[str, Ledger]:
    if not isinstance(ledgers, Mapping) or not ledgers:
        raise ValueError(f"ledgers must be a non-empty mapping of label -> Ledger, got {ledgers!r}")
    for label, led in ledgers.items():
        if not isinstance(led, Ledger):
            raise ValueError(f"ledgers[{label!r}] must be a Ledger, got {type(led).__name__}")
    return dict(ledgers)


def plot_shares(ax, led: Ledger, *, title: str | None = None):
    """Two stacked horizontal bars: the share of FLOP and the share of time of each operator group."""
    if not isinstance(led, Ledger):
        raise ValueError(f"led must be a Ledger, got {type(led).__name__}")
    bars = {"share of FLOP": "flop", "share of time": "time"}
    for y, (label, what) in enumerate(bars.items()):
        left = 0.0
        for g in GROUPS:
            share = led.share(what, group=g)
            ax.barh(y, share, left=left, color=GROUP_COLORS[g], label=GROUP_LABELS[g] if y == 0 else None)
            if share >= 0.06:
                ax.text(left + share / 2, y, f"{share:.0%}", ha="center", va="center", color="white",
                        fontsize=9, fontweight="bold")
            left += share
    ax.set_yticks(range(len(bars)), list(bars))
    ax.set_xlim(0, 1)
    ax.set_xlabel("fraction of the layer")
    ax.xaxis.set_major_formatter(_PERCENT)
    ax.grid(axis="y", visible=False)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=2)
    ax.set_title(title or f"{led.model.name}, {led.phase}, {led.roofs.device}")
    return ax


def plot_group_times(ax, ledgers: Mapping[str, Ledger], *, normalize: bool = False, unit: float = 1e-6,
                     unit_label: str = "µs"):
    """One stacked horizontal bar per ledger: seconds per operator group (or fractions if ``normalize``)."""
    ledgers = _check_ledgers(ledgers)
    labels = list(ledgers)
    for y, label in enumerate(labels):
        led = ledgers[label]
        times = led.group_times_s()
        total = led.time_s
        left = 0.0
        for g in GROUPS:
            value = times[g] / total if normalize else times[g] / unit
            ax.barh(y, value, left=left, color=GROUP_COLORS[g], label=GROUP_LABELS[g] if y == 0 else None)
            left += value
        if not normalize:
            ax.text(left, y, f" {left:,.0f} {unit_label}", va="center", fontsize=9)
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    if normalize:
        ax.set_xlim(0, 1)
        ax.xaxis.set_major_formatter(_PERCENT)
        ax.set_xlabel("share of the layer's time (roofline bounds)")
    else:
        ax.set_xlabel(f"time bound ({unit_label})")
        ax.set_xlim(0, ax.get_xlim()[1] * 1.18)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2)
    return ax


def plot_profile(ax, rows: Sequence[ProfiledOperator], *, title: str = ""):
    """Measured GPU time of each operator against its ledger bound (horizontal bars, log axis)."""
    rows = list(rows)
    if not rows or not all(isinstance(r, ProfiledOperator) for r in rows):
        raise ValueError("rows must be a non-empty sequence of ProfiledOperator")
    y = np.arange(len(rows))
    measured = np.array([r.measured_s for r in rows]) * 1e6
    predicted = np.array([np.nan if r.predicted_s is None else r.predicted_s for r in rows]) * 1e6
    colors = [GROUP_COLORS.get(r.group, PALETTE[6]) for r in rows]
    ax.barh(y - 0.2, measured, height=0.4, color=colors, label="measured kernels")
    ax.barh(y + 0.2, np.nan_to_num(predicted, nan=0.0), height=0.4, color="white", edgecolor=colors,
            hatch="///", label="ledger bound")
    for yi, r in zip(y, rows):
        if r.ratio is not None:
            ax.text(r.measured_s * 1e6 * 1.08, yi - 0.2, f"{r.ratio:.1f}x", va="center", fontsize=8)
    ax.set_yticks(y, [r.operator for r in rows])
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("time per layer (µs, log scale)")
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower right")
    if title:
        ax.set_title(title)
    return ax


def plot_group_comparison(ax, comparisons: Mapping[str, Mapping[str, tuple[float, float]]]):
    """Stacked bars, measured and predicted, per recorded variant: ``{label: {group: (measured_s,
    predicted_s)}}`` as :func:`gpuperf.ledger.compare_groups` returns them."""
    if not isinstance(comparisons, Mapping) or not comparisons:
        raise ValueError("comparisons must be a non-empty mapping of label -> compare_groups result")
    groups = (*GROUPS, "layout")
    ticks, names = [], []
    seen = set()
    for i, (label, comp) in enumerate(comparisons.items()):
        for j, (kind, index) in enumerate((("measured", 0), ("ledger", 1))):
            y = i * 2.6 + j
            left = 0.0
            for g in groups:
                value = comp.get(g, (0.0, 0.0))[index] * 1e6
                if value <= 0:
                    continue
                legend = "matmuls (projections, QK^T, PV)" if g == "matmul" else GROUP_LABELS[g]
                ax.barh(y, value, left=left, color=GROUP_COLORS[g], hatch="///" if index else None,
                        edgecolor="white", label=legend if g not in seen else None)
                seen.add(g)
                left += value
            ax.text(left, y, f" {left:,.0f} µs", va="center", fontsize=8)
            ticks.append(y)
            names.append(f"{label}: {kind}")
    ax.set_yticks(ticks, names)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("GPU time of one layer (µs); hatched: ledger bound")
    ax.set_xlim(0, ax.get_xlim()[1] * 1.15)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2)
    return ax


def plot_decode_attention_share(ax, batches: Sequence[int], shares: Mapping[str, Sequence[float]]):
    """Attention's share of decode time against the batch size, one line per label."""
    batches = list(batches)
    if not batches or not isinstance(shares, Mapping) or not shares:
        raise ValueError("batches and shares must be non-empty")
    for label, values in shares.items():
        values = list(values)
        if len(values) != len(batches):
            raise ValueError(f"shares[{label!r}] must have {len(batches)} values, got {len(values)}")
        ax.plot(batches, values, marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("decode batch (sequences)")
    ax.set_ylabel("attention's share of the step")
    ax.set_ylim(0, 1)
    ax.yaxis.set_major_formatter(_PERCENT)
    ax.legend()
    return ax


def plot_series(ax, xs: Sequence[float], series: Mapping[str, Sequence[float]], *, xlabel: str, ylabel: str,
                logx: bool = True, logy: bool = False):
    """One line with markers per label, against ``xs`` (e.g. fusion speed-up against sequence length)."""
    xs = list(xs)
    if not xs or not isinstance(series, Mapping) or not series:
        raise ValueError("xs and series must be non-empty")
    for label, values in series.items():
        values = list(values)
        if len(values) != len(xs):
            raise ValueError(f"series[{label!r}] must have {len(xs)} values, got {len(values)}")
        ax.plot(xs, values, marker="o", label=label)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos=None: f"{v:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _pos=None: f"{v:g}" if v in (2, 3, 5, 20) else ""))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend()
    return ax
