"""Adding numbers in low precision: swamping, summation order, non-associativity, overflow, integer limits.

The model
---------
An accumulator of format ``F`` (``"fp32"``, ``"bf16"``, ``"fp16"``, ... any name in
:data:`gpuperf.formats.FORMATS` except the scale-only ``"e8m0"``, or ``"fp64"``) only ever holds values of
``F``. Every operation computes its exact result and rounds it to ``F`` with round-to-nearest-even, as
IEEE 754-2019 §4.3.1 prescribes for ``+``, ``*``, ``/`` and ``sqrt``. We emulate one such operation by
computing it in float64 and rounding the float64 result to ``F``. That is two roundings, and double
rounding is not harmless in general (``1 + 2**-11 + 2**-40`` goes to 1 in FP16 through float32, to
``1 + 2**-10`` directly). It gives the correctly rounded result here because of three facts:

* **Operands in F, p <= 24.** For ``+ - * / sqrt`` of operands that are values of a format with ``p``
  significand bits, rounding first to a format with at least ``2p + 2`` bits is innocuous (S. A.
  Figueroa, "When is double rounding innocuous?", ACM SIGNUM Newsletter 30(3), 1995; with underflow
  included, P. Roux, J. Formalized Reasoning 7(1), 2014). float64 has 53 >= 2 * 24 + 2 bits, which covers
  fp32 and everything narrower. So every operand is first rounded to ``F``: the terms of a sum, the
  inputs of RMSNorm (a value is converted when it is loaded into the compute format's registers).
* **Products are exact.** A product of two values with at most 26 significand bits is exact in float64
  (and never underflows there), so rounding it to ``F`` is a single rounding, whatever the operands' format.
* **Dividing by a count.** ``s / n`` for ``s`` in ``F`` and an integer ``n < 2**(53 - p)`` is innocuous too:
  double rounding can only fail when the float64 quotient lands on a midpoint ``m`` of ``F`` that the exact
  quotient misses, but ``s - m n`` is a non-zero multiple of half an ulp of ``F`` at ``m``, so the quotient
  misses ``m`` by more than half a float64 ulp.

For ``fp64`` the float64 operation is itself the correctly rounded one. What is rounded where:

* **Terms.** Values to be summed are first rounded to ``F``.
* **Products.** In a dot product the inputs are first rounded to ``input_format``; each exact product is
  then rounded to ``F`` and added, with a second rounding: a separate multiply and add, not a fused
  multiply-add. With an fp32 accumulator and inputs of at most 12 significand bits (bf16, fp16, fp8, ...)
  the product is already exact in fp32 unless it leaves fp32's range (bf16 products can), so the separate
  and the fused models agree.
* **Orders.** ``"sequential"``: ``acc = round(acc + t_i)`` left to right, from ``acc = 0``. ``"pairwise"``: a
  balanced binary tree: neighbours ``(t_0 + t_1), (t_2 + t_3), ...`` are added and rounded, level by level,
  an odd element at the end of a level passing up unchanged. Every term then passes through at most
  ``ceil(log2 n)`` roundings instead of up to ``n - 1``.

This is the IEEE reference a kernel's arithmetic is measured against, not a bit-exact model of a GPU's
matrix units: those add several products at once, with their own alignment, truncation and
normalisation of partial sums (M. Fasi, N. J. Higham, M. Mikaitis, S. Pranesh, "Numerical behavior of
NVIDIA tensor cores", PeerJ Computer Science 7:e330, 2021).

fp64 and fp32 round with numpy casts (correctly rounded), fp16 with numpy's ``float16`` cast (also correctly
rounded), every other format with :func:`gpuperf.formats.round_to_format`. Results are plain float64 numbers
and arrays holding the format's values.

Sources: swamping, non-associativity and the FP16 overflow of RMSNorm follow lecture ``002`` §7.4-7.5; the
error bounds are those of N. J. Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM
2002, §4.2 (recursive summation, bound (4.4)) and §4.3 (pairwise summation, bound (4.6)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from gpuperf import formats as _formats

#: Summation orders understood by :func:`sum_values` and :func:`dot`.
ORDERS = ("sequential", "pairwise")

#: Accumulator formats: float64 plus every floating-point format of :mod:`gpuperf.formats` that has a
#: sign and a mantissa (the scale-only E8M0 cannot hold a sum).
ACCUMULATORS = ("fp64",) + tuple(name for name in _formats.FORMATS if name != "e8m0")


# --------------------------------------------------------------------------------------------------
# Rounding to a format and facts about a format
# --------------------------------------------------------------------------------------------------

def _check_accumulator(accumulator: str, argument: str = "accumulator") -> str:
    if accumulator not in ACCUMULATORS:
        raise ValueError(f"{argument} must be one of {ACCUMULATORS}, got {accumulator!r}")
    return accumulator


def _check_order(order: str) -> str:
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    return order


def _rounder(accumulator: str) -> Callable[[np.ndarray], np.ndarray]:
    """A function rounding a float64 array to ``accumulator``'s values (returned as float64)."""
    if accumulator == "fp64":
        return lambda x: np.asarray(x, dtype=np.float64)
    if accumulator == "fp32":
        return lambda x: np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)
    if accumulator == "fp16":
        return lambda x: np.asarray(x, dtype=np.float64).astype(np.float16).astype(np.float64)
    return lambda x: np.asarray(_formats.round_to_format(np.asarray(x, dtype=np.float64), accumulator),
                                dtype=np.float64)


