"""The roofline model: how fast an operation can possibly run on a device, and which limit binds.

An operation does ``flop`` floating-point operations and moves ``bytes_moved`` bytes to and from slow
memory (HBM). On a device with a peak of ``peak_flop_per_s`` and a memory bandwidth of ``bytes_per_s`` it
cannot finish sooner than either limit allows, and if computation and data movement overlap perfectly
the slower of the two sets the time::

    time_s >= max(flop / peak_flop_per_s, bytes_moved / bytes_per_s)

Dividing the work by that time gives the attainable rate as a function of the operation's arithmetic
intensity ``I = flop / bytes_moved`` (FLOP/byte)::

    attainable_flop_per_s = min(peak_flop_per_s, I * bytes_per_s)

The two roofs meet at the ridge point ``peak_flop_per_s / bytes_per_s``: below it an operation is
memory-bound, at or above it compute-bound.

Source: S. Williams, A. Waterman and D. Patterson, "Roofline: an insightful visual performance model for
multicore architectures", Communications of the ACM 52(4), 2009.

Counting conventions used by the op catalog
-------------------------------------------
* A fused multiply-add is 2 FLOP. Every other arithmetic operation (add, multiply, divide, compare, max,
  ``exp``, ``rsqrt``) is 1 FLOP, although a GPU spends several instructions on ``exp`` and ``rsqrt``.
* A reduction of ``c`` values (sum, max) is ``c - 1`` FLOP.
* ``bytes_moved`` is the minimum traffic to and from HBM: each input read once and each output written once.
  The ``fused=False`` variants instead count one HBM round trip per primitive operation: the operation
  written out of elementwise ops and reductions and run one op per kernel, as PyTorch eager mode runs such
  code, reading each input tensor of an op once (a tensor used twice by one op, like ``xc * xc``, is read
  once). PyTorch's own ``layer_norm`` and ``softmax`` are single fused kernels, even in eager mode.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Sequence

import numpy as np

from gpuperf import hardware
from gpuperf.hardware import DTYPES, UNITS, Accelerator

#: Storage size of one element of each dtype, in bytes (fp6 and fp4 pack several values per byte;
#: tf32 is stored as fp32).
BYTES_PER_ELEMENT: Mapping[str, float] = MappingProxyType(
    {
        "fp64": 8.0,
        "fp32": 4.0,
        "tf32": 4.0,
        "bf16": 2.0,
        "fp16": 2.0,
        "fp8": 1.0,
        "fp6": 0.75,
        "fp4": 0.5,
        "int8": 1.0,
    }
)

BOUNDS = ("compute", "memory")


# --------------------------------------------------------------------------------------------------
# Argument checks (ValueError naming the argument and the value it got)
# --------------------------------------------------------------------------------------------------


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _check_nonnegative(name: str, value) -> float:
    if not _is_real(value) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def _check_positive(name: str, value) -> float:
    if not _is_real(value) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _check_size(name: str, value) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


def _check_dtype(dtype) -> str:
    if not isinstance(dtype, str) or dtype not in BYTES_PER_ELEMENT:
        raise ValueError(f"dtype must be one of {tuple(BYTES_PER_ELEMENT)}, got {dtype!r}")
    return dtype


def _check_unit(unit) -> str:
    if not isinstance(unit, str) or unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    return unit


def _check_fused(fused) -> bool:
    if not isinstance(fused, (bool, np.bool_)):
        raise ValueError(f"fused must be True or False, got {fused!r}")
    return bool(fused)


def bytes_per_element(dtype: str) -> float:
    """Bytes one element of ``dtype`` occupies in memory (e.g. 2.0 for ``"bf16"``, 0.5 for ``"fp4"``)."""
    return BYTES_PER_ELEMENT[_check_dtype(dtype)]


def as_accelerator(accelerator: str | Accelerator) -> Accelerator:
    """Return ``accelerator`` itself, or look a name up with :func:`gpuperf.hardware.get_accelerator`."""
    if isinstance(accelerator, Accelerator):
        return accelerator
    if isinstance(accelerator, str):
        return hardware.get_accelerator(accelerator)
    raise ValueError(f"accelerator must be an Accelerator or a device name, got {accelerator!r}")


# --------------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------------


def arithmetic_intensity(flop: float, bytes_moved: float) -> float:
    """FLOP per byte of slow-memory traffic: ``flop / bytes_moved``.

    Williams et al. (2009) call this ratio *operational intensity*, to stress that the bytes are the DRAM
    traffic left after the caches have filtered the accesses; "arithmetic intensity" is the more common name.
    """
    flop = _check_nonnegative("flop", flop)
    bytes_moved = _check_positive("bytes_moved", bytes_moved)
    return flop / bytes_moved


def ridge_point(peak_flop_per_s: float, bytes_per_s: float) -> float:
    """The intensity (FLOP/byte) where the memory roof meets the compute roof: ``peak / bandwidth``."""
    peak_flop_per_s = _check_positive("peak_flop_per_s", peak_flop_per_s)
    bytes_per_s = _check_positive("bytes_per_s", bytes_per_s)
    return peak_flop_per_s / bytes_per_s


def attainable_flop_per_s(intensity_flop_per_byte, peak_flop_per_s: float, bytes_per_s: float):
    """The roofline: ``min(peak_flop_per_s, intensity * bytes_per_s)`` in FLOP/s.

    ``intensity_flop_per_byte`` may be a number (returns a float) or an array (returns an array of the same
    shape); every intensity must be >= 0 (``inf`` is allowed and gives the peak).
    """
    peak_flop_per_s = _check_positive("peak_flop_per_s", peak_flop_per_s)
    bytes_per_s = _check_positive("bytes_per_s", bytes_per_s)
    scalar = _is_real(intensity_flop_per_byte)
    try:
        intensity = np.asarray(intensity_flop_per_byte, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"intensity_flop_per_byte must be numbers >= 0, got {intensity_flop_per_byte!r}"
        ) from None
    if isinstance(intensity_flop_per_byte, bool) or not np.all(intensity >= 0):  # also rejects NaN
        raise ValueError(f"intensity_flop_per_byte must be >= 0, got {intensity_flop_per_byte!r}")
    attainable = np.minimum(peak_flop_per_s, intensity * bytes_per_s)
    return float(attainable) if scalar else attainable


def time_lower_bound_s(
    flop: float, bytes_moved: float, peak_flop_per_s: float, bytes_per_s: float
) -> float:
    """Shortest possible run time in seconds: ``max(flop / peak_flop_per_s, bytes_moved / bytes_per_s)``.

    Assumes computation and memory traffic overlap perfectly (Williams et al. 2009); a real kernel is slower.
    """
    flop = _check_nonnegative("flop", flop)
    bytes_moved = _check_nonnegative("bytes_moved", bytes_moved)
    peak_flop_per_s = _check_positive("peak_flop_per_s", peak_flop_per_s)
    bytes_per_s = _check_positive("bytes_per_s", bytes_per_s)
    return max(flop / peak_flop_per_s, bytes_moved / bytes_per_s)


def time_no_overlap_s(
    flop: float, bytes_moved: float, peak_flop_per_s: float, bytes_per_s: float
) -> float:
    """Run time if computing and moving data did not overlap at all: ``flop / peak + bytes_moved / bandwidth``.

    With both resources at full speed, a kernel's time lies between :func:`time_lower_bound_s` (perfect
    overlap) and this sum (none), and since ``a + b <= 2 max(a, b)`` the two differ by at most 2x: the
    roofline brackets such a kernel's time within a factor of two. (A kernel that does not run its units
    at full speed is slower than both: the bracket does not bound launch overhead or poor occupancy.)
    """
    flop = _check_nonnegative("flop", flop)
    bytes_moved = _check_nonnegative("bytes_moved", bytes_moved)
    peak_flop_per_s = _check_positive("peak_flop_per_s", peak_flop_per_s)
    bytes_per_s = _check_positive("bytes_per_s", bytes_per_s)
    return flop / peak_flop_per_s + bytes_moved / bytes_per_s


def binding_roof(flop: float, bytes_moved: float, peak_flop_per_s: float, bytes_per_s: float) -> str:
    """``"compute"`` if the compute time is at least the memory time (a tie counts as compute), else ``"memory"``."""
    flop = _check_nonnegative("flop", flop)
    bytes_moved = _check_nonnegative("bytes_moved", bytes_moved)
    peak_flop_per_s = _check_positive("peak_flop_per_s", peak_flop_per_s)
    bytes_per_s = _check_positive("bytes_per_s", bytes_per_s)
    return "compute" if flop / peak_flop_per_s >= bytes_moved / bytes_per_s else "memory"


@dataclass(frozen=True)
class OpCost:
    """The work of one operation: ``flop`` FLOP and ``bytes_moved`` bytes of HBM traffic, in ``dtype``."""

    name: str
    flop: float
    bytes_moved: float
    dtype: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        object.__setattr__(self, "flop", _check_nonnegative("flop", self.flop))
        object.__setattr__(self, "bytes_moved", _check_positive("bytes_moved", self.bytes_moved))
        _check_dtype(self.dtype)

    @property
    def intensity_flop_per_byte(self) -> float:
        """Arithmetic intensity, FLOP/byte."""
        return self.flop / self.bytes_moved


@dataclass(frozen=True)
class RooflineAnalysis:
    """Where one operation sits on one device's roofline (see :func:`analyze`). Times in seconds."""

    op: OpCost
    accelerator_name: str
    unit: str
    peak_flop_per_s: float
    bytes_per_s: float
    intensity_flop_per_byte: float
    ridge_flop_per_byte: float
    compute_time_s: float
    memory_time_s: float
    time_s: float
    attainable_flop_per_s: float
    bound: str

    @property
    def fraction_of_peak(self) -> float:
        """Attainable FLOP/s as a fraction of the peak (1.0 when compute-bound)."""
        return self.attainable_flop_per_s / self.peak_flop_per_s

    @property
    def no_overlap_time_s(self) -> float:
        """``compute_time_s + memory_time_s``: the time with no overlap (:func:`time_no_overlap_s`)."""
        return self.compute_time_s + self.memory_time_s

    def summary(self) -> str:
        """One line: FLOP, bytes, intensity, bound and time lower bound (for labels and explorers)."""
        return (
            f"{self.op.name} on {self.accelerator_name} ({self.op.dtype}, {self.unit} unit): "
            f"{self.op.flop:.3g} FLOP, {self.op.bytes_moved:.3g} bytes, "
            f"intensity {self.intensity_flop_per_byte:.3g} FLOP/byte "
            f"(ridge {self.ridge_flop_per_byte:.3g}), {self.bound}-bound, "
            f">= {format_duration(self.time_s)}, at most {self.fraction_of_peak:.1%} of peak"
        )


_TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def format_duration(time_s: float) -> str:
    """``time_s`` seconds as text with 3 significant digits in s, ms, µs or ns: ``"139 µs"``, ``"2.05 ms"``.

    The value is rounded before its unit is chosen, so 0.9996 s reads ``"1 s"``, not ``"1e+03 ms"``.
    Raises ``ValueError`` naming ``time_s`` unless it is a finite number >= 0.
    """
    time_s = _check_nonnegative("time_s", time_s)
    rounded = float(f"{time_s:.3g}")
    if rounded >= 1000:
        return f"{rounded:.0f} s"  # no exponent: "1230 s"
    for scale, suffix in _TIME_UNITS:
        if rounded >= scale:
            return f"{rounded / scale:.3g} {suffix}"
    return f"{rounded / 1e-9:.3g} ns"


def analyze(
    op: OpCost, accelerator: str | Accelerator, unit: str = "matrix", dtype: str | None = None
) -> RooflineAnalysis:
    """Place ``op`` on the roofline of ``accelerator`` (a name or an :class:`Accelerator`).

    The compute roof is the dense peak of ``unit`` ("matrix" or "vector") in ``dtype`` (default: the op's
    dtype); the memory roof is the HBM bandwidth. Raises ``ValueError`` if the device has no such peak.
    """
    if not isinstance(op, OpCost):
        raise ValueError(f"op must be an OpCost, got {op!r}")
    acc = as_accelerator(accelerator)
    _check_unit(unit)
    peak_dtype = op.dtype if dtype is None else _check_dtype(dtype)
    peak = acc.peak_flop_per_s(peak_dtype, unit)
    bandwidth = acc.hbm_bytes_per_s
    compute_time_s = op.flop / peak
    memory_time_s = op.bytes_moved / bandwidth
    return RooflineAnalysis(
        op=op,
        accelerator_name=acc.name,
        unit=unit,
        peak_flop_per_s=peak,
        bytes_per_s=bandwidth,
        intensity_flop_per_byte=op.intensity_flop_per_byte,
        ridge_flop_per_byte=ridge_point(peak, bandwidth),
        compute_time_s=compute_time_s,
        memory_time_s=memory_time_s,
        time_s=time_lower_bound_s(op.flop, op.bytes_moved, peak, bandwidth),
        attainable_flop_per_s=attainable_flop_per_s(op.intensity_flop_per_byte, peak, bandwidth),
        bound=binding_roof(op.flop, op.bytes_moved, peak, bandwidth),
    )


