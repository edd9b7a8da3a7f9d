"""Figures for the number-formats chapter: bit layouts, value grids, spacing against magnitude, swamping
curves, dot-product error against length, and quantization error by scheme.

Every function draws on a given matplotlib ``Axes`` and returns it; the numbers come from
:mod:`gpuperf.formats` and :mod:`gpuperf.accumulation`. Artists carry a ``gid`` (e.g. ``"spacing-bf16"``)
so that tests and readers can find them.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
from matplotlib.patches import Rectangle

from gpuperf import formats
from gpuperf.accumulation import DotErrorSweep, SwampingRun, swamping_stall_value
from gpuperf.plotting.style import PALETTE

#: Colours of the three fields in :func:`plot_bit_layouts` (sign, exponent, mantissa).
FIELD_COLOURS = {"sign": PALETTE[1], "exponent": PALETTE[2], "mantissa": PALETTE[0]}


def _check_formats(fmts, arg: str = "fmts") -> list[formats.FloatFormat]:
    if isinstance(fmts, str) or not len(fmts):
        raise ValueError(f"{arg} must be a non-empty sequence of format names, got {fmts!r}")
    try:
        return [formats.get_format(f) for f in fmts]
    except ValueError:
        raise ValueError(f"{arg} must name formats of gpuperf.formats ({list(formats.FORMATS)}), got {fmts!r}") from None


# --------------------------------------------------------------------------------------------------
# Layouts and grids
# --------------------------------------------------------------------------------------------------

def plot_bit_layouts(ax, fmts: Sequence[str] = ("fp32", "tf32", "bf16", "fp16", "fp8_e4m3fn", "fp8_e5m2",
                                                 "fp6_e3m2", "fp6_e2m3", "fp4_e2m1")):
    """One row per format: a box per bit, coloured by field (sign, exponent, mantissa), most significant
    bit on the left. Each field's box carries its width (``E8``, ``M7``)."""
    fs = _check_formats(fmts)
    for row, f in enumerate(fs):
        y = len(fs) - 1 - row
        start = 0
        for field, width in (("sign", int(f.signed)), ("exponent", f.exponent_bits), ("mantissa", f.mantissa_bits)):
            if width == 0:
                continue
            for bit in range(width):
                ax.add_patch(Rectangle((start + bit, y - 0.35), 1, 0.7, facecolor=FIELD_COLOURS[field],
                                       edgecolor="white", linewidth=0.8, gid=f"bit-{f.name}-{field}"))
            if width > 1 or field != "sign":
                ax.text(start + width / 2, y, f"{field[0].upper()}{width}", ha="center", va="center",
                        color="white", fontsize=8, fontweight="bold")
            start += width
        ax.text(start + 0.6, y, f"{f.total_bits} bits", va="center", fontsize=8)
    widest = max(f.total_bits for f in fs)
    ax.set_xlim(0, widest + 5)
    ax.set_ylim(-0.7, len(fs) - 0.3)
    ax.set_yticks(range(len(fs)))
    ax.set_yticklabels([f.name for f in reversed(fs)])
    ax.set_xlabel("bit position, most significant first (bits)")
    ax.grid(False)
    handles = [Rectangle((0, 0), 1, 1, facecolor=c) for c in FIELD_COLOURS.values()]
    ax.legend(handles, list(FIELD_COLOURS), loc="lower right", ncol=3)
    return ax


def plot_value_grid(ax, grids: Mapping[str, Sequence[float]], *, xlabel: str = "value"):
    """Each entry of ``grids`` (label -> values) as a row of tick marks on a shared linear axis, to compare
    where two number systems put their values (e.g. FP4 E2M1 against INT4 with the same largest value)."""
    if not isinstance(grids, Mapping) or not grids:
        raise ValueError(f"grids must be a non-empty mapping of label -> values, got {grids!r}")
    labels = list(grids)
    for row, label in enumerate(labels):
        values = np.asarray(grids[label], dtype=np.float64)
        if values.ndim != 1 or not values.size or not np.all(np.isfinite(values)):
            raise ValueError(f"grids[{label!r}] must be a non-empty 1-D sequence of finite values")
        y = len(labels) - 1 - row
        ax.vlines(values, y - 0.3, y + 0.3, color=PALETTE[row % len(PALETTE)], linewidth=1.5, gid=f"grid-{label}")
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(list(reversed(labels)))
    ax.set_ylim(-0.7, len(labels) - 0.3)
    ax.set_xlabel(xlabel)
    ax.grid(axis="y", visible=False)
    return ax


# --------------------------------------------------------------------------------------------------
# Spacing against magnitude
# --------------------------------------------------------------------------------------------------