def round_to_accumulator(x, accumulator: str) -> np.ndarray:
    """``x`` rounded (nearest, ties to even) to the accumulator format, as a float64 array.

    Overflow follows the format: IEEE formats (fp32, bf16, fp16, ...) give ``inf``.
    """
    _check_accumulator(accumulator)
    with np.errstate(over="ignore"):
        return _rounder(accumulator)(np.asarray(x, dtype=np.float64))


def mantissa_bits(fmt: str) -> int:
    """Stored mantissa (fraction) bits of ``fmt``: 52 for fp64, 23 for fp32, 7 for bf16, 10 for fp16."""
    _check_accumulator(fmt, "fmt")
    if fmt == "fp64":
        return int(np.finfo(np.float64).nmant)
    return int(_formats.get_format(fmt).mantissa_bits)


def max_finite(fmt: str) -> float:
    """Largest finite value of ``fmt``."""
    _check_accumulator(fmt, "fmt")
    if fmt == "fp64":
        return float(np.finfo(np.float64).max)
    return float(_formats.get_format(fmt).max_finite)


def unit_roundoff(fmt: str) -> float:
    """``u = 2**-(m + 1)``: the largest relative error of one rounding to nearest in ``fmt`` (normal range)."""
    return 2.0 ** -(mantissa_bits(fmt) + 1)


# --------------------------------------------------------------------------------------------------
# Sums in a chosen order
# --------------------------------------------------------------------------------------------------

def _as_terms(values, argument: str = "values") -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 0:
        raise ValueError(f"{argument} must have at least one axis, got a scalar {values!r}")
    if np.isnan(arr).any():
        raise ValueError(f"{argument} must not contain NaN, got {int(np.isnan(arr).sum())} NaN entries")
    return arr


def _sequential(terms: np.ndarray, rnd) -> np.ndarray:
    acc = np.zeros(terms.shape[:-1])
    for i in range(terms.shape[-1]):
        acc = rnd(acc + terms[..., i])
    return acc


def _pairwise(terms: np.ndarray, rnd) -> np.ndarray:
    level = terms
    if level.shape[-1] == 0:
        return np.zeros(terms.shape[:-1])
    while level.shape[-1] > 1:
        n_pairs = level.shape[-1] // 2
        paired = rnd(level[..., 0:2 * n_pairs:2] + level[..., 1:2 * n_pairs:2])
        if level.shape[-1] % 2:
            paired = np.concatenate([paired, level[..., -1:]], axis=-1)
        level = paired
    # A single term still goes through the accumulator (0 + t).
    return rnd(level[..., 0] + 0.0)