# --------------------------------------------------------------------------------------------------
# The op catalog
# --------------------------------------------------------------------------------------------------


def matmul(m: int, k: int, n: int, dtype: str = "bf16") -> OpCost:
    """``C = A @ B`` with ``A`` m x k and ``B`` k x n.

    FLOP: ``2 m k n`` (each of the ``m n`` outputs needs ``k`` multiply-adds). Bytes: ``(m k + k n + m n) b``
    (read A and B once, write C once), ``b`` = bytes per element. Dividing numerator and denominator by
    ``m k n`` gives the intensity ``2 / (b (1/m + 1/k + 1/n))`` (:func:`matmul_intensity_flop_per_byte`):
    the smallest dimension governs it, since it lies between ``2 min / (3 b)`` and ``2 min / b``. For
    ``m = k = n = N`` it is ``2 N / (3 b)``: it grows with ``N``.
    """
    m, k, n = _check_size("m", m), _check_size("k", k), _check_size("n", n)
    b = bytes_per_element(dtype)
    return OpCost(f"matmul {m}x{k}x{n}", 2.0 * m * k * n, float(m * k + k * n + m * n) * b, dtype)


def matmul_intensity_flop_per_byte(m: int, k: int, n: int, dtype: str = "bf16") -> float:
    """The closed form ``2 / (b (1/m + 1/k + 1/n))`` of :func:`matmul`'s intensity (FLOP/byte)."""
    m, k, n = _check_size("m", m), _check_size("k", k), _check_size("n", n)
    return 2.0 / (bytes_per_element(dtype) * (1.0 / m + 1.0 / k + 1.0 / n))