def spacing_curve(fmt, relative: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Exact points of the spacing of ``fmt``'s positive values against ``|x|``, for a log-log plot.

    Absolute (``relative=False``): a staircase, to be drawn with ``drawstyle="steps-post"``: the
    subnormal gap from the smallest subnormal up to the smallest normal, then ``2^(e - M)`` on each binade
    ``[2^e, 2^(e+1))``, ending at the largest value. Relative (spacing / ``|x|``): a sawtooth, exact when
    joined by straight lines on log-log axes (``c / x`` is a straight line there): ``2^-M`` at the start
    of each binade falling to ``2^-(M+1)`` at its end, and ``min_subnormal / x`` below the normal range.
    """
    f = formats.get_format(fmt)
    M = f.mantissa_bits
    edges = [math.ldexp(1.0, e) for e in range(f.min_exponent, f.max_exponent + 1)]
    gaps = [math.ldexp(1.0, e - M) for e in range(f.min_exponent, f.max_exponent + 1)]
    if f.max_value > edges[-1]:
        edges.append(f.max_value)  # the top binade, cut at the largest value
    else:
        gaps.pop()  # the top binade holds one value only (E8M0): the curve ends at it
    if not relative:
        x = ([f.min_subnormal] if f.has_subnormals and M > 0 else []) + edges
        y = ([f.min_subnormal] if f.has_subnormals and M > 0 else []) + gaps + [gaps[-1]]
        return np.array(x), np.array(y)
    xs, ys = [], []
    if f.has_subnormals and M > 0:
        xs += [f.min_subnormal, f.min_normal]
        ys += [1.0, f.min_subnormal / f.min_normal]
    for lo, hi, gap in zip(edges[:-1], edges[1:], gaps):
        xs += [lo, hi]
        ys += [gap / lo, gap / hi]
    return np.array(xs), np.array(ys)


def _clip(x: np.ndarray, y: np.ndarray, lo: float, hi: float, steps: bool) -> tuple[np.ndarray, np.ndarray]:
    """The part of a curve with ``lo <= x <= hi``, with points added exactly at ``lo`` and ``hi`` where the
    curve crosses them: a staircase keeps its level, a sawtooth (straight on log-log) is interpolated in
    log space."""
    if lo <= x[0] and x[-1] <= hi:
        return x, y
    if x[-1] < lo or x[0] > hi:
        return x[:0], y[:0]

    def at(v: float) -> float:
        j = int(np.searchsorted(x, v, side="right")) - 1
        j = min(max(j, 0), len(x) - 2)
        if steps:
            return float(y[j])
        t = (math.log(v) - math.log(x[j])) / (math.log(x[j + 1]) - math.log(x[j]))
        return float(math.exp(math.log(y[j]) + t * (math.log(y[j + 1]) - math.log(y[j]))))

    keep = (x >= lo) & (x <= hi)
    # A sawtooth has two points at each binade edge; take the one on the inside of the clipped range.
    xs, ys = list(x[keep]), list(y[keep])
    if x[0] < lo:
        xs.insert(0, lo)
        ys.insert(0, at(lo))
    if x[-1] > hi:
        xs.append(hi)
        ys.append(at(np.nextafter(hi, 0)) if not steps else at(hi))
    return np.array(xs), np.array(ys)


def plot_spacing(ax, fmts: Sequence[str] = ("fp32", "bf16", "fp16", "fp8_e4m3fn", "fp8_e5m2", "fp4_e2m1"),
                 relative: bool = False, x_range: tuple[float, float] | None = None):
    """Spacing between neighbouring values (ulp) against ``|x|`` on log-log axes, one line per format.

    With ``relative=True`` the spacing is divided by ``|x|``: a band per format whose height is its
    precision and whose length is its range. ``x_range`` limits the x axis (e.g. ``(1e-8, 1e6)``).
    """
    fs = _check_formats(fmts)
    lo, hi = 0.0, math.inf
    if x_range is not None:
        lo, hi = (float(v) for v in x_range)
        if not 0 < lo < hi < math.inf:
            raise ValueError(f"x_range must satisfy 0 < low < high, got {x_range!r}")
    for i, f in enumerate(fs):
        x, y = _clip(*spacing_curve(f, relative), lo, hi, steps=not relative)
        if x.size:
            ax.plot(x, y, drawstyle="default" if relative else "steps-post", color=PALETTE[i % len(PALETTE)],
                    lw=1.4, label=f.name, gid=f"spacing-{f.name}")
    ax.set_xscale("log", base=10)
    ax.set_yscale("log", base=10)
    if x_range is not None:
        ax.set_xlim(lo, hi)
    ax.set_xlabel("|x| (value)")
    ax.set_ylabel("relative spacing, ulp / |x|" if relative else "spacing (ulp) at |x|")
    # Below the axes: the curves of a format-wide plot leave no empty corner.
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3)
    return ax


# --------------------------------------------------------------------------------------------------
# Accumulation
# --------------------------------------------------------------------------------------------------

def plot_swamping(ax, runs: Sequence[SwampingRun], *, mark_stalls: bool = True):
    """The running sum after each addition for each :class:`~gpuperf.accumulation.SwampingRun`, the exact
    sum (dashed) and, with ``mark_stalls``, each run's closed-form stall value (dotted). Log y axis."""
    if isinstance(runs, SwampingRun) or not len(runs) or not all(isinstance(r, SwampingRun) for r in runs):
        raise ValueError(f"runs must be a non-empty sequence of SwampingRun, got {runs!r}")
    increments = sorted({r.increment for r in runs})
    if len(increments) > 1:  # one "exact" line serves them all
        raise ValueError(f"runs must all add the same increment, got {increments}")
    n = max(r.n_additions for r in runs)
    steps = np.arange(1, n + 1)
    exact_per_step = runs[0].exact / runs[0].n_additions
    ax.plot(steps, steps * exact_per_step, ls="--", color="0.2", lw=1.2, label="exact", gid="exact", zorder=3)
    for i, r in enumerate(runs):
        colour = PALETTE[i % len(PALETTE)]
        ax.plot(np.arange(1, r.n_additions + 1), r.partial_sums[1:], color=colour,
                label=f"{r.accumulator} accumulator: {r.final:.6g}", gid=f"swamping-{r.accumulator}")
        stall = swamping_stall_value(r.increment, r.accumulator)
        if mark_stalls and math.isfinite(stall) and stall <= r.partial_sums.max() * 1.0001 and stall > 0:
            ax.axhline(stall, ls=":", lw=1, color=colour, gid=f"stall-{r.accumulator}")
    ax.set_yscale("log")
    ax.set_xlabel("additions")
    ax.set_ylabel("running sum")
    ax.legend(loc="lower right")
    return ax


def plot_dot_error(ax, sweep: DotErrorSweep):
    """Median relative error against dot-product length, one line per (accumulator, order), log-log.
    Zero errors (exact results) are left out of the log axis."""
    if not isinstance(sweep, DotErrorSweep):
        raise ValueError(f"sweep must be a DotErrorSweep, got {type(sweep).__name__}")
    lengths = np.array(sweep.lengths, dtype=np.float64)
    for i, ((accumulator, order), errors) in enumerate(sweep.relative_error.items()):
        y = np.where(np.asarray(errors) > 0, errors, np.nan)
        ax.plot(lengths, y, marker="osD^v"[i % 5], color=PALETTE[i % len(PALETTE)],
                label=f"{accumulator} accumulator, {order}", gid=f"dot-{accumulator}-{order}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("dot-product length n (elements)")
    ax.set_ylabel("relative error |computed − exact| / |exact|")
    ax.set_title(f"{sweep.input_format} inputs, {sweep.distribution} data, median of {sweep.n_trials} trials",
                 fontsize=10)
    ax.legend(loc="best")
    return ax


# --------------------------------------------------------------------------------------------------
# Quantization error
# --------------------------------------------------------------------------------------------------

def plot_quantization_errors(ax, errors: Mapping[str, Mapping[str, float]], *,
                             ylabel: str = "relative error ‖x − x̂‖ / ‖x‖ (%)"):
    """A dot plot on a linear percent axis: ``errors[group][scheme]`` (e.g. group = kind of data or element
    format, scheme = format or scaling). One column of dots per group, one marker and colour per scheme,
    each dot labelled with its value. Dots, not bars: a bar's length would suggest a zero the data do not
    have, and on a log axis it would mean nothing at all. Every group must list the same schemes; errors
    must be positive and finite. Artists carry the gid ``dots-<scheme>``."""
    if not isinstance(errors, Mapping) or not errors:
        raise ValueError(f"errors must be a non-empty mapping group -> {{scheme: error}}, got {errors!r}")
    groups = list(errors)
    schemes = list(errors[groups[0]])
    for g in groups:
        if list(errors[g]) != schemes:
            raise ValueError(f"errors[{g!r}] must list the schemes {schemes}, got {list(errors[g])}")
        for s, v in errors[g].items():
            if not (isinstance(v, (int, float, np.floating)) and 0 < v < math.inf):
                raise ValueError(f"errors[{g!r}][{s!r}] must be positive and finite, got {v!r}")
    x = np.arange(len(groups))
    offset = 0.25
    top = 0.0
    for i, s in enumerate(schemes):
        xs = x + (i - (len(schemes) - 1) / 2) * offset
        values = [100 * errors[g][s] for g in groups]
        ax.plot(xs, values, linestyle="none", marker="osD^v"[i % 5], markersize=8, label=s,
                color=PALETTE[i % len(PALETTE)], gid=f"dots-{s}")
        for xi, v in zip(xs, values):
            ax.annotate(f"{v:.2g}", (xi, v), textcoords="offset points", xytext=(6, -3), fontsize=8)
        top = max(top, max(values))
    ax.set_xticks(x)
    ax.set_xticklabels(groups)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylim(0, top * 1.15)
    ax.set_ylabel(ylabel)
    ax.legend(loc="best")
    return ax