def sum_values(values, accumulator: str = "fp32", order: str = "sequential") -> np.ndarray | float:
    """Sum ``values`` along the last axis in an ``accumulator``-format accumulator.

    The terms are rounded to ``accumulator`` first; every addition is rounded (see the module docstring).
    Leading axes are independent sums, computed together. Returns a float for a 1-D input, else an array
    of the leading shape. ``order`` is ``"sequential"`` or ``"pairwise"``.
    """
    _check_accumulator(accumulator)
    _check_order(order)
    terms = _as_terms(values)
    rnd = _rounder(accumulator)
    with np.errstate(over="ignore", invalid="ignore"):
        terms = rnd(terms)
        out = _sequential(terms, rnd) if order == "sequential" else _pairwise(terms, rnd)
    return float(out) if np.ndim(out) == 0 else out


def running_sum(values, accumulator: str = "fp32") -> np.ndarray:
    """Partial sums of a sequential accumulation: entry ``i`` is the accumulator after ``i`` additions.

    Shape ``(..., n + 1)``; entry 0 is 0. The last entry equals ``sum_values(values, accumulator)``.
    """
    _check_accumulator(accumulator)
    terms = _as_terms(values)
    rnd = _rounder(accumulator)
    out = np.zeros(terms.shape[:-1] + (terms.shape[-1] + 1,))
    with np.errstate(over="ignore", invalid="ignore"):
        terms = rnd(terms)
        acc = out[..., 0]
        for i in range(terms.shape[-1]):
            acc = rnd(acc + terms[..., i])
            out[..., i + 1] = acc
    return out


def stochastic_round(x, fmt: str, rng) -> np.ndarray:
    """Round each of ``x`` (finite, within ``fmt``'s range) to one of its two neighbours in ``fmt``, the
    upper one with probability equal to the fraction of the gap ``x`` has covered: ``E[result] = x``.

    Representable values are returned unchanged. ``fmt``: a format of :mod:`gpuperf.formats` (not fp64);
    ``rng``: a ``numpy.random.Generator``. Returns float64 of ``x``'s shape. (Gupta et al. 2015.)
    """
    _check_accumulator(fmt, "fmt")
    if fmt == "fp64":
        raise ValueError("fmt must be narrower than fp64, got 'fp64'")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    values = np.asarray(x, dtype=np.float64)
    fmt_obj = _formats.get_format(fmt)
    if not np.all(np.isfinite(values)) or np.any(np.abs(values) > fmt_obj.max_value):
        raise ValueError(f"x must be finite and within {fmt}'s range (|x| <= {fmt_obj.max_value:g})")
    magnitude = np.abs(values)
    gap = np.asarray(_formats.spacing(magnitude, fmt_obj), dtype=np.float64)
    lower = np.floor(magnitude / gap) * gap  # exact: the grid of the binade is the multiples of gap
    fraction = (magnitude - lower) / gap
    up = rng.random(values.shape) < fraction
    return np.copysign(np.where(up, lower + gap, lower), values)


def sum_values_stochastic(values, accumulator: str, seed: int = 0) -> float:
    """Sequential sum of a 1-D ``values`` where every addition is computed exactly and then stochastically
    rounded to ``accumulator`` (:func:`stochastic_round`); the terms are taken as given."""
    terms = _as_terms(values)
    if terms.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {terms.shape}")
    rng = np.random.default_rng(seed)
    total = 0.0
    for t in terms:
        total = float(stochastic_round(total + float(t), accumulator, rng))
    return total


def exact_sum(values) -> float:
    """The sum of ``values`` (a 1-D sequence of floats), correctly rounded to float64 (``math.fsum``)."""
    terms = _as_terms(values)
    if terms.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {terms.shape}")
    return math.fsum(terms.tolist())


