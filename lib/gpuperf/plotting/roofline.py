"""Roofline figures: one device's roofline (optionally with every compute and memory ceiling), measured or
modelled points marked on it, and the ridge points of several devices.

The model is Williams, Waterman and Patterson, "Roofline: an insightful visual performance model for
multicore architectures", CACM 52(4), 2009; the numbers come from :mod:`gpuperf.roofline`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from matplotlib.ticker import EngFormatter, NullFormatter

from gpuperf.hardware import Accelerator
from gpuperf.plotting.style import PALETTE
from gpuperf.roofline import (
    BYTES_PER_ELEMENT,
    RooflineAnalysis,
    as_accelerator,
    attainable_flop_per_s,
    compute_roofs,
    memory_roofs,
    ridge_point,
)

XLABEL = "Arithmetic intensity (FLOP/byte)"
#: Marker shapes for :func:`plot_points`, in drawing order (all distinct; a 13th point reuses the first).
POINT_MARKERS = "osD^vP*Xhp<>"
YLABEL = "Attainable (FLOP/s)"
_UNIT_LABEL = {"matrix": "matrix unit", "vector": "vector unit"}
#: Colours of marked points: PALETTE[0] draws the roof and the last entry (yellow) is hard to see on white.
_POINT_COLORS = PALETTE[1:-1]


def point_for(analysis: RooflineAnalysis, label: str | None = None) -> tuple[str, float, float]:
    """A ``points`` entry for :func:`plot_roofline`: the op at its intensity and attainable FLOP/s."""
    return (
        analysis.op.name if label is None else label,
        analysis.intensity_flop_per_byte,
        analysis.attainable_flop_per_s,
    )


def _check_range(intensity_range) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in intensity_range)
    except (TypeError, ValueError):
        raise ValueError(f"intensity_range must be (low, high), got {intensity_range!r}") from None
    if not (0 < lo < hi < np.inf):
        raise ValueError(f"intensity_range must satisfy 0 < low < high, got {intensity_range!r}")
    return lo, hi


def _check_points(points) -> list[tuple[str, float, float]]:
    if isinstance(points, (str, bytes)) or not hasattr(points, "__iter__"):
        raise ValueError(f"points must be a sequence of (label, intensity_flop_per_byte, flop_per_s), got {points!r}")
    checked = []
    for point in points:
        try:
            name, intensity, rate = point
            intensity, rate = float(intensity), float(rate)
        except (TypeError, ValueError):
            raise ValueError(
                f"points must hold (label, intensity_flop_per_byte, flop_per_s) tuples, got {point!r}"
            ) from None
        if not (intensity > 0 and rate > 0 and np.isfinite(intensity) and np.isfinite(rate)):
            raise ValueError(f"points need positive, finite intensity and FLOP/s (log axes), got {point!r}")
        checked.append((str(name), intensity, rate))
    return checked


def _format_axes(ax, lo: float, hi: float, y_lo: float, y_hi: float) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(y_lo, y_hi)
    ax.set_xlabel(XLABEL)
    ax.set_ylabel(YLABEL)
    ax.yaxis.set_major_formatter(EngFormatter(places=0, sep=" "))  # 1 T, 10 T, 100 T ...
    ax.yaxis.set_minor_formatter(NullFormatter())


def plot_roofline(
    ax,
    accelerator: str | Accelerator,
    dtype: str = "bf16",
    unit: str = "matrix",
    *,
    points: Sequence[tuple[str, float, float]] = (),
    intensity_range: tuple[float, float] = (1e-2, 1e4),
    hierarchical: bool = False,
    label: str | None = None,
):
    """Draw the roofline of ``accelerator`` for ``dtype`` on ``unit`` into ``ax`` (log-log) and return ``ax``.

    ``points`` are ``(label, intensity_flop_per_byte, flop_per_s)`` tuples, drawn as labelled markers (see
    :func:`point_for`). The ridge point (the chosen peak over HBM bandwidth) is marked with a dotted vertical
    line. With ``hierarchical=True`` every compute ceiling of the dtype (matrix and vector unit) is drawn as a
    horizontal line and every memory ceiling (HBM, L2, shared memory, where known) as a diagonal, instead of
    the single roof. Artists carry gids: ``"roof"``, ``"ridge"``, ``"point"``, ``"compute-roof"``,
    ``"memory-roof"``.
    """
    acc = as_accelerator(accelerator)
    peak = acc.peak_flop_per_s(dtype, unit)  # ValueError for an unknown unit or a missing dtype
    hbm = acc.hbm_bytes_per_s
    ridge = ridge_point(peak, hbm)
    lo, hi = _check_range(intensity_range)
    checked = _check_points(points)
    base = label if label is not None else f"{acc.name}, {dtype} {_UNIT_LABEL[unit]}"

    rates = [attainable_flop_per_s(lo, peak, hbm), peak]
    if not hierarchical:
        # The roof is straight on log-log axes on either side of the ridge: three points draw it exactly.
        x = np.unique(np.clip([lo, ridge, hi], lo, hi))
        ax.plot(x, attainable_flop_per_s(x, peak, hbm), color=PALETTE[0], label=base, gid="roof")
    else:
        croofs = compute_roofs(acc, dtype)
        mroofs = memory_roofs(acc)
        top = max(r.value for r in croofs)
        fastest = max(r.value for r in mroofs)
        colors = iter(PALETTE[1:] * 2)
        for roof in mroofs:
            x_end = min(hi, max(lo, top / roof.value))
            x = np.array([lo, x_end])
            ax.plot(x, x * roof.value, color=next(colors), label=f"{roof.name} {roof.value / 1e12:.3g} TB/s",
                    gid="memory-roof")
            rates.append(lo * roof.value)
        for roof in croofs:
            x_start = min(hi, max(lo, roof.value / fastest))
            ax.plot([x_start, hi], [roof.value, roof.value], color=next(colors), linestyle="--",
                    label=f"{roof.name} {roof.value / 1e12:.3g} TFLOP/s", gid="compute-roof")
            rates.append(roof.value)
        ax.set_title(base, fontsize=10)

    if lo <= ridge <= hi:
        ax.axvline(ridge, color="0.4", linestyle=":", linewidth=1.2, gid="ridge",
                   label=f"ridge {ridge:.3g} FLOP/byte")

    for i, (name, intensity, rate) in enumerate(checked):
        color = _POINT_COLORS[i % len(_POINT_COLORS)] if not hierarchical else "black"
        ax.plot([intensity], [rate], marker="o", linestyle="none", color=color, gid="point",
                label="_nolegend_", zorder=3)
        # labels of points in the right part of the plot go to their left, to stay inside the axes
        right = np.log(intensity / lo) > 0.6 * np.log(hi / lo)
        ax.annotate(name, (intensity, rate), textcoords="offset points", xytext=(-5 if right else 5, -11),
                    ha="right" if right else "left", fontsize=8)
        rates.append(rate)

    _format_axes(ax, lo, hi, min(rates) / 3, max(rates) * 3)
    if hierarchical:  # many ceilings: keep the legend off the plot area
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    else:
        ax.legend(loc="lower right", fontsize=8)
    return ax


def plot_points(ax, points: Sequence[tuple[str, float, float]], *, legend_outside: bool = True):
    """Mark ``(label, intensity_flop_per_byte, flop_per_s)`` points on ``ax`` and name them in a legend.

    For figures with too many nearby points to label each in place (as :func:`plot_roofline` does): each
    point gets its own marker shape (:data:`POINT_MARKERS`) and colour, and the legend lists them with the
    lines already on the axes. With ``legend_outside=True`` the legend sits beside the axes, to the right,
    where it cannot hide a point; otherwise matplotlib places it inside. Artists carry the gid
    ``"marked-point"``. Returns ``ax``.

    Draw the roofline first: this function keeps the axes' scales and x limits (the roofline's
    ``intensity_range``), and only widens the y limits, when the axes already have data, so that a point
    below or above them still shows.
    """
    checked = _check_points(points)
    if not checked:
        raise ValueError(f"points must hold at least one (label, intensity, FLOP/s) tuple, got {points!r}")
    if not isinstance(legend_outside, bool):
        raise ValueError(f"legend_outside must be True or False, got {legend_outside!r}")
    colors = _POINT_COLORS
    had_data = bool(ax.get_lines())
    for i, (name, intensity, rate) in enumerate(checked):
        ax.plot([intensity], [rate], marker=POINT_MARKERS[i % len(POINT_MARKERS)], markersize=7,
                linestyle="none", color=colors[i % len(colors)], label=name, gid="marked-point", zorder=3)
    if had_data:
        y_lo, y_hi = ax.get_ylim()
        rates = [rate for _, _, rate in checked]
        ax.set_ylim(min(y_lo, min(rates) / 2), max(y_hi, max(rates) * 2))
    if legend_outside:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    else:
        ax.legend(loc="best", fontsize=8)
    return ax


def plot_ridge_points(
    ax, accelerators: Sequence[str | Accelerator], dtype: str = "bf16", *, unit: str = "matrix"
):
    """Horizontal bars of each device's ridge point (peak FLOP/s of ``unit`` in ``dtype`` over HBM bytes/s).

    Devices without that peak are left out; raises ``ValueError`` if none has it. Returns ``ax``.
    """
    if unit not in _UNIT_LABEL:
        raise ValueError(f"unit must be one of {tuple(_UNIT_LABEL)}, got {unit!r}")
    if dtype not in BYTES_PER_ELEMENT:
        raise ValueError(f"dtype must be one of {tuple(BYTES_PER_ELEMENT)}, got {dtype!r}")
    names, ridges = [], []
    for item in accelerators:
        acc = as_accelerator(item)
        table = acc.matrix_flop_per_s if unit == "matrix" else acc.vector_flop_per_s
        if dtype in table:
            names.append(acc.name)
            ridges.append(acc.ridge_point_flop_per_byte(dtype, unit))
    if not names:
        raise ValueError(f"no accelerator in accelerators has a {unit}-unit peak for dtype {dtype!r}")
    y = np.arange(len(names))
    ax.barh(y, ridges, height=0.6, color=PALETTE[0], gid="ridge-bar")
    for yi, value in zip(y, ridges):
        ax.annotate(f"{value:.0f}", (value, yi), textcoords="offset points", xytext=(4, 0), va="center",
                    fontsize=8)
    ax.set_yticks(y, names)
    ax.invert_yaxis()  # first device on top
    ax.set_xlim(0, max(ridges) * 1.15)  # ridge points of current devices span well under a decade
    ax.set_xlabel(f"Ridge point, {dtype} {_UNIT_LABEL[unit]} (FLOP/byte)")
    ax.grid(axis="y", visible=False)
    return ax


def plot_fraction_of_peak(ax, analyses, *, label_time: bool = True):
    """Horizontal bars of the largest fraction of the peak each operation can reach (a linear axis, 0-100 %).

    ``analyses``: ``{label: RooflineAnalysis}`` (e.g. from :func:`gpuperf.roofline.analyze`), drawn top to
    bottom in order. Memory-bound bars and compute-bound bars get different colours; each bar is labelled
    with its percentage and, with ``label_time``, the time no kernel can beat. Returns ``ax``.
    """
    items = list(dict(analyses).items()) if hasattr(analyses, "items") else None
    if not items or not all(isinstance(a, RooflineAnalysis) for _, a in items):
        raise ValueError(f"analyses must be a non-empty mapping of labels to RooflineAnalysis, got {analyses!r}")
    from gpuperf.roofline import format_duration

    y = np.arange(len(items))
    fractions = [100 * a.fraction_of_peak for _, a in items]
    colors = [PALETTE[0] if a.bound == "compute" else PALETTE[1] for _, a in items]
    ax.barh(y, fractions, height=0.6, color=colors, gid="fraction-bar")
    for yi, (_, a), pct in zip(y, items, fractions):
        text = f"{pct:.3g} %" + (f"  (\u2265 {format_duration(a.time_s)})" if label_time else "")
        ax.annotate(text, (pct, yi), textcoords="offset points", xytext=(4, 0), va="center", fontsize=8)
    ax.set_yticks(y, [label for label, _ in items])
    ax.invert_yaxis()
    ax.set_xlim(0, 160 if label_time else 115)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.set_xlabel("Largest possible fraction of the peak (%)")
    ax.grid(axis="y", visible=False)
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color=PALETTE[0], label="compute-bound"), Patch(color=PALETTE[1], label="memory-bound")],
              loc="lower right", fontsize=8)
    return ax


def plot_measured_series(ax, series, *, legend_outside: bool = True):
    """Draw measured series on roofline axes drawn first by :func:`plot_roofline`.

    ``series``: ``{name: (intensities_flop_per_byte, flop_per_s)}``; a series of several points is drawn as a
    line with markers (e.g. one matmul shape swept over N, one kernel over k), a single point as a marker.
    Keeps the roofline's x limits and widens the y limits to show every point. Artists carry the gid
    ``"measured-series"``. Returns ``ax``.
    """
    if not hasattr(series, "items") or not series:
        raise ValueError(f"series must be a non-empty mapping of name -> (intensities, rates), got {series!r}")
    rates_all = []
    for i, (name, pair) in enumerate(series.items()):
        try:
            x, yv = (np.asarray(v, dtype=float).ravel() for v in pair)
        except (TypeError, ValueError):
            raise ValueError(f"series[{name!r}] must be (intensities, rates), got {pair!r}") from None
        if x.shape != yv.shape or x.size == 0 or not (np.all(x > 0) and np.all(yv > 0)):
            raise ValueError(f"series[{name!r}] needs equal-length positive intensities and rates, got {pair!r}")
        style = "-" if x.size > 1 else "none"
        ax.plot(x, yv, marker=POINT_MARKERS[i % len(POINT_MARKERS)], markersize=6, linestyle=style, linewidth=1.4,
                color=_POINT_COLORS[i % len(_POINT_COLORS)], label=str(name), gid="measured-series", zorder=3)
        rates_all.extend(yv.tolist())
    y_lo, y_hi = ax.get_ylim()
    ax.set_ylim(min(y_lo, min(rates_all) / 2), max(y_hi, max(rates_all) * 2))
    if legend_outside:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    else:
        ax.legend(loc="lower right", fontsize=8)
    return ax


def plot_ridge_point_groups(ax, rows, dtypes: Sequence[str] = ("fp16", "fp8", "fp4")):
    """Grouped horizontal bars: for each device (rows of :func:`gpuperf.roofline.ridge_rows`), its ridge point
    in each of ``dtypes`` (a missing unit leaves a gap). A log axis would hide the differences that matter
    here, so the axis is linear. Returns ``ax``."""
    rows = list(rows)
    if not rows or not all(isinstance(r, dict) and "name" in r for r in rows):
        raise ValueError(f"rows must be a non-empty list of ridge_rows dicts, got {rows!r}")
    missing = [d for d in dtypes if f"ridge_{d}" not in rows[0]]
    if missing or not dtypes:
        raise ValueError(f"dtypes must name ridge columns of rows, got {dtypes!r}")
    height = 0.8 / len(dtypes)
    y = np.arange(len(rows))
    top = 0.0
    for j, d in enumerate(dtypes):
        values = [r[f"ridge_{d}"] for r in rows]
        offsets = y - 0.4 + height * (j + 0.5)
        present = [(o, v) for o, v in zip(offsets, values) if v is not None]
        if present:
            ax.barh([o for o, _ in present], [v for _, v in present], height=height * 0.95,
                    color=PALETTE[j % len(PALETTE)], label=d, gid="ridge-bar")
            for o, v in present:
                ax.annotate(f"{v:.0f}", (v, o), textcoords="offset points", xytext=(3, 0), va="center", fontsize=7)
            top = max(top, max(v for _, v in present))
    ax.set_yticks(y, [r["name"] for r in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, top * 1.12)
    ax.set_xlabel("Ridge point of the matrix unit (FLOP/byte)")
    ax.grid(axis="y", visible=False)
    ax.legend(loc="upper right", fontsize=8)  # the top rows (old parts) have short bars
    return ax
