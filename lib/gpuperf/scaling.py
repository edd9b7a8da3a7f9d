"""Dennard scaling and what replaced it: scaling rules, processor trend data, and Dally's 1000x.

Scaling rules (Dennard et al. 1974, Table 1). Shrink every linear dimension of a transistor by a factor
``kappa`` > 1. Gate capacitance C falls as 1/kappa, the area of a transistor as 1/kappa**2 (so kappa**2 more
transistors fit in the same area). If the supply voltage V falls as kappa**-v and the clock frequency f rises
as kappa**f, the dynamic (switching) power of one transistor, P = C V**2 f, scales as
kappa**(-1 - 2v + f), and the power per unit area as kappa**(1 - 2v + f):

* classical (Dennard) scaling, v = 1, f = 1: power density constant, every transistor faster;
* post-Dennard, voltage flat (v = 0) and frequency still rising (f = 1): power density grows as kappa**2;
* post-Dennard with the clock held too (v = 0, f = 0): power density still grows as kappa.

Voltage stopped falling in the mid-2000s because the threshold voltage could not fall further without
leakage current (which grows exponentially as the threshold falls) taking over the power budget.

The processor trend data (transistors, clock, single-thread SPECint, typical power, logical cores from 1971 to
2021) are Karl Rupp's CC BY 4.0 collection, shipped as ``book/data/microprocessor_trends.csv`` (see its
``.LICENSE.md`` beside it).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from gpuperf.littles_law import _positive  # the one "finite number > 0" check that accepts float()-able values

#: The scaling rules :func:`scaling_factors` knows, as (voltage exponent v, frequency exponent f).
RULES: Mapping[str, tuple[float, float]] = {
    "dennard": (1.0, 1.0),
    "voltage_flat": (0.0, 1.0),
    "voltage_and_clock_flat": (0.0, 0.0),
}

#: One process generation shrinks linear dimensions by about sqrt(2): twice the transistors per area.
KAPPA_PER_GENERATION = math.sqrt(2.0)

TREND_FILE = "microprocessor_trends.csv"
TREND_QUANTITIES = ("transistors", "frequency", "single_thread_performance", "typical_power", "logical_cores")


@dataclass(frozen=True)
class ScalingFactors:
    """How each quantity changes when dimensions shrink by ``kappa`` (ratios new / old)."""

    kappa: float
    rule: str
    dimension: float  # gate length, width, oxide thickness, wire pitch
    voltage: float
    capacitance: float  # per transistor
    frequency: float
    transistors_per_area: float
    power_per_transistor: float  # dynamic: C V^2 f
    power_density: float  # power per unit area, at the same fraction of transistors switching

    @property
    def powered_fraction(self) -> float:
        """Fraction of the transistors that can switch at full speed within the old power per area
        ("dark silicon": what is left dark when power density grows)."""
        return min(1.0, 1.0 / self.power_density)


def _rule(rule: str) -> tuple[float, float]:
    if rule not in RULES:
        raise ValueError(f"rule must be one of {tuple(RULES)}, got {rule!r}")
    return RULES[rule]


def scaling_factors(kappa: float, rule: str = "dennard") -> ScalingFactors:
    """The ratios of :class:`ScalingFactors` for a linear shrink by ``kappa`` under ``rule`` (see module doc)."""
    k = _positive("kappa", kappa)
    v, f = _rule(rule)
    voltage = k ** (-v)
    capacitance = 1.0 / k
    frequency = k**f
    # C V^2 f and its product with kappa^2 transistors per area, as single powers of kappa (exact when the
    # exponent is 0: Dennard's constant power density)
    power = k ** (-1.0 - 2.0 * v + f)
    density = k**2
    return ScalingFactors(
        kappa=k,
        rule=rule,
        dimension=1.0 / k,
        voltage=voltage,
        capacitance=capacitance,
        frequency=frequency,
        transistors_per_area=density,
        power_per_transistor=power,
        power_density=k ** (1.0 - 2.0 * v + f),
    )


@dataclass(frozen=True)
class ScalingSeries:
    """Quantities after each of ``generations`` process generations, relative to generation 0."""

    rule: str
    kappa_per_generation: float
    generation: np.ndarray
    transistors_per_area: np.ndarray
    frequency: np.ndarray
    voltage: np.ndarray
    power_per_transistor: np.ndarray
    power_density: np.ndarray
    powered_fraction: np.ndarray


def scaling_series(rule: str = "dennard", generations: int = 10,
                   kappa_per_generation: float = KAPPA_PER_GENERATION) -> ScalingSeries:
    """Compound :func:`scaling_factors` over ``generations`` generations (``generations + 1`` points)."""
    if isinstance(generations, bool) or not isinstance(generations, (int, np.integer)) or generations < 0:
        raise ValueError(f"generations must be an integer >= 0, got {generations!r}")
    k = _positive("kappa", kappa_per_generation)
    _rule(rule)
    g = np.arange(generations + 1)
    step = [scaling_factors(k**i, rule) for i in g]
    return ScalingSeries(
        rule=rule,
        kappa_per_generation=k,
        generation=g,
        transistors_per_area=np.array([s.transistors_per_area for s in step]),
        frequency=np.array([s.frequency for s in step]),
        voltage=np.array([s.voltage for s in step]),
        power_per_transistor=np.array([s.power_per_transistor for s in step]),
        power_density=np.array([s.power_density for s in step]),
        powered_fraction=np.array([s.powered_fraction for s in step]),
    )


# --------------------------------------------------------------------------------------------------
# Processor trend data
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrendSeries:
    """One quantity of the processor trend data: points (year, value) in the source's unit."""

    quantity: str
    unit: str
    year: np.ndarray
    value: np.ndarray