def summation_error_bound(values, accumulator: str = "fp32", order: str = "sequential") -> float:
    """Worst-case absolute error of :func:`sum_values` on these terms (Higham 2002, (4.4) and (4.6)).

    ``gamma_k * sum |t_i|`` with ``gamma_k = k u / (1 - k u)``, ``u`` the unit roundoff, and ``k = n - 1``
    roundings for the sequential order, ``k = ceil(log2 n)`` for the pairwise tree. The terms ``t_i`` are
    the values after rounding to ``accumulator``. Returns ``inf`` when ``k u >= 1`` (the bound says
    nothing). Valid when nothing overflows or underflows.
    """
    _check_accumulator(accumulator)
    _check_order(order)
    terms = round_to_accumulator(_as_terms(values), accumulator)
    if terms.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {terms.shape}")
    return _gamma_bound(_roundings_per_term(terms.size, order), accumulator, terms)


def _roundings_per_term(n: int, order: str) -> int:
    """Most roundings any term goes through in a sum of ``n`` terms."""
    if order == "sequential":
        return max(n - 1, 0)
    return math.ceil(math.log2(n)) if n > 1 else 0


def _gamma_bound(k: int, accumulator: str, terms: np.ndarray) -> float:
    """``gamma_k * sum |terms|`` with ``gamma_k = k u / (1 - k u)`` (Higham 2002, Lemma 3.1); ``inf`` if ``k u >= 1``."""
    ku = k * unit_roundoff(accumulator)
    if ku >= 1:
        return math.inf
    return ku / (1 - ku) * math.fsum(np.abs(terms).tolist())


# --------------------------------------------------------------------------------------------------
# Swamping
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SwampingRun:
    """Adding ``increment`` to an accumulator ``n_additions`` times, starting from 0.

    ``increment_stored`` is the increment rounded to the accumulator format (0.01 is not exact in binary);
    ``partial_sums[i]`` is the accumulator after ``i`` additions (length ``n_additions + 1``).
    ``exact`` is ``n_additions * increment`` in exact arithmetic (rounded to float64).
    """

    accumulator: str
    increment: float
    increment_stored: float
    n_additions: int
    partial_sums: np.ndarray
    exact: float

    @property
    def final(self) -> float:
        """The accumulator after the last addition."""
        return float(self.partial_sums[-1])

    @property
    def relative_error(self) -> float:
        """``|final - exact| / |exact|``."""
        return abs(self.final - self.exact) / abs(self.exact)

    @property
    def stall_step(self) -> int | None:
        """The first step ``i`` after which the accumulator never changes again, or ``None`` if it moved
        on the last addition."""
        sums = self.partial_sums
        if sums[-1] != sums[-2]:
            return None
        changed = np.nonzero(sums[1:] != sums[:-1])[0]
        return int(changed[-1] + 1) if changed.size else 0


def swamping(increment: float = 0.01, n_additions: int = 10_000, accumulator: str = "fp16") -> SwampingRun:
    """Repeatedly add a small ``increment`` into an ``accumulator``-format sum (lecture 002 §7.4 (a)).

    Once the running sum is large enough that half its spacing exceeds the increment, ``sum + increment``
    rounds back to ``sum``: the increment is swamped and the sum stops growing (see
    :func:`swamping_stall_value`).
    """
    _check_accumulator(accumulator)
    if not (isinstance(n_additions, (int, np.integer)) and not isinstance(n_additions, bool)) or n_additions < 1:
        raise ValueError(f"n_additions must be a positive int, got {n_additions!r}")
    if not (math.isfinite(increment) and increment > 0):
        raise ValueError(f"increment must be a finite positive number, got {increment!r}")
    sums = running_sum(np.full(int(n_additions), float(increment)), accumulator)
    stored = float(round_to_accumulator(increment, accumulator))
    exact = float(n_additions) * float(increment)  # one rounding of the exact product (n_additions < 2**53)
    return SwampingRun(accumulator, float(increment), stored, int(n_additions), sums, exact)