def gemv(m: int, k: int, dtype: str = "bf16") -> OpCost:
    """``y = A @ x`` with ``A`` m x k and ``x`` a k-vector (a linear layer at batch size 1, as in decoding).

    FLOP: ``2 m k``. Bytes: ``(m k + k + m) b``. The matrix dominates the traffic, so for large ``m = k`` the
    intensity approaches ``2 / b``: 1 FLOP/byte in bf16, whatever the size.
    """
    m, k = _check_size("m", m), _check_size("k", k)
    b = bytes_per_element(dtype)
    return OpCost(f"gemv {m}x{k}", 2.0 * m * k, float(m * k + k + m) * b, dtype)


def elementwise_chain(n_elements: int, k_ops: int, dtype: str = "bf16", fused: bool = True) -> OpCost:
    """``k_ops`` unary elementwise operations applied one after another to ``n_elements`` values.

    FLOP: ``k_ops n`` (1 FLOP per element per op). Fused (one kernel): read the input once and write the
    result once, ``2 n b`` bytes. Unfused (one kernel per op): every op reads its input from HBM and writes
    its output back, ``2 k_ops n b`` bytes -- ``k_ops`` times the traffic for the same FLOP.
    """
    n_elements, k_ops = _check_size("n_elements", n_elements), _check_size("k_ops", k_ops)
    b = bytes_per_element(dtype)
    fused = _check_fused(fused)
    round_trips = 1 if fused else k_ops
    label = "fused" if fused else "unfused"
    return OpCost(
        f"{k_ops} elementwise ops ({label}), n={n_elements}",
        float(k_ops * n_elements),
        2.0 * round_trips * n_elements * b,
        dtype,
    )


def relu(n_elements: int, dtype: str = "bf16") -> OpCost:
    """``max(x, 0)`` over ``n_elements`` values: ``n`` FLOP, ``2 n b`` bytes, intensity ``1 / (2 b)``."""
    n_elements = _check_size("n_elements", n_elements)
    b = bytes_per_element(dtype)
    return OpCost(f"relu n={n_elements}", float(n_elements), 2.0 * n_elements * b, dtype)


