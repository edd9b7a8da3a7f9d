"""Exact binary floating-point formats (FP32 down to FP4, E8M0) and scaled integers (INT8, INT4).

A :class:`FloatFormat` is described by its exponent bits, mantissa (fraction) bits, exponent bias and
the use of its top exponent field:

* ``"ieee"``: IEEE 754 style. The all-ones exponent field encodes infinity (mantissa 0) and NaN
  (mantissa not 0). FP32, TF32, BF16, FP16 and FP8 E5M2 work this way.
* ``"fn"``: OCP "finite" style. There is no infinity; only the all-ones pattern(s) ``S.11..1.11..1`` are
  NaN, so the top exponent field still holds finite values. FP8 E4M3FN and the E8M0 scale work this way.
* ``"none"``: no infinity and no NaN; every pattern is a finite number (FP6 E3M2, FP6 E2M3, FP4 E2M1).

A normal number with exponent field ``e`` (``1 <= e``) and mantissa field ``m`` is
``(-1)^s * 2^(e - bias) * (1 + m / 2^M)``; field ``e = 0`` holds zero and the subnormals
``(-1)^s * 2^(1 - bias) * (m / 2^M)`` (IEEE 754-2019, section 3.4). A format with ``mantissa_bits == 0``
(only E8M0 here, the OCP MX scale) has no zero and no subnormals: its field 0 is the normal value
``2^-bias``.

Every value of every format up to FP32 is exactly a float64, so all arithmetic here is exact:
:func:`round_to_format` scales by powers of two and rounds with ``numpy.rint`` (ties to even), which
is a single correct rounding. Sources: IEEE 754-2019; OCP 8-bit Floating Point Specification (OFP8)
rev. 1.0 (2023); OCP Microscaling Formats (MX) Specification v1.0 (2023), section 5.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Sequence

import numpy as np

#: How a format uses its top exponent field (see the module docstring).
SPECIALS = ("ieee", "fn", "none")

#: The overflow modes accepted by :func:`round_to_format` and :func:`encode`.
OVERFLOW_MODES = ("default", "saturate", "inf", "nan")

_DEFAULT_OVERFLOW = {"ieee": "inf", "fn": "saturate", "none": "saturate"}


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format.

    ``signed=False`` formats (E8M0) have no sign bit. ``default_overflow`` is what
    ``overflow="default"`` means for this format; left empty it follows ``specials``: ``"inf"`` for
    "ieee" (IEEE 754 round-to-nearest overflow), ``"saturate"`` for "fn" (as PyTorch 2.13's
    ``float8_e4m3fn`` cast and NVIDIA's ``satfinite`` conversions do) and for "none" (the format has
    neither inf nor NaN). The E8M0 instance sets ``"nan"``, as the MX spec and PyTorch's
    ``float8_e8m0fnu`` do.
    """

    name: str
    exponent_bits: int
    mantissa_bits: int
    bias: int
    specials: str
    signed: bool = True
    default_overflow: str = ""

    def __post_init__(self) -> None:
        for arg in ("exponent_bits", "mantissa_bits", "bias"):
            value = getattr(self, arg)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
                raise ValueError(f"{arg} must be an integer, got {value!r}")
        if not 1 <= self.exponent_bits <= 11:
            raise ValueError(f"exponent_bits must be in 1..11, got {self.exponent_bits!r}")
        if not 0 <= self.mantissa_bits <= 23:
            raise ValueError(f"mantissa_bits must be in 0..23, got {self.mantissa_bits!r}")
        if self.specials not in SPECIALS:
            raise ValueError(f"specials must be one of {SPECIALS}, got {self.specials!r}")
        if self.specials == "ieee" and self.mantissa_bits == 0:
            raise ValueError("specials='ieee' needs mantissa_bits >= 1 to tell NaN from inf, got mantissa_bits=0")
        if self.specials == "ieee" and self.exponent_bits < 2:
            raise ValueError(
                "specials='ieee' needs exponent_bits >= 2 (field 0 is subnormal, the top field special), "
                f"got exponent_bits={self.exponent_bits}"
            )
        if self.total_bits > 32:
            raise ValueError(f"total_bits must be <= 32, got {self.total_bits} for format {self.name!r}")
        mode = self.default_overflow or _DEFAULT_OVERFLOW[self.specials]
        if mode not in OVERFLOW_MODES[1:]:
            raise ValueError(f"default_overflow must be one of {OVERFLOW_MODES[1:]}, got {mode!r}")
        object.__setattr__(self, "default_overflow", mode)
        _check_overflow_possible(self, mode, "default_overflow")
        # Exactness (module docstring) needs every value, and the power of two above the largest, in float64.
        if self.max_exponent > 1022 or self.min_exponent - self.mantissa_bits < -1074:
            raise ValueError(
                f"bias must keep the values of format {self.name!r} inside float64's range "
                f"(2^-1074 .. 2^1023), got bias={self.bias} (exponents {self.min_exponent - self.mantissa_bits} "
                f"to {self.max_exponent})"
            )

    # ---- layout -------------------------------------------------------------------------------
    @property
    def total_bits(self) -> int:
        """Bits per value: sign (if signed) + exponent + mantissa."""
        return int(self.signed) + self.exponent_bits + self.mantissa_bits

    @property
    def has_inf(self) -> bool:
        return self.specials == "ieee"

    @property
    def has_nan(self) -> bool:
        return self.specials != "none"

    @property
    def has_subnormals(self) -> bool:
        """False only for mantissa-free formats (E8M0), whose exponent field 0 is a normal value."""
        return self.mantissa_bits > 0

    @property
    def has_zero(self) -> bool:
        return self.mantissa_bits > 0

    @property
    def max_exponent_field(self) -> int:
        """Largest exponent field that holds finite values."""
        top = (1 << self.exponent_bits) - 1
        if self.specials == "ieee" or (self.specials == "fn" and self.mantissa_bits == 0):
            return top - 1
        return top

    @property
    def max_mantissa_field(self) -> int:
        """Largest mantissa field at :attr:`max_exponent_field` (the all-ones pattern is NaN in "fn")."""
        full = (1 << self.mantissa_bits) - 1
        if self.specials == "fn" and self.mantissa_bits > 0:
            return full - 1
        return full

    @property
    def max_exponent(self) -> int:
        """Unbiased exponent of :attr:`max_value` (``emax``; 8 for E4M3, 15 for E5M2 and FP16)."""
        return self.max_exponent_field - self.bias

    @property
    def min_exponent(self) -> int:
        """Unbiased exponent of :attr:`min_normal` (``emin = 1 - bias``; ``-bias`` for E8M0)."""
        return 1 - self.bias if self.has_subnormals else -self.bias

    # ---- range and precision -------------------------------------------------------------------
    @property
    def max_value(self) -> float:
        """Largest finite value (448 for E4M3FN, 57344 for E5M2, 65504 for FP16, 6 for E2M1)."""
        significand = (1 << self.mantissa_bits) + self.max_mantissa_field
        return math.ldexp(significand, self.max_exponent - self.mantissa_bits)

    @property
    def max_finite(self) -> float:
        """Alias of :attr:`max_value`."""
        return self.max_value

    @property
    def min_normal(self) -> float:
        """Smallest positive normal value, ``2^emin``."""
        return math.ldexp(1.0, self.min_exponent)

    @property
    def min_subnormal(self) -> float:
        """Smallest positive value, ``2^(emin - M)`` (equal to :attr:`min_normal` for E8M0)."""
        return math.ldexp(1.0, self.min_exponent - self.mantissa_bits)

    @property
    def machine_epsilon(self) -> float:
        """Gap from 1 to the next larger value, ``2^-M`` (twice the unit roundoff)."""
        return math.ldexp(1.0, -self.mantissa_bits)

    @property
    def bits_dtype(self) -> np.dtype:
        """The unsigned integer dtype :func:`encode` returns (uint8, uint16 or uint32)."""
        for dtype in (np.uint8, np.uint16, np.uint32):
            if self.total_bits <= np.iinfo(dtype).bits:
                return np.dtype(dtype)
        raise AssertionError("unreachable: total_bits <= 32 is checked in __post_init__")