def swamping_stall_value(increment: float, accumulator: str) -> float:
    """Closed form: the value at which repeatedly adding ``increment`` from 0 stops changing the sum.

    Let ``d`` be the increment rounded to the format and ``m`` its mantissa bits. In the binade
    ``[2**e, 2**(e+1))`` the spacing is ``2**(e - m)``. While ``d`` exceeds half the spacing, each addition
    moves the sum up by at least one spacing; in the first binade where ``d <= 2**(e - m - 1)``, ``sum + d``
    rounds back down (a tie goes to the even ``2**e``), and the sum, which arrives exactly at ``2**e``
    (it cannot jump past it), stays there. So the stall value is ``2**e`` with
    ``e = m + 1 + ceil(log2 d)``. Returns 0.0 when ``d`` rounds to 0. When that power of two exceeds the
    format's largest value the sum overflows first: ``inf`` for IEEE formats, the largest value for
    formats that saturate (E4M3FN, FP6, FP4). Assumes ``2**e`` is a normal number.
    """
    _check_accumulator(accumulator)
    if not (math.isfinite(increment) and increment > 0):
        raise ValueError(f"increment must be a finite positive number, got {increment!r}")
    d = float(round_to_accumulator(increment, accumulator))
    if d == 0.0:
        return 0.0
    e = mantissa_bits(accumulator) + 1 + math.ceil(math.log2(d))
    stall = math.ldexp(1.0, e)
    if stall <= max_finite(accumulator):
        return stall
    saturates = accumulator != "fp64" and _formats.get_format(accumulator).default_overflow == "saturate"
    return max_finite(accumulator) if saturates else math.inf


# --------------------------------------------------------------------------------------------------
# Dot products
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DotResult:
    """One dot product computed in a low-precision accumulator, next to the exact value.

    ``exact`` is the exact dot product of the rounded inputs, correctly rounded to float64;
    ``magnitude`` is ``sum |x_i y_i|``, the scale the error bounds are stated against. ``error_bound``
    bounds ``|value - exact|``: ``gamma_k * magnitude`` with ``k`` the roundings a product goes through,
    ``n - 1`` additions (sequential) or ``ceil(log2 n)`` (pairwise), plus one when the products are not
    exact in the accumulator and are rounded to it first (Higham 2002, §3.1 and §4.3). Valid when
    nothing overflows or underflows.
    """

    n: int
    input_format: str
    accumulator: str
    order: str
    value: float
    exact: float
    magnitude: float
    error_bound: float

    @property
    def abs_error(self) -> float:
        return abs(self.value - self.exact)

    @property
    def relative_error(self) -> float:
        """``|value - exact| / |exact|`` (``inf`` when the exact value is 0 and the computed one is not)."""
        if self.exact == 0:
            return 0.0 if self.value == 0 else math.inf
        return self.abs_error / abs(self.exact)


def _check_input_format(input_format: str) -> str:
    if input_format not in ACCUMULATORS or input_format == "fp64":
        allowed = tuple(a for a in ACCUMULATORS if a != "fp64")
        raise ValueError(f"input_format must be one of {allowed}, got {input_format!r}")
    return input_format


def dot_products(x, y, input_format: str = "bf16") -> np.ndarray:
    """The exact products ``x_i * y_i`` of the inputs rounded to ``input_format`` (exact in float64)."""
    _check_input_format(input_format)
    xa, ya = _as_terms(x, "x"), _as_terms(y, "y")
    if xa.shape != ya.shape:
        raise ValueError(f"x and y must have the same shape, got x {xa.shape} and y {ya.shape}")
    return round_to_accumulator(xa, input_format) * round_to_accumulator(ya, input_format)


def dot(x, y, accumulator: str = "fp32", order: str = "sequential", input_format: str = "bf16") -> DotResult:
    """Dot product of 1-D ``x`` and ``y`` with inputs in ``input_format`` and an ``accumulator``-format sum.

    Each product is exact, then rounded to the accumulator, then added in ``order`` with a rounding per
    addition (module docstring). Compare ``value`` with ``exact``.
    """
    products = dot_products(x, y, input_format)
    if products.ndim != 1:
        raise ValueError(f"x and y must be 1-D, got shape {products.shape}")
    value = sum_values(products, accumulator, order)
    k = _roundings_per_term(products.size, order)
    if not np.array_equal(round_to_accumulator(products, accumulator), products):
        k += 1  # each product is rounded to the accumulator before it is added
    return DotResult(
        n=int(products.size),
        input_format=input_format,
        accumulator=accumulator,
        order=order,
        value=float(value),
        exact=math.fsum(products.tolist()),
        magnitude=math.fsum(np.abs(products).tolist()),
        error_bound=_gamma_bound(k, accumulator, products),
    )