def _trend_path(path: Path | None) -> Path:
    if path is not None:
        return Path(path)
    from gpuperf.records import DATA_DIR, PACKAGE_DATA_DIR

    for folder in (DATA_DIR, PACKAGE_DATA_DIR):
        if (folder / TREND_FILE).is_file():
            return folder / TREND_FILE
    raise ValueError(f"{TREND_FILE} not found in {DATA_DIR} or {PACKAGE_DATA_DIR}")


def load_trend_data(path: Path | None = None) -> dict[str, TrendSeries]:
    """Read the processor trend extract: one :class:`TrendSeries` per quantity of :data:`TREND_QUANTITIES`."""
    rows: dict[str, list[tuple[float, float, str]]] = {q: [] for q in TREND_QUANTITIES}
    with open(_trend_path(path), newline="") as f:
        for rec in csv.DictReader(f):
            if rec["quantity"] not in rows:
                raise ValueError(f"unknown quantity {rec['quantity']!r} in the trend data")
            rows[rec["quantity"]].append((float(rec["year"]), float(rec["value"]), rec["unit"]))
    out = {}
    for q, points in rows.items():
        points.sort()
        out[q] = TrendSeries(q, points[0][2], np.array([p[0] for p in points]), np.array([p[1] for p in points]))
    return out


@dataclass(frozen=True)
class ExponentialFit:
    """``value ~ 2 ** ((year - year_from) / doubling_time_years) * value_at_start`` fitted in log space."""

    year_from: float
    year_to: float
    doubling_time_years: float  # inf for a flat trend, negative for a falling one
    growth_per_year: float  # factor per year
    value_at_start: float
    n_points: int

    def predict(self, year) -> np.ndarray:
        return self.value_at_start * self.growth_per_year ** (np.asarray(year, dtype=float) - self.year_from)


def fit_exponential(series: TrendSeries, year_from: float, year_to: float) -> ExponentialFit:
    """Least-squares line through log2(value) against year for the points with year_from <= year < year_to."""
    if not year_from < year_to:
        raise ValueError(f"year_from must be < year_to, got {year_from!r} and {year_to!r}")
    sel = (series.year >= year_from) & (series.year < year_to) & (series.value > 0)
    n = int(sel.sum())
    if n < 2:
        raise ValueError(f"need at least 2 points of {series.quantity} in [{year_from}, {year_to}), got {n}")
    slope, intercept = np.polyfit(series.year[sel] - year_from, np.log2(series.value[sel]), 1)
    doubling = math.inf if slope == 0 else 1.0 / slope
    return ExponentialFit(float(year_from), float(year_to), float(doubling), float(2.0**slope),
                          float(2.0**intercept), n)


# --------------------------------------------------------------------------------------------------
# Dally's decomposition of the ~1000x
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GainFactor:
    source: str  # where the gain came from
    factor: float
    example: str


#: The factors of the ~1000x gain in single-GPU AI inference performance over about ten years (Kepler to
#: Hopper), as given on one slide of Bill Dally's Hot Chips 2023 keynote and reported by IEEE Spectrum
#: (spectrum.ieee.org/nvidia-gpu, section headings) and NVIDIA's blog of 2023-08-29 (16x, 2.5x, 2x).
DALLY_HOTCHIPS_2023 = (
    GainFactor("number representation", 16.0, "FP32 on Kepler to FP16, INT8 and FP8 on later GPUs"),
    GainFactor("complex instructions", 12.5, "dot-product and matrix instructions (DP4A, HMMA, IMMA)"),
    GainFactor("process technology", 2.5, "28 nm to 5 nm over the decade"),
    GainFactor("sparsity", 2.0, "2:4 structured sparsity, from Ampere on"),
)


def combined_gain(factors: Sequence[GainFactor] = DALLY_HOTCHIPS_2023) -> float:
    """Product of the factors (independent multiplicative gains)."""
    return float(np.prod([f.factor for f in factors]))