@dataclass(frozen=True)
class KernelPass:
    """One primitive operation of an unfused implementation: its FLOP and the elements it reads and writes."""

    name: str
    flop: int
    read_elements: int
    write_elements: int


def layernorm_passes(rows: int, cols: int) -> tuple[KernelPass, ...]:
    """The primitive operations of LayerNorm over the last dim of a ``rows`` x ``cols`` tensor, written out of
    elementwise ops and reductions and run one kernel per op (PyTorch's ``layer_norm`` is one fused kernel).

    ``r = rows``, ``c = cols``; ``gamma`` and ``beta`` have ``c`` elements; ``mean``, ``var``, ``rstd`` have
    ``r``. A reduction of ``c`` values costs ``c - 1`` FLOP, and dividing the sum by ``c`` one more.
    """
    r, c = _check_size("rows", rows), _check_size("cols", cols)
    rc = r * c
    return (
        KernelPass("mean = x.mean(-1)", rc, rc, r),  # r (c - 1) adds + r divisions
        KernelPass("xc = x - mean", rc, rc + r, rc),
        KernelPass("sq = xc * xc", rc, rc, rc),
        KernelPass("var = sq.mean(-1)", rc, rc, r),
        KernelPass("t = var + eps", r, r, r),
        KernelPass("rstd = t.rsqrt()", r, r, r),
        KernelPass("xhat = xc * rstd", rc, rc + r, rc),
        KernelPass("ys = xhat * gamma", rc, rc + c, rc),
        KernelPass("y = ys + beta", rc, rc + c, rc),
    )


def softmax_passes(rows: int, cols: int) -> tuple[KernelPass, ...]:
    """The primitive operations of a numerically safe softmax over the last dim, written out of elementwise ops
    and reductions and run one kernel per op (PyTorch's ``softmax`` is one fused kernel).

    ``m`` and ``s`` have ``rows`` elements. Each max or sum over ``c`` values costs ``c - 1`` FLOP.
    """
    r, c = _check_size("rows", rows), _check_size("cols", cols)
    rc = r * c
    return (
        KernelPass("m = x.amax(-1)", r * (c - 1), rc, r),
        KernelPass("z = x - m", rc, rc + r, rc),
        KernelPass("e = z.exp()", rc, rc, rc),
        KernelPass("s = e.sum(-1)", r * (c - 1), rc, r),
        KernelPass("y = e / s", rc, rc + r, rc),
    )


def _fused_or_unfused_cost(
    name: str, passes: Sequence[KernelPass], fused, fused_elements: int, dtype: str
) -> OpCost:
    """The cost of ``passes`` run as one fused kernel moving ``fused_elements`` elements, or one kernel per pass.

    Fusion changes the traffic, not the arithmetic: the FLOP are those of the passes either way.
    """
    fused = _check_fused(fused)
    b = bytes_per_element(dtype)
    flop = sum(p.flop for p in passes)
    elements = fused_elements if fused else sum(p.read_elements + p.write_elements for p in passes)
    return OpCost(f"{name} ({'fused' if fused else 'unfused'})", float(flop), float(elements) * b, dtype)


def layernorm(rows: int, cols: int, dtype: str = "bf16", fused: bool = True) -> OpCost:
    """LayerNorm of each row of a ``rows`` x ``cols`` tensor, with scale ``gamma`` and shift ``beta``.

    FLOP, per row of ``c = cols`` values: the mean takes ``c - 1`` adds and a division (``c``); ``x - mean``
    ``c``; squaring ``c``; the variance's mean ``c``; ``+ eps`` and ``rsqrt`` 2; ``* rstd`` ``c``;
    ``* gamma`` ``c``; ``+ beta`` ``c``. Total ``rows (7 cols + 2)``: about 7 FLOP per element.

    Bytes, fused (one kernel, as PyTorch's ``layer_norm``): read x, write y, read gamma and beta:
    ``(2 rows cols + 2 cols) b``. Unfused, the nine passes of :func:`layernorm_passes` (mean, subtract,
    square, mean, add eps, rsqrt, multiply, scale, shift), one kernel each, read ``7 rows cols + 4 rows
    + 2 cols`` elements and write ``5 rows cols + 4 rows``: about 12 element round trips instead of 2.
    """
    passes = layernorm_passes(rows, cols)
    rows, cols = int(rows), int(cols)
    return _fused_or_unfused_cost(f"layernorm {rows}x{cols}", passes, fused, 2 * rows * cols + 2 * cols, dtype)