def random_dot_inputs(n: int, seed: int = 0, input_format: str = "bf16", distribution: str = "normal"):
    """Two length-``n`` vectors rounded to ``input_format``: standard normal, or uniform on [0, 1).

    Uniform inputs have positive products, so the sum grows like ``n`` (the hard case for swamping);
    normal inputs cancel, so it grows like ``sqrt(n)``.
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    if distribution not in ("normal", "uniform"):
        raise ValueError(f"distribution must be 'normal' or 'uniform', got {distribution!r}")
    _check_input_format(input_format)
    rng = np.random.default_rng(seed)
    draw = rng.standard_normal if distribution == "normal" else rng.random
    x, y = draw(int(n)), draw(int(n))
    return round_to_accumulator(x, input_format), round_to_accumulator(y, input_format)


@dataclass(frozen=True)
class DotErrorSweep:
    """Median relative error of dot products against their length, for several (accumulator, order)s.

    ``relative_error[(accumulator, order)]`` is an array aligned with ``lengths``: the median over
    ``n_trials`` random input pairs of ``|value - exact| / |exact|``.
    """

    lengths: tuple[int, ...]
    input_format: str
    distribution: str
    n_trials: int
    relative_error: dict


def dot_error_sweep(
    lengths: Sequence[int] = (16, 64, 256, 1024, 4096),
    configs: Sequence[tuple[str, str]] = (("fp32", "sequential"), ("bf16", "sequential"), ("bf16", "pairwise")),
    input_format: str = "bf16",
    distribution: str = "uniform",
    n_trials: int = 8,
    seed: int = 0,
) -> DotErrorSweep:
    """Relative error of length-``n`` dot products for each ``(accumulator, order)`` in ``configs``.

    All trials and lengths share one set of inputs per trial: the sequential sums are read off one
    running sum at each length (a sequential sum of the first ``n`` terms is the ``n``-th partial sum).
    """
    lengths = tuple(int(n) for n in lengths)
    if not lengths or any(n < 1 for n in lengths):
        raise ValueError(f"lengths must be positive ints, got {lengths!r}")
    if not isinstance(n_trials, (int, np.integer)) or n_trials < 1:
        raise ValueError(f"n_trials must be a positive int, got {n_trials!r}")
    for accumulator, order in configs:
        _check_accumulator(accumulator)
        _check_order(order)
    n_max = max(lengths)
    pairs = [random_dot_inputs(n_max, seed + t, input_format, distribution) for t in range(int(n_trials))]
    products = np.stack([x * y for x, y in pairs])  # (trials, n_max), exact
    exact = np.array([[math.fsum(row[:n].tolist()) for n in lengths] for row in products])
    errors = {}
    for accumulator, order in configs:
        terms = round_to_accumulator(products, accumulator)
        if order == "sequential":
            partial = running_sum(terms, accumulator)
            values = np.stack([partial[:, n] for n in lengths], axis=1)
        else:
            values = np.stack([sum_values(terms[:, :n], accumulator, "pairwise") for n in lengths], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.abs(values - exact) / np.abs(exact)
        errors[(accumulator, order)] = np.median(rel, axis=0)
    return DotErrorSweep(lengths, input_format, distribution, int(n_trials), errors)


# --------------------------------------------------------------------------------------------------
# Non-associativity: the same data split into p partial sums
# --------------------------------------------------------------------------------------------------

def split_sum(values, n_parts: int, accumulator: str = "fp32") -> float:
    """Sum 1-D ``values`` as ``n_parts`` contiguous chunks, each summed sequentially, then the partials
    summed sequentially -- what a kernel does when it splits a reduction over ``n_parts`` blocks
    (split-K). Chunks differ in length by at most one (``numpy.array_split``)."""
    _check_accumulator(accumulator)
    terms = _as_terms(values)
    if terms.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {terms.shape}")
    if not isinstance(n_parts, (int, np.integer)) or isinstance(n_parts, bool) or not 1 <= n_parts <= max(terms.size, 1):
        raise ValueError(f"n_parts must be an int in [1, len(values)={terms.size}], got {n_parts!r}")
    partials = [sum_values(chunk, accumulator) for chunk in np.array_split(terms, int(n_parts))]
    return float(sum_values(np.array(partials), accumulator))


@dataclass(frozen=True)
class SplitSums:
    """The same values summed with different splits: ``sums[i]`` used ``parts[i]`` partial sums."""

    parts: tuple[int, ...]
    accumulator: str
    sums: np.ndarray
    exact: float

    @property
    def n_distinct(self) -> int:
        """How many different results the splits gave."""
        return int(np.unique(self.sums).size)

    @property
    def spread(self) -> float:
        """``max(sums) - min(sums)``."""
        return float(self.sums.max() - self.sums.min())


def split_sums(values, parts: Sequence[int] = (1, 2, 4, 8, 16), accumulator: str = "fp32") -> SplitSums:
    """:func:`split_sum` for each number of parts in ``parts`` (lecture 002 §7.4 (c))."""
    parts = tuple(int(p) for p in parts)
    sums = np.array([split_sum(values, p, accumulator) for p in parts])
    return SplitSums(parts, accumulator, sums, exact_sum(values))


# --------------------------------------------------------------------------------------------------
# RMSNorm's mean of squares
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RMSNormResult:
    """RMSNorm of one row computed with a given storage and compute format.

    ``y`` is the output in ``storage_format``; ``reference`` the float64 RMSNorm of the same stored
    input; ``sum_of_squares``, ``mean_square`` and ``rms`` are the compute-format intermediates.
    """

    storage_format: str
    compute_format: str
    sum_of_squares: float
    mean_square: float
    rms: float
    y: np.ndarray
    reference: np.ndarray

    @property
    def overflowed(self) -> bool:
        """True when an intermediate became inf or NaN."""
        return not all(math.isfinite(v) for v in (self.sum_of_squares, self.mean_square, self.rms))

    @property
    def max_abs_error(self) -> float:
        """Largest ``|y - reference|`` over the row."""
        return float(np.max(np.abs(self.y - self.reference)))


def rms_norm(x, storage_format: str = "bf16", compute_format: str = "fp32", eps: float = 1e-6) -> RMSNormResult:
    """``y = x / sqrt(mean(x**2) + eps)`` for a 1-D row (no learned gain), emulating the formats.

    ``x`` is rounded to ``storage_format``, then converted to ``compute_format`` (as a kernel loads it).
    In ``compute_format``: each square is rounded, the squares are summed sequentially, divided by ``n``,
    ``eps`` (rounded to the format) added, the square root taken and ``x`` divided by it, each step rounded
    (exactly as the hardware would: module docstring). ``y`` is rounded back to ``storage_format``. With
    fp16 compute a value of 256 or more squares to ``inf``, and so does a running sum that reaches 65,520
    (the midpoint above 65,504): the row normalises to zeros.
    """
    _check_accumulator(storage_format, "storage_format")
    _check_accumulator(compute_format, "compute_format")
    if not (math.isfinite(eps) and eps >= 0):
        raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
    xs = round_to_accumulator(_as_terms(x, "x"), storage_format)
    if xs.ndim != 1 or xs.size == 0:
        raise ValueError(f"x must be a non-empty 1-D row, got shape {xs.shape}")
    rnd = _rounder(compute_format)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        xc = rnd(xs)  # loaded into the compute format
        squares = rnd(xc * xc)
        total = float(_sequential(squares, rnd))
        mean_square = float(rnd(total / xs.size))
        rms = float(rnd(np.sqrt(rnd(mean_square + float(rnd(eps))))))
        y = round_to_accumulator(rnd(xc / rms), storage_format)
    ref_rms = math.sqrt(math.fsum((xs * xs).tolist()) / xs.size + eps)
    return RMSNormResult(storage_format, compute_format, total, mean_square, rms, y, xs / ref_rms)


def largest_finite_square_input(fmt: str) -> float:
    """The largest value ``x`` of ``fmt`` whose square, rounded to ``fmt``, does not overflow.

    ``x * x`` overflows when it rounds past the largest value (:func:`gpuperf.formats.overflows`: from
    ``max + spacing(max) / 2`` up, the tie itself only when ``max`` has an odd mantissa). 255.875 in fp16,
    where ``256**2 = 65,536`` is already past 65,504; 20 in E4M3, whose squares past 464 saturate.
    """
    if fmt == "fp64" or fmt not in ACCUMULATORS:
        raise ValueError(f"fmt must be one of {ACCUMULATORS[1:]}, got {fmt!r}")
    top = max_finite(fmt)
    x = float(round_to_accumulator(math.sqrt(top), fmt))
    # x * x is exact in float64 for formats of at most 26 significand bits.
    while not _formats.overflows(x * x, fmt):
        x += float(_formats.spacing(x, fmt))  # the next value of fmt up
    while _formats.overflows(x * x, fmt):
        x -= float(_formats.spacing(np.nextafter(x, 0.0), fmt))  # the next value down (a smaller gap at 2**e)
    return x


# --------------------------------------------------------------------------------------------------
# Integers: position ids and RoPE angles
# --------------------------------------------------------------------------------------------------

def largest_exact_integer_run(fmt: str) -> int:
    """The largest ``N`` such that every integer ``0, 1, ..., N`` is exactly representable in ``fmt``.

    With ``m`` mantissa bits a normal number has ``m + 1`` significant bits, so every integer up to
    ``2**(m + 1)`` is exact and ``2**(m + 1) + 1`` is the first that is not: 256 for bf16, 2048 for fp16,
    16,777,216 for fp32. A format whose largest value is smaller stops at ``floor(max)``.
    """
    _check_accumulator(fmt, "fmt")
    return int(min(2 ** (mantissa_bits(fmt) + 1), math.floor(max_finite(fmt))))


def round_positions(positions, fmt: str) -> np.ndarray:
    """Integer position ids as they are stored in ``fmt`` (round to nearest, ties to even)."""
    return round_to_accumulator(np.asarray(positions, dtype=np.float64), fmt)


def rope_inverse_frequencies(head_dim: int, base: float = 10_000.0) -> np.ndarray:
    """RoPE's per-pair inverse frequencies ``base**(-2 i / head_dim)``, ``i = 0 .. head_dim/2 - 1``
    (Su et al., "RoFormer", 2021, eq. 15). float64, shape ``(head_dim // 2,)``."""
    if not isinstance(head_dim, (int, np.integer)) or head_dim < 2 or head_dim % 2:
        raise ValueError(f"head_dim must be an even int >= 2, got {head_dim!r}")
    if not (math.isfinite(base) and base > 1):
        raise ValueError(f"base must be finite and > 1, got {base!r}")
    return base ** (-2.0 * np.arange(head_dim // 2) / head_dim)


def rope_angles(positions, head_dim: int, fmt: str = "fp32", base: float = 10_000.0) -> np.ndarray:
    """RoPE rotation angles ``position * inv_freq`` computed in ``fmt``, shape ``(len(positions), head_dim//2)``.

    The position ids and the inverse frequencies are rounded to ``fmt`` and so is their product. With
    ``fmt="fp64"`` this is the reference.
    """
    pos = round_positions(np.atleast_1d(positions), fmt)
    inv = round_to_accumulator(rope_inverse_frequencies(head_dim, base), fmt)
    return round_to_accumulator(pos[:, None] * inv[None, :], fmt)


def rope_angle_error(positions, head_dim: int, fmt: str, base: float = 10_000.0) -> np.ndarray:
    """Largest absolute angle error (radians) over the frequency pairs, per position, of
    :func:`rope_angles` in ``fmt`` against float64 with exact integer positions."""
    exact = np.atleast_1d(np.asarray(positions, dtype=np.float64))[:, None] * rope_inverse_frequencies(head_dim, base)
    return np.max(np.abs(rope_angles(positions, head_dim, fmt, base) - exact), axis=1)