def _check_overflow_possible(fmt: FloatFormat, mode: str, arg: str) -> None:
    if mode == "inf" and not fmt.has_inf:
        raise ValueError(f"{arg}='inf' is impossible: format {fmt.name!r} has no infinity")
    if mode == "nan" and not fmt.has_nan:
        raise ValueError(f"{arg}='nan' is impossible: format {fmt.name!r} has no NaN")


FORMATS: Mapping[str, FloatFormat] = MappingProxyType(
    {
        "fp32": FloatFormat("fp32", 8, 23, 127, "ieee"),
        "tf32": FloatFormat("tf32", 8, 10, 127, "ieee"),  # 19 bits; stored in 32-bit registers
        "bf16": FloatFormat("bf16", 8, 7, 127, "ieee"),
        "fp16": FloatFormat("fp16", 5, 10, 15, "ieee"),
        "fp8_e4m3fn": FloatFormat("fp8_e4m3fn", 4, 3, 7, "fn"),
        "fp8_e5m2": FloatFormat("fp8_e5m2", 5, 2, 15, "ieee"),
        "fp6_e3m2": FloatFormat("fp6_e3m2", 3, 2, 3, "none"),
        "fp6_e2m3": FloatFormat("fp6_e2m3", 2, 3, 1, "none"),
        "fp4_e2m1": FloatFormat("fp4_e2m1", 2, 1, 1, "none"),
        # Unsigned, exponent only: value 2^(e - 127), 0xFF is NaN (OCP MX v1.0, section 5.4.1).
        "e8m0": FloatFormat("e8m0", 8, 0, 127, "fn", signed=False, default_overflow="nan"),
    }
)