def softmax(rows: int, cols: int, dtype: str = "bf16", fused: bool = True) -> OpCost:
    """Safe softmax of each row of a ``rows`` x ``cols`` tensor: ``exp(x - max(x)) / sum(exp(x - max(x)))``.

    FLOP, per row of ``c = cols`` values: the max ``c - 1`` comparisons; ``x - m`` ``c``; ``exp`` ``c``
    (counted as 1 FLOP each); the sum ``c - 1``; the division ``c``. Total ``rows (5 cols - 2)``: about 5 FLOP
    per element.

    Bytes, fused (one kernel holding a row on chip, as PyTorch's ``softmax``): read x, write y:
    ``2 rows cols b``. Unfused, the five passes of :func:`softmax_passes` (max, subtract, exp, sum, divide),
    one kernel each, read ``5 rows cols + 2 rows`` elements and write ``3 rows cols + 2 rows``: about 8
    element round trips instead of 2.
    """
    passes = softmax_passes(rows, cols)
    rows, cols = int(rows), int(cols)
    return _fused_or_unfused_cost(f"softmax {rows}x{cols}", passes, fused, 2 * rows * cols, dtype)


def residual_rmsnorm(tokens: int, d_model: int, dtype: str = "bf16", fused: bool = True) -> OpCost:
    """A residual add followed by RMSNorm, as between the sublayers of a pre-norm Transformer.

    ``h = x + r`` (the new residual stream, kept for the next residual add) and
    ``y = h / sqrt(mean(h^2) + eps) * w`` for ``tokens`` rows of ``d_model`` values.

    FLOP per row of ``d = d_model`` values: the add ``d``; squares ``d``; their sum ``d - 1``; the mean, the
    ``+ eps`` and the ``rsqrt`` 3; the scaling ``d``; the weight ``d``: ``5 d + 2``, about 5 per element.

    Bytes, unfused (an add kernel, then a fused RMSNorm kernel): the add reads x and r and writes h
    (3 elements per value), the norm reads h back and writes y (2) and reads w: ``(5 t d + d) b``.
    Fused (one kernel): read x and r, write h and y: ``(4 t d + d) b``. Fusion saves the re-read of h,
    one fifth of the traffic.
    """
    t, d = _check_size("tokens", tokens), _check_size("d_model", d_model)
    fused = _check_fused(fused)
    b = bytes_per_element(dtype)
    elements = (4 if fused else 5) * t * d + d
    label = "fused" if fused else "unfused"
    return OpCost(f"residual add + rmsnorm {t}x{d} ({label})", float(t * (5 * d + 2)), float(elements) * b, dtype)


def attention_scores(seq_len: int, head_dim: int, dtype: str = "bf16") -> OpCost:
    """One head's attention scores ``S = Q K^T``, with Q and K ``seq_len`` x ``head_dim``.

    FLOP: ``2 N^2 d``. Bytes: ``(2 N d + N^2) b`` (read Q and K, write the N x N matrix S). The intensity
    ``2 d / b * N / (N + 2 d)`` stays below ``2 d / b`` for every ``N`` and tends to it when writing S
    dominates (``N >> d``).
    """
    n, d = _check_size("seq_len", seq_len), _check_size("head_dim", head_dim)
    b = bytes_per_element(dtype)
    return OpCost(f"attention scores N={n} d={d}", 2.0 * n * n * d, float(2 * n * d + n * n) * b, dtype)


def min_square_matmul_for_compute_bound(
    accelerator: str | Accelerator, dtype: str = "bf16", unit: str = "matrix"
) -> int:
    """Smallest ``N`` for which an N x N x N matmul reaches the ridge point of ``accelerator``.

    Below it the matmul is memory-bound however good the kernel. From ``2 N / (3 b) >= ridge`` the answer is
    about ``3 b ridge / 2``; that guess is then corrected by stepping ``N`` until
    ``matmul(N, N, N).intensity >= ridge > matmul(N - 1, N - 1, N - 1).intensity`` holds exactly.
    """
    acc = as_accelerator(accelerator)
    _check_dtype(dtype)
    _check_unit(unit)
    ridge = acc.ridge_point_flop_per_byte(dtype, unit)

    def reaches(n: int) -> bool:
        return matmul(n, n, n, dtype).intensity_flop_per_byte >= ridge

    n = max(1, math.ceil(1.5 * bytes_per_element(dtype) * ridge))
    while not reaches(n):
        n += 1
    while n > 1 and reaches(n - 1):
        n -= 1
    return n


