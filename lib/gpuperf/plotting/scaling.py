"""Figures of chapter 01: scaling rules, processor trends, Dally's factors."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from gpuperf.plotting.style import PALETTE
from gpuperf.scaling import GainFactor, ScalingSeries, TrendSeries

RULE_LABELS = {
    "dennard": "Dennard: V and dimensions / $\\kappa$, f x $\\kappa$",
    "voltage_flat": "voltage flat, f x $\\kappa$",
    "voltage_and_clock_flat": "voltage and clock flat",
}

TREND_LABELS = {
    "transistors": "transistors (thousands)",
    "single_thread_performance": "single-thread perf. (SPECint x 1000)",
    "frequency": "clock (MHz)",
    "typical_power": "typical power (W)",
    "logical_cores": "logical cores",
}


def plot_scaling_rules(ax, series: Sequence[ScalingSeries], quantity: str = "power_density") -> None:
    """One line per rule: ``quantity`` (relative to generation 0) against process generation, log y."""
    for i, s in enumerate(series):
        ax.plot(s.generation, getattr(s, quantity), marker="o", ms=4, color=PALETTE[i % len(PALETTE)],
                label=RULE_LABELS.get(s.rule, s.rule))
    ax.set_yscale("log", base=2)
    ax.set_xlabel("process generation (x2 transistors per area each)")
    ax.set_ylabel(quantity.replace("_", " ") + " (relative)")
    ax.legend(loc="upper left")


def plot_trends(ax, data: Mapping[str, TrendSeries], quantities: Sequence[str] | None = None,
                mark_year: float | None = 2005.0) -> None:
    """The processor trend data on one log axis, one colour per quantity (the CC BY 4.0 extract)."""
    quantities = list(quantities or TREND_LABELS)
    for i, q in enumerate(quantities):
        s = data[q]
        ax.scatter(s.year, s.value, s=10, color=PALETTE[i % len(PALETTE)], label=TREND_LABELS.get(q, q),
                   alpha=0.85)
    ax.set_yscale("log")
    ax.set_xlabel("year")
    ax.set_ylabel("value (unit in the legend)")
    if mark_year is not None:
        ax.axvline(mark_year, color="0.4", ls=":", lw=1.2)
        ax.text(mark_year + 0.5, ax.get_ylim()[0] * 3, "end of Dennard\nscaling", fontsize=8, color="0.3")
    ax.legend(loc="upper left", fontsize=8, markerscale=1.5)
    ax.text(1.0, -0.16, "Data: K. Rupp, M. Horowitz et al., CC BY 4.0", transform=ax.transAxes,
            ha="right", fontsize=7, color="0.4")


def plot_fit(ax, fit, color: str = "0.2", label: str | None = None) -> None:
    """Draw an :class:`gpuperf.scaling.ExponentialFit` over its year range."""
    years = np.linspace(fit.year_from, fit.year_to, 50)
    ax.plot(years, fit.predict(years), color=color, lw=1.5, ls="--", label=label)


def plot_gain_factors(ax, factors: Sequence[GainFactor]) -> None:
    """Dally's decomposition as a staircase of cumulative gain on a log axis, each step labelled."""
    cumulative = np.cumprod([f.factor for f in factors])
    lows = np.concatenate([[1.0], cumulative[:-1]])
    for i, (f, lo, hi) in enumerate(zip(factors, lows, cumulative)):
        ax.bar(i, hi - lo, bottom=lo, color=PALETTE[i % len(PALETTE)], width=0.6)
        ax.text(i, hi * 1.15, f"x{f.factor:g}", ha="center", fontsize=9)
    ax.set_yscale("log")
    ax.set_xticks(range(len(factors)), [f.source.replace(" ", "\n", 1) for f in factors], fontsize=8)
    ax.set_ylabel("cumulative gain (x)")
    ax.set_ylim(0.8, cumulative[-1] * 3)