#: Other spellings accepted by :func:`get_format` (PyTorch dtype names and common short names).
ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "float32": "fp32",
        "float16": "fp16",
        "half": "fp16",
        "bfloat16": "bf16",
        "float8_e4m3fn": "fp8_e4m3fn",
        "e4m3": "fp8_e4m3fn",
        "float8_e5m2": "fp8_e5m2",
        "e5m2": "fp8_e5m2",
        "e3m2": "fp6_e3m2",
        "e2m3": "fp6_e2m3",
        "e2m1": "fp4_e2m1",
        "float8_e8m0fnu": "e8m0",
    }
)


def lookup(value, cls: type, table: Mapping, arg: str, aliases: Mapping[str, str] | None = None):
    """``value`` itself if it is a ``cls``, else ``table[name]`` for a (case-insensitive, aliased) name.

    The one name lookup behind :func:`get_format`, :func:`get_int_format` and ``gpuperf.mx.get_mx_format``;
    anything else raises ``ValueError`` naming ``arg`` and listing the known names.
    """
    if isinstance(value, cls):
        return value
    if isinstance(value, str):
        key = value.lower()
        key = (aliases or {}).get(key, key)
        if key in table:
            return table[key]
    raise ValueError(f"{arg} must be one of {list(table)} or an instance of {cls.__name__}, got {value!r}")


def _format(fmt, arg: str = "fmt") -> FloatFormat:
    return lookup(fmt, FloatFormat, FORMATS, arg, ALIASES)


def get_format(name_or_format) -> FloatFormat:
    """The :class:`FloatFormat` named ``name_or_format`` (a key of :data:`FORMATS` or :data:`ALIASES`);
    a FloatFormat is returned unchanged."""
    return _format(name_or_format, "name_or_format")


def _resolve_overflow(fmt: FloatFormat, overflow) -> str:
    if overflow not in OVERFLOW_MODES:
        raise ValueError(f"overflow must be one of {OVERFLOW_MODES}, got {overflow!r}")
    mode = fmt.default_overflow if overflow == "default" else overflow
    _check_overflow_possible(fmt, mode, "overflow")
    return mode


def _as_float64(x, arg: str = "x") -> np.ndarray:
    array = np.asarray(x)
    if array.dtype.kind not in "fiub":
        raise ValueError(f"{arg} must hold real numbers, got dtype {array.dtype}")
    with np.errstate(invalid="ignore"):  # widening a signalling NaN warns; it stays NaN
        return array.astype(np.float64)