def ridge_rows(accelerators: Sequence[str | Accelerator], dtypes: Sequence[str] = ("fp16", "fp8", "fp4"),
               unit: str = "matrix") -> list[dict[str, object]]:
    """One dict per device: ``name``, ``hbm_bytes_per_s`` and, for each dtype, ``peak_<dtype>`` (FLOP/s) and
    ``ridge_<dtype>`` (FLOP/byte), ``None`` where the device has no such unit (for :mod:`gpuperf.plotting.tables`)."""
    _check_unit(unit)
    for d in dtypes:
        _check_dtype(d)
    rows = []
    for item in accelerators:
        acc = as_accelerator(item)
        table = acc.matrix_flop_per_s if unit == "matrix" else acc.vector_flop_per_s
        row: dict[str, object] = {"name": acc.name, "hbm_bytes_per_s": acc.hbm_bytes_per_s}
        for d in dtypes:
            row[f"peak_{d}"] = table.get(d)
            row[f"ridge_{d}"] = None if d not in table else table[d] / acc.hbm_bytes_per_s
        rows.append(row)
    return rows


# --------------------------------------------------------------------------------------------------
# Hierarchical roofs
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Roof:
    """One ceiling of a hierarchical roofline: a compute peak (FLOP/s) or a memory bandwidth (bytes/s)."""

    name: str
    kind: str  # "compute" or "memory"
    value: float  # FLOP/s for kind "compute", bytes/s for kind "memory"
    source: str

    def __post_init__(self) -> None:
        if self.kind not in BOUNDS:
            raise ValueError(f"kind must be one of {BOUNDS}, got {self.kind!r}")
        object.__setattr__(self, "value", _check_positive("value", self.value))


_UNIT_NAMES = {
    "gpu": {"matrix": "Tensor Cores", "vector": "CUDA cores"},
    "tpu": {"matrix": "MXU", "vector": "VPU"},
}


def compute_roofs(accelerator: str | Accelerator, dtype: str) -> list[Roof]:
    """The compute ceilings of ``accelerator`` in ``dtype``: matrix unit, then vector unit, where present.

    Raises ``ValueError`` if the device has neither unit in that dtype.
    """
    acc = as_accelerator(accelerator)
    _check_dtype(dtype)
    roofs = []
    for unit, table in (("matrix", acc.matrix_flop_per_s), ("vector", acc.vector_flop_per_s)):
        if dtype in table:
            unit_name = _UNIT_NAMES.get(acc.kind, {}).get(unit, f"{unit} unit")
            source = acc.sources.get(f"{unit}_flop_per_s", "")
            roofs.append(Roof(f"{unit_name} {dtype}", "compute", table[dtype], source))
    if not roofs:
        raise ValueError(f"dtype {dtype!r} has no peak on {acc.name}")
    return roofs


def memory_roofs(accelerator: str | Accelerator) -> list[Roof]:
    """The memory ceilings of ``accelerator``, slowest first: HBM; L2 where a measured figure exists; shared
    memory (``bytes per clock per SM * SMs * boost clock``, an upper bound: the clock is the maximum boost
    clock) where those figures exist."""
    acc = as_accelerator(accelerator)
    sources = acc.sources
    roofs = [Roof("HBM", "memory", acc.hbm_bytes_per_s, sources.get("hbm_bytes_per_s", ""))]
    if acc.l2_bytes_per_s is not None:
        roofs.append(Roof("L2", "memory", acc.l2_bytes_per_s, sources.get("l2_bytes_per_s", "")))
    if acc.shared_memory_bytes_per_clock_per_sm is not None and acc.sm_count and acc.boost_clock_hz:
        value = acc.shared_memory_bytes_per_clock_per_sm * acc.sm_count * acc.boost_clock_hz
        parts = ("shared_memory_bytes_per_clock_per_sm", "sm_count", "boost_clock_hz")
        source = "; ".join(f"{p}: {sources[p]}" for p in parts if sources.get(p))
        roofs.append(Roof("shared memory", "memory", value, source))
    return sorted(roofs, key=lambda roof: roof.value)