def _scalar_or_array(result: np.ndarray, like) -> np.ndarray:
    """A NumPy scalar when the input was a scalar, else the array."""
    return result[()] if np.ndim(like) == 0 else result


# ---- rounding ---------------------------------------------------------------------------------------
def _round_magnitude_unbounded(values: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """``|values|`` rounded to nearest-even on ``fmt``'s grid, the exponent range unbounded above (non-finite
    entries give 0). Exact: scaling by powers of two and ``numpy.rint`` make one correct rounding."""
    finite = np.isfinite(values)
    safe = np.where(finite, np.abs(values), 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        _, frexp_exponent = np.frexp(safe)  # safe = f * 2^k with f in [0.5, 1)
        exponent = np.maximum(frexp_exponent - 1, fmt.min_exponent)
        quantum_exponent = exponent - fmt.mantissa_bits  # the ulp of |x|'s binade is 2^quantum_exponent
        return np.ldexp(np.rint(np.ldexp(safe, -quantum_exponent)), quantum_exponent)


def _overflowed(values: np.ndarray, rounded: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    return (~np.isfinite(values) | (rounded > fmt.max_value)) & ~np.isnan(values)


def overflows(x, fmt) -> np.ndarray:
    """True where rounding ``x`` to ``fmt`` overflows: ``|x|`` rounds (nearest, ties to even, exponent range
    unbounded) to more than ``fmt.max_value``, or ``x`` is infinite; False for NaN.

    This is the test that decides whether :func:`round_to_format`'s ``overflow`` mode applies. The boundary
    is the midpoint ``max_value + ulp / 2``, and a tie there overflows only when ``max_value`` has an odd
    mantissa: FP16's 65,520 overflows (65,504 is ``1.1111111111 x 2^15``), while E4M3FN's 464 rounds
    to 448 (``1.110 x 2^8``, even: the odd neighbour 480 would be the NaN pattern). Returns a bool array
    of ``x``'s shape (a NumPy bool for a scalar).
    """
    fmt = _format(fmt)
    values = _as_float64(x)
    return _scalar_or_array(_overflowed(values, _round_magnitude_unbounded(values, fmt), fmt), x)


def round_to_format(x, fmt, overflow: str = "default") -> np.ndarray:
    """Round ``x`` to the nearest value of ``fmt`` (ties to even), returned as float64.

    ``x``: scalar or array of real numbers (float32 and float64 are converted exactly). Subnormals are
    produced where the format has them; a result that rounds to zero keeps the sign of ``x``; NaN gives
    NaN. The rounding is done as if the exponent range were unbounded above; a result whose magnitude
    then exceeds ``fmt.max_value`` (IEEE 754-2019 section 7.4; :func:`overflows` gives the boundary: from
    ``max_value + ulp / 2`` up, the tie itself only where ``max_value``'s mantissa is odd) overflows
    according to ``overflow``:

    * ``"default"``: ``fmt.default_overflow`` (inf for "ieee" formats, saturation for E4M3FN and the
      sub-byte formats, NaN for E8M0);
    * ``"saturate"``: clamp to ``+-max_value``; infinities are clamped too (as NVIDIA's ``satfinite``
      conversions do), NaN stays NaN;
    * ``"inf"``: ``+-inf`` (formats with infinity only);
    * ``"nan"``: NaN, also for infinite ``x`` (formats with NaN only; the OCP OFP8 non-saturating
      mode of E4M3, and PyTorch's ``float8_e4m3fn`` cast before pytorch#178817, April 2026).

    Formats without a sign (E8M0) give NaN for negative ``x``; formats without a zero (E8M0) give
    their smallest value for ``x`` near zero. With no mantissa bit to be even, E8M0 ties
    (``1.5 * 2^k``) round up, as PyTorch's ``float8_e8m0fnu`` cast does.

    Returns a float64 array of ``x``'s shape (a NumPy float64 scalar for scalar ``x``).
    """
    fmt = _format(fmt)
    mode = _resolve_overflow(fmt, overflow)
    values = _as_float64(x)
    rounded = _round_magnitude_unbounded(values, fmt)
    overflowed = _overflowed(values, rounded, fmt)
    if mode == "saturate":
        replacement = fmt.max_value
    elif mode == "inf":
        replacement = np.inf
    else:
        replacement = np.nan
    rounded = np.where(overflowed, replacement, rounded)
    if not fmt.has_zero:
        rounded = np.where(rounded == 0.0, fmt.min_subnormal, rounded)
    rounded = np.copysign(rounded, values) if fmt.signed else rounded
    rounded = np.where(np.isnan(values), np.nan, rounded)
    if not fmt.signed:
        rounded = np.where(values < 0, np.nan, rounded)
    return _scalar_or_array(rounded, x)


# ---- bit patterns ------------------------------------------------------------------------------------
def encode(x, fmt, overflow: str = "default") -> np.ndarray:
    """Bit patterns of ``round_to_format(x, fmt, overflow)`` as unsigned integers (``fmt.bits_dtype``).

    The pattern sits in the low ``fmt.total_bits`` bits: sign, then exponent field, then mantissa field.
    NaN is encoded canonically with sign 0: exponent all ones and the top mantissa bit set ("ieee",
    a quiet NaN) or the all-ones pattern ("fn"). Raises ``ValueError`` naming ``x`` when a value rounds
    to something the format cannot hold (NaN in a format without NaN).
    """
    fmt = _format(fmt)
    rounded = np.asarray(round_to_format(x, fmt, overflow), dtype=np.float64)
    is_nan = np.isnan(rounded)
    if is_nan.any() and not fmt.has_nan:
        raise ValueError(f"x holds NaN (or negative values), which format {fmt.name!r} cannot encode")
    is_inf = np.isinf(rounded)
    magnitude = np.where(is_nan | is_inf, 0.0, np.abs(rounded))
    m_bits = fmt.mantissa_bits
    _, frexp_exponent = np.frexp(magnitude)
    exponent = (frexp_exponent - 1).astype(np.int64)
    normal = magnitude >= fmt.min_normal
    exponent_field = np.where(normal, exponent + fmt.bias, 0)
    with np.errstate(invalid="ignore"):
        normal_mantissa = np.ldexp(magnitude, m_bits - exponent) - (1 << m_bits)
        subnormal_mantissa = np.ldexp(magnitude, m_bits - fmt.min_exponent)
    mantissa_field = np.where(normal, normal_mantissa, subnormal_mantissa).astype(np.int64)

    top_exponent = (1 << fmt.exponent_bits) - 1
    exponent_field = np.where(is_inf, top_exponent, exponent_field)
    mantissa_field = np.where(is_inf, 0, mantissa_field)
    nan_mantissa = (1 << (m_bits - 1)) if fmt.specials == "ieee" else (1 << m_bits) - 1
    exponent_field = np.where(is_nan, top_exponent, exponent_field)
    mantissa_field = np.where(is_nan, nan_mantissa, mantissa_field)

    bits = (exponent_field.astype(np.int64) << m_bits) | mantissa_field
    if fmt.signed:
        sign = np.signbit(rounded) & ~is_nan
        bits = bits | (sign.astype(np.int64) << (fmt.exponent_bits + m_bits))
    return _scalar_or_array(bits.astype(fmt.bits_dtype), x)


def _as_bits(bits, fmt: FloatFormat, arg: str = "bits") -> np.ndarray:
    array = np.asarray(bits)
    if array.dtype.kind not in "iu":
        raise ValueError(f"{arg} must hold integers, got dtype {array.dtype}")
    array = array.astype(np.int64)
    bad = (array < 0) | (array >= (1 << fmt.total_bits))
    if bad.any():
        raise ValueError(
            f"{arg} must lie in [0, 2^{fmt.total_bits}) for format {fmt.name!r}, got {array[bad].flat[0]!r}"
        )
    return array


def decode(bits, fmt) -> np.ndarray:
    """The float64 values of the bit patterns ``bits`` (integers in ``[0, 2^total_bits)``) in ``fmt``.

    Returns an array of ``bits``' shape (a NumPy float64 scalar for a scalar).
    """
    fmt = _format(fmt)
    patterns = _as_bits(bits, fmt)
    m_bits, e_bits = fmt.mantissa_bits, fmt.exponent_bits
    mantissa_field = patterns & ((1 << m_bits) - 1)
    exponent_field = (patterns >> m_bits) & ((1 << e_bits) - 1)
    if fmt.has_subnormals:
        significand = np.where(exponent_field == 0, mantissa_field, mantissa_field + (1 << m_bits))
        scale_exponent = np.maximum(exponent_field, 1) - fmt.bias - m_bits
    else:
        significand = np.ones_like(patterns)
        scale_exponent = exponent_field - fmt.bias
    values = np.ldexp(significand.astype(np.float64), scale_exponent)
    top_exponent = exponent_field == (1 << e_bits) - 1
    if fmt.specials == "ieee":
        values = np.where(top_exponent, np.where(mantissa_field == 0, np.inf, np.nan), values)
    elif fmt.specials == "fn":
        values = np.where(top_exponent & (mantissa_field == (1 << m_bits) - 1), np.nan, values)
    if fmt.signed:
        negative = ((patterns >> (e_bits + m_bits)) & 1).astype(bool)
        values = np.where(negative, -values, values)
    return _scalar_or_array(values, bits)


@dataclass(frozen=True)
class FloatFields:
    """The fields of one encoded value (for teaching and the bit explorer).

    ``unbiased_exponent`` is the exponent the value is scaled by: ``e - bias`` for a normal field
    ``e``, ``1 - bias`` for zero and subnormals (field 0 scales like field 1, without the hidden bit),
    ``None`` for inf and NaN. ``bit_string`` shows the fields separated by spaces: sign (if the format
    has one), exponent, mantissa (if any), e.g. ``"0 01111 0000000000"`` for 1.0 in FP16.
    """

    sign: int
    exponent_bits_value: int
    mantissa_bits_value: int
    unbiased_exponent: int | None
    is_subnormal: bool
    is_special: bool
    bit_string: str
    value: float
    bits: int


def fields(x_or_bits, fmt, *, from_bits: bool = False) -> FloatFields:
    """Split one value into its fields in ``fmt``.

    ``x_or_bits``: a real number (rounded to ``fmt`` first, with the default overflow mode) or, with
    ``from_bits=True``, a bit pattern.
    """
    fmt = _format(fmt)
    if np.ndim(x_or_bits) != 0:
        raise ValueError(f"x_or_bits must be a single value, got shape {np.shape(x_or_bits)}")
    if from_bits:
        pattern = int(_as_bits(x_or_bits, fmt, "x_or_bits"))
    else:
        pattern = int(encode(x_or_bits, fmt))
    m_bits, e_bits = fmt.mantissa_bits, fmt.exponent_bits
    mantissa_field = pattern & ((1 << m_bits) - 1)
    exponent_field = (pattern >> m_bits) & ((1 << e_bits) - 1)
    sign = (pattern >> (e_bits + m_bits)) & 1 if fmt.signed else 0
    value = float(decode(pattern, fmt))
    is_special = bool(np.isnan(value) or np.isinf(value))
    is_subnormal = fmt.has_subnormals and exponent_field == 0 and mantissa_field != 0
    if is_special:
        unbiased = None
    elif fmt.has_subnormals and exponent_field == 0:
        unbiased = 1 - fmt.bias
    else:
        unbiased = exponent_field - fmt.bias
    groups = [format(exponent_field, f"0{e_bits}b")]
    if fmt.signed:
        groups.insert(0, str(sign))
    if m_bits:
        groups.append(format(mantissa_field, f"0{m_bits}b"))
    return FloatFields(
        sign=sign,
        exponent_bits_value=exponent_field,
        mantissa_bits_value=mantissa_field,
        unbiased_exponent=unbiased,
        is_subnormal=bool(is_subnormal),
        is_special=is_special,
        bit_string=" ".join(groups),
        value=value,
        bits=pattern,
    )


# ---- the grid of values -----------------------------------------------------------------------------
def spacing(x, fmt) -> np.ndarray:
    """The ulp at ``x``: the gap between consecutive values of ``fmt`` in the binade holding ``|x|``.

    For a representable ``x`` this is the gap from ``|x|`` to the next larger magnitude, so at a power
    of two it is the (larger) gap above it: ``spacing(1.0, fmt) == fmt.machine_epsilon``. Below the
    normal range it is the subnormal gap ``fmt.min_subnormal`` (also at 0). At ``max_value`` it is the
    gap of the top binade (the next value would be there if the exponent range were unbounded). NaN for
    non-finite ``x`` and for ``|x| > max_value``. Returns float64 of ``x``'s shape.
    """
    fmt = _format(fmt)
    values = _as_float64(x)
    magnitude = np.abs(values)
    inside = np.isfinite(magnitude) & (magnitude <= fmt.max_value)
    _, frexp_exponent = np.frexp(np.where(inside, magnitude, 0.0))
    exponent = np.where(magnitude > 0, np.maximum(frexp_exponent - 1, fmt.min_exponent), fmt.min_exponent)
    gaps = np.where(inside, np.ldexp(1.0, exponent - fmt.mantissa_bits), np.nan)
    return _scalar_or_array(gaps, x)


def representable_values(fmt) -> np.ndarray:
    """Every finite value of ``fmt`` (at most 16 bits), sorted ascending, with a single (positive) zero."""
    fmt = _format(fmt)
    if fmt.total_bits > 16:
        raise ValueError(f"fmt must have at most 16 bits to list its values, got {fmt.name!r} ({fmt.total_bits} bits)")
    values = decode(np.arange(1 << fmt.total_bits), fmt)
    return np.unique(values[np.isfinite(values)]) + 0.0  # + 0.0 turns a -0.0 into 0.0


@dataclass(frozen=True)
class PatternCounts:
    """How a format of at most 16 bits spends its bit patterns."""

    fmt: str
    patterns: int  # 2**total_bits
    nan_patterns: int
    inf_patterns: int
    finite_values: int  # distinct finite values (+0 and -0 count once)
    max_value: float


def pattern_counts(fmt) -> PatternCounts:
    """Count the NaN patterns, infinity patterns and distinct finite values of ``fmt`` (at most 16 bits)."""
    fmt = _format(fmt)
    if fmt.total_bits > 16:
        raise ValueError(f"fmt must have at most 16 bits to count its patterns, got {fmt.name!r} ({fmt.total_bits} bits)")
    decoded = decode(np.arange(1 << fmt.total_bits), fmt)
    return PatternCounts(
        fmt=fmt.name,
        patterns=1 << fmt.total_bits,
        nan_patterns=int(np.isnan(decoded).sum()),
        inf_patterns=int(np.isinf(decoded).sum()),
        finite_values=int(representable_values(fmt).size),
        max_value=fmt.max_value,
    )


# ---- integers with a scale ---------------------------------------------------------------------------
@dataclass(frozen=True)
class IntFormat:
    """A signed two's-complement integer of ``bits`` bits, used with a real scale (symmetric: no zero point).

    Values run from ``-2^(bits-1)`` to ``2^(bits-1) - 1`` (-128..127 for INT8); an absmax scale maps
    ``max|x|`` to ``max_value``, so quantized data use ``-max_value..max_value``.
    """

    name: str
    bits: int

    def __post_init__(self) -> None:
        if not isinstance(self.bits, (int, np.integer)) or isinstance(self.bits, bool) or not 2 <= self.bits <= 32:
            raise ValueError(f"bits must be an integer in 2..32, got {self.bits!r}")

    @property
    def min_value(self) -> int:
        return -(1 << (self.bits - 1))

    @property
    def max_value(self) -> int:
        return (1 << (self.bits - 1)) - 1

    @property
    def storage_dtype(self) -> np.dtype:
        """The NumPy dtype :func:`quantize_int` returns (int8 also holds INT4 values)."""
        for dtype in (np.int8, np.int16, np.int32):
            if self.bits <= np.iinfo(dtype).bits:
                return np.dtype(dtype)
        raise AssertionError("unreachable: bits <= 32 is checked in __post_init__")


INT_FORMATS: Mapping[str, IntFormat] = MappingProxyType({"int8": IntFormat("int8", 8), "int4": IntFormat("int4", 4)})


def _int_format(fmt, arg: str = "fmt") -> IntFormat:
    return lookup(fmt, IntFormat, INT_FORMATS, arg)


def get_int_format(name_or_format) -> IntFormat:
    """The :class:`IntFormat` named ``name_or_format`` ("int8", "int4"); an IntFormat is returned unchanged."""
    return _int_format(name_or_format, "name_or_format")


def _check_scale(scale) -> np.ndarray:
    array = _as_float64(scale, "scale")
    if not (np.all(np.isfinite(array)) and np.all(array > 0)):
        bad = array[~(np.isfinite(array) & (array > 0))].flat[0]
        raise ValueError(f"scale must be finite and > 0, got {bad!r}")
    return array


def absmax_scale(x, fmt, axis=None) -> np.ndarray:
    """The symmetric scale ``max|x| / fmt.max_value`` (over ``axis``, kept as a broadcastable dimension).

    An all-zero slice gets scale 1.0 (any positive scale quantizes zeros exactly). Returns a float64
    scalar for ``axis=None``.
    """
    fmt = _int_format(fmt)
    values = _as_float64(x)
    if not np.all(np.isfinite(values)):
        raise ValueError("x must be finite to take an absmax scale, got a non-finite value")
    if values.size == 0:
        raise ValueError("x must not be empty")
    absmax = np.max(np.abs(values), axis=axis, keepdims=axis is not None)
    scale = np.where(absmax > 0, absmax / fmt.max_value, 1.0)
    return scale[()] if axis is None else scale


def quantize_int(x, fmt, scale) -> np.ndarray:
    """``clip(rint(x / scale), min_value, max_value)`` as ``fmt.storage_dtype`` (ties to even).

    ``scale``: a positive finite float or an array broadcastable against ``x`` (per-channel scales).
    """
    fmt = _int_format(fmt)
    scale_array = _check_scale(scale)
    values = _as_float64(x)
    if not np.all(np.isfinite(values)):
        raise ValueError("x must be finite to quantize to integers, got a non-finite value")
    q = np.clip(np.rint(values / scale_array), fmt.min_value, fmt.max_value).astype(fmt.storage_dtype)
    return q[()] if q.ndim == 0 else q


def dequantize_int(q, scale) -> np.ndarray:
    """``q * scale`` in float64."""
    scale_array = _check_scale(scale)
    codes = np.asarray(q)
    if codes.dtype.kind not in "iu":
        raise ValueError(f"q must hold integers, got dtype {codes.dtype}")
    result = codes.astype(np.float64) * scale_array
    return result[()] if result.ndim == 0 else result


_SPECIALS_TEXT = {"ieee": "inf, NaN", "fn": "NaN only", "none": "none"}


def formats_table_rows(names: Sequence[str] | None = None) -> list[dict[str, str]]:
    """One row of display strings per floating-point format (all of :data:`FORMATS` by default), for
    :data:`gpuperf.plotting.tables.FORMAT_COLUMNS`."""
    rows = []
    for name in (FORMATS if names is None else names):
        f = get_format(name)
        rows.append({
            "name": f.name,
            "bits": f"{f.total_bits}",
            "layout": f"{'S1 ' if f.signed else ''}E{f.exponent_bits} M{f.mantissa_bits}",
            "bias": f"{f.bias}",
            "max": f"{f.max_value:.4g}",
            "min_normal": f"{f.min_normal:.3g}",
            "min_subnormal": f"{f.min_subnormal:.3g}" if f.has_subnormals else "none",
            "epsilon": f"{f.machine_epsilon:.3g}",
            "specials": _SPECIALS_TEXT[f.specials],
        })
    return rows
