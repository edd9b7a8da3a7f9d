"""OCP Microscaling (MX) block formats: one power-of-two scale shared by each block of elements.

An MX block holds ``block_size`` (32 in the spec) elements of a narrow float format (FP8 E4M3 or E5M2,
FP6 E3M2 or E2M3, FP4 E2M1) and one 8-bit E8M0 scale ``X = 2^s``; element ``i`` stands for ``X * P_i``.
Conversion follows OCP Microscaling Formats (MX) Specification v1.0 (2023), section 6.3, which says it in
words: ``X`` is the largest power of two not above ``max_i |V_i|``, divided by the largest power of two the
element format holds; ``V_i / X`` is quantized to the element format, values past its largest normal
clamped to it with their sign; round-to-nearest-even must be supported. Algorithm 1 of Rouhani et al.
(2023, "Microscaling Data Formats for Deep Learning") writes the same rule as

    s   = floor(log2(max_i |V_i|)) - emax_elem      (emax_elem: exponent of the element format's max)
    P_i = V_i / 2^s rounded to the element format (nearest, ties to even), saturating at +-max

so the block's largest magnitude lands in the element format's top binade. Because the top binade can
hold values above ``max_value`` (up to ``2^(emax+1)``), the largest element may be clamped: that clamping
is part of the spec's algorithm.

**Two scale rules.** ``scale_rule="floor"`` (the default) is the spec's rule above. Because it puts the
block maximum anywhere in the top binade, E4M3 blocks whose maximum lands in (448, 512) are clamped to 448.
``scale_rule="ceil"`` rounds the scale *up* instead, ``s = ceil(log2(max_i |V_i| / max_value))``, so the
block maximum never exceeds the element format's largest value and nothing is clamped; NVIDIA's MXFP8
pre-training recipe uses it (Mishra et al. 2025, "Recipes for Pre-training LLMs with MXFP8",
arXiv:2506.08027, section 3), and Blackwell's conversion instructions offer it as round-toward-+inf
scaling. The price is that the block maximum may use only part of the top binade.

**NVFP4** (:func:`nvfp4_quantize`) is NVIDIA's other 4-bit block format (NVIDIA, "Introducing NVFP4",
2025; "Pretraining Large Language Models with NVFP4", arXiv:2509.25149, section 2): FP4 E2M1 elements in
blocks of 16, each block with an FP8 **E4M3** scale (a real number with 3 mantissa bits, not a power of
two), and one FP32 scale for the whole tensor that brings the block scales into E4M3's range. It costs
4 + 8/16 = 4.5 bits per element (plus 32 bits per tensor).

Choices where the spec leaves room (documented here, tested in ``tests/test_mx.py``):

* ``scale_exponents`` are stored **unbiased** (``X = 2^scale_exponents``); :attr:`MXTensor.scale_bits`
  gives the biased E8M0 codes (``s + 127``).
* An all-zero block gets the smallest scale, ``s = -127``, and zero elements. Shared exponents below
  -127 are clamped to -127 (the block's elements then fall into the element format's subnormals).
* Inputs must be finite: a block holding Inf or NaN is outside this model (a ``ValueError`` naming
  ``x``), and so is a block whose shared exponent would exceed E8M0's 127 (possible for float64 input only).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

import numpy as np

from gpuperf.formats import (
    FORMATS,
    FloatFormat,
    IntFormat,
    _format,
    _int_format,
    absmax_scale,
    dequantize_int,
    lookup,
    quantize_int,
    round_to_format,
)

#: The scale format and its exponent range (OCP MX v1.0, section 5.4.1: E8M0, bias 127, 0xFF is NaN).
SCALE_FORMAT: FloatFormat = FORMATS["e8m0"]
SCALE_MIN_EXPONENT = SCALE_FORMAT.min_exponent  # -127
SCALE_MAX_EXPONENT = SCALE_FORMAT.max_exponent  # 127


@dataclass(frozen=True)
class MXFormat:
    """An MX format: an element format, a block size, and an E8M0 scale per block.

    ``element`` may be given as a :class:`~gpuperf.formats.FloatFormat` or its name. Block sizes other
    than the spec's 32 are allowed for exploration (``dataclasses.replace(fmt, block_size=16)``).
    """

    name: str
    element: FloatFormat
    block_size: int = 32

    def __post_init__(self) -> None:
        object.__setattr__(self, "element", _format(self.element, "element"))
        size = self.block_size
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 1:
            raise ValueError(f"block_size must be a positive integer, got {size!r}")

    @property
    def element_max_exponent(self) -> int:
        """``emax_elem``: the unbiased exponent of the element format's largest normal value."""
        return self.element.max_exponent

    @property
    def bits_per_element(self) -> float:
        """Storage bits per element including its share of the 8-bit scale (8.25 for MXFP8)."""
        return self.element.total_bits + SCALE_FORMAT.total_bits / self.block_size


MX_FORMATS: Mapping[str, MXFormat] = MappingProxyType(
    {
        "mxfp8_e4m3": MXFormat("mxfp8_e4m3", FORMATS["fp8_e4m3fn"]),
        "mxfp8_e5m2": MXFormat("mxfp8_e5m2", FORMATS["fp8_e5m2"]),
        "mxfp6_e3m2": MXFormat("mxfp6_e3m2", FORMATS["fp6_e3m2"]),
        "mxfp6_e2m3": MXFormat("mxfp6_e2m3", FORMATS["fp6_e2m3"]),
        "mxfp4_e2m1": MXFormat("mxfp4_e2m1", FORMATS["fp4_e2m1"]),
    }
)


def _mx_format(fmt, arg: str = "mx_format") -> MXFormat:
    return lookup(fmt, MXFormat, MX_FORMATS, arg)


def get_mx_format(name_or_format) -> MXFormat:
    """The :class:`MXFormat` named ``name_or_format`` (a key of :data:`MX_FORMATS`); an MXFormat passes through."""
    return _mx_format(name_or_format, "name_or_format")


@dataclass(frozen=True, eq=False)
class MXTensor:
    """A tensor quantized to an MX format along one axis.

    ``elements``: float64 values of the element format, in the input's shape except that ``axis`` is
    padded with zeros up to a multiple of the block size. ``scale_exponents``: int16, unbiased, the
    same shape but with ``axis`` counting blocks; block ``b`` along ``axis`` covers elements
    ``b * block_size ... (b + 1) * block_size - 1`` and stands for ``elements * 2^scale_exponents[b]``.
    ``shape``: the original (unpadded) shape; ``axis``: non-negative.
    """

    scale_exponents: np.ndarray
    elements: np.ndarray
    axis: int
    shape: tuple
    mx_format: MXFormat
    scale_rule: str = "floor"

    @property
    def scale_bits(self) -> np.ndarray:
        """The scales as E8M0 codes (``scale_exponents + 127``, uint8)."""
        return (self.scale_exponents.astype(np.int64) - SCALE_MIN_EXPONENT).astype(np.uint8)

    @property
    def storage_bits(self) -> int:
        """Bits to store the tensor: every (padded) element plus one 8-bit scale per block."""
        return int(self.elements.size * self.mx_format.element.total_bits + self.scale_exponents.size * SCALE_FORMAT.total_bits)

    def element_scales(self) -> np.ndarray:
        """The scale ``2^s`` of each element, broadcast to ``elements``' shape (float64)."""
        return np.repeat(np.ldexp(1.0, self.scale_exponents.astype(np.int64)), self.mx_format.block_size, axis=self.axis)


def _finite_array(x, arg: str = "x") -> np.ndarray:
    array = np.asarray(x)
    if array.dtype.kind not in "fiu":
        raise ValueError(f"{arg} must hold real numbers, got dtype {array.dtype}")
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{arg} must be finite, got {array[~np.isfinite(array)].flat[0]!r}")
    return array


def _normalize_axis(axis, ndim: int) -> int:
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) or not -ndim <= axis < ndim:
        raise ValueError(f"axis must be an integer in [{-ndim}, {ndim}), got {axis!r}")
    return int(axis) % ndim


#: The scale rules :func:`mx_quantize` offers (module docstring): the spec's, and rounding the scale up.
SCALE_RULES = ("floor", "ceil")


def _check_scale_rule(scale_rule) -> str:
    if scale_rule not in SCALE_RULES:
        raise ValueError(f"scale_rule must be one of {SCALE_RULES}, got {scale_rule!r}")
    return scale_rule


def shared_exponents(absmax, mx_format, scale_rule: str = "floor") -> np.ndarray:
    """The unbiased shared exponent ``s`` of blocks whose largest magnitudes are ``absmax`` (int64 array).

    ``"floor"`` (OCP MX v1.0, 6.3): ``floor(log2 absmax) - emax_elem``. ``"ceil"`` (Mishra et al. 2025):
    ``ceil(log2(absmax / max_value))``, the smallest ``s`` with ``absmax / 2^s <= max_value``. Both are
    computed exactly with ``frexp`` (no floating-point log). Zero blocks get -127; nothing is clamped here.
    """
    fmt = _mx_format(mx_format)
    rule = _check_scale_rule(scale_rule)
    absmax = np.asarray(absmax, dtype=np.float64)
    if rule == "floor":
        _, k = np.frexp(absmax)  # absmax = f * 2^k, f in [0.5, 1): floor(log2 absmax) = k - 1
        shared = k.astype(np.int64) - 1 - fmt.element_max_exponent
    else:
        ratio = absmax / fmt.element.max_value  # exact up to one rounding; fixed below
        f, k = np.frexp(ratio)  # ratio = f * 2^k: ceil(log2 ratio) = k - 1 if f == 0.5 else k
        shared = np.where(f == 0.5, k - 1, k).astype(np.int64)
        # Guard the division's rounding: step up while the scaled maximum still exceeds max_value.
        too_big = np.ldexp(absmax, -shared) > fmt.element.max_value
        shared = np.where(too_big, shared + 1, shared)
    return np.where(absmax > 0, shared, SCALE_MIN_EXPONENT)


def mx_quantize(x, mx_format, axis: int = -1, pad: bool = False, scale_rule: str = "floor") -> MXTensor:
    """Quantize ``x`` (at least 1-D, finite) to ``mx_format`` in blocks along ``axis`` (OCP MX v1.0, 6.3).

    The block size must divide ``x.shape[axis]`` unless ``pad=True``, which pads the axis with zeros
    (zeros change no block's maximum). ``scale_rule``: ``"floor"`` (the spec's rule, default) or
    ``"ceil"`` (the scale rounded up, as NVIDIA's MXFP8 recipe does; module docstring). Raises
    ``ValueError`` naming the argument otherwise.
    """
    fmt = _mx_format(mx_format)
    rule = _check_scale_rule(scale_rule)
    values = _finite_array(x)
    if values.ndim == 0:
        raise ValueError("x must have at least one dimension, got a scalar")
    ax = _normalize_axis(axis, values.ndim)
    length, block = values.shape[ax], fmt.block_size
    remainder = length % block
    if remainder and not pad:
        raise ValueError(
            f"block_size {block} must divide the length {length} of axis {axis} "
            f"(or pass pad=True to pad with zeros)"
        )
    moved = np.moveaxis(values, ax, -1)
    if remainder:
        moved = np.concatenate([moved, np.zeros(moved.shape[:-1] + (block - remainder,))], axis=-1)
    blocks = moved.reshape(moved.shape[:-1] + (moved.shape[-1] // block, block))

    absmax = np.max(np.abs(blocks), axis=-1)
    shared = shared_exponents(absmax, fmt, rule)
    if np.any(shared > SCALE_MAX_EXPONENT):
        raise ValueError(f"x holds values too large for an E8M0 scale (shared exponent {int(shared.max())} > "
                         f"{SCALE_MAX_EXPONENT}), largest |x| {float(absmax.max())!r}")
    shared = np.maximum(shared, SCALE_MIN_EXPONENT)
    elements = round_to_format(np.ldexp(blocks, -shared[..., None]), fmt.element, overflow="saturate")
    elements = np.moveaxis(np.asarray(elements).reshape(moved.shape), -1, ax)
    return MXTensor(
        scale_exponents=np.moveaxis(shared, -1, ax).astype(np.int16),
        elements=elements,
        axis=ax,
        shape=tuple(values.shape),
        mx_format=fmt,
        scale_rule=rule,
    )


def mx_dequantize(q: MXTensor) -> np.ndarray:
    """The float64 tensor ``q`` stands for (original shape, padding removed). Exact: a power-of-two scaling."""
    if not isinstance(q, MXTensor):
        raise ValueError(f"q must be an MXTensor, got {type(q).__name__}")
    values = q.elements * q.element_scales()
    return np.take(values, np.arange(q.shape[q.axis]), axis=q.axis)


def mx_requantize(q: MXTensor, axis: int) -> MXTensor:
    """Dequantize ``q`` and quantize it again in blocks along ``axis`` (padding if needed).

    This is what a kernel must do to use a tensor quantized along one axis in a product that needs
    blocks along the other (e.g. a weight quantized along its input dimension for the forward pass,
    used transposed in the backward pass): the scales of the old blocks cannot be reused.
    """
    return mx_quantize(mx_dequantize(q), q.mx_format, axis=axis, pad=True, scale_rule=q.scale_rule)


@dataclass(frozen=True)
class TransposedQuantization:
    """Errors of MX-quantizing a 2-D tensor along rows, along columns, and along columns from the rows' copy.

    Errors are relative (see :func:`relative_error`) against the original tensor.
    ``fraction_differing``: the fraction of entries where column quantization of the original and of
    the row-quantized copy give different values.
    """

    row_error: float
    column_direct_error: float
    column_from_rows_error: float
    fraction_differing: float


def compare_transposed_quantization(
    x, mx_format, pad: bool = False, scale_rule: str = "floor"
) -> TransposedQuantization:
    """Quantify the transposition wrinkle of MX for a 2-D ``x`` (rows: axis 1, columns: axis 0).

    Quantizing the row-quantized tensor again along columns compounds two roundings; quantizing the
    original along columns needs the high-precision tensor. The two differ (``fraction_differing``).
    """
    values = _finite_array(x)
    if values.ndim != 2:
        raise ValueError(f"x must be 2-D, got shape {values.shape}")
    rows = mx_quantize(values, mx_format, axis=1, pad=pad, scale_rule=scale_rule)
    column_direct = mx_dequantize(mx_quantize(values, mx_format, axis=0, pad=pad, scale_rule=scale_rule))
    column_from_rows = mx_dequantize(
        mx_quantize(mx_dequantize(rows), mx_format, axis=0, pad=pad, scale_rule=scale_rule)
    )
    return TransposedQuantization(
        row_error=relative_error(values, mx_dequantize(rows)),
        column_direct_error=relative_error(values, column_direct),
        column_from_rows_error=relative_error(values, column_from_rows),
        fraction_differing=float(np.mean(column_direct != column_from_rows)),
    )


#: NVFP4's block size and bits per element (4-bit elements plus an 8-bit scale per 16).
NVFP4_BLOCK_SIZE = 16
NVFP4_BITS_PER_ELEMENT = 4 + 8 / NVFP4_BLOCK_SIZE


@dataclass(frozen=True, eq=False)
class NVFP4Tensor:
    """A tensor quantized to NVFP4 along its last axis (see :func:`nvfp4_quantize`).

    ``elements``: float64 E2M1 values, shape ``(..., blocks, 16)``; ``block_scales``: float64 E4M3 values,
    shape ``(..., blocks)``; ``tensor_scale``: the FP32 encode scale ``s_enc`` (stored values are
    ``x * s_enc / block_scale``). ``shape``: the original shape.
    """

    elements: np.ndarray
    block_scales: np.ndarray
    tensor_scale: float
    shape: tuple


def nvfp4_quantize(x) -> NVFP4Tensor:
    """Quantize ``x`` (at least 1-D, finite, last axis a multiple of 16) to NVFP4 along its last axis.

    Two-level scaling (arXiv:2509.25149, section 2 and Appendix; NVIDIA's NVFP4 blog): an FP32 tensor
    scale ``s_enc = (448 * 6) / max|x|`` maps the tensor's largest magnitude onto the largest value an
    E4M3 block scale times an E2M1 element can reach; each block of 16 gets the E4M3 scale
    ``fp8(max_b |x| / 6 * s_enc)`` (round to nearest, saturating); the elements are
    ``fp4(x * s_enc / scale_b)`` (round to nearest even, saturating at 6). An all-zero tensor or block
    gives zero scales and zero elements.
    """
    values = _finite_array(x)
    if values.ndim == 0:
        raise ValueError("x must have at least one dimension, got a scalar")
    if values.shape[-1] % NVFP4_BLOCK_SIZE:
        raise ValueError(f"x.shape[-1] must be a multiple of {NVFP4_BLOCK_SIZE}, got {values.shape[-1]}")
    e4m3, e2m1 = FORMATS["fp8_e4m3fn"], FORMATS["fp4_e2m1"]
    blocks = values.reshape(values.shape[:-1] + (-1, NVFP4_BLOCK_SIZE))
    tensor_amax = float(np.max(np.abs(values))) if values.size else 0.0
    if tensor_amax == 0.0:
        zeros = np.zeros(blocks.shape[:-1])
        return NVFP4Tensor(np.zeros_like(blocks), zeros, 1.0, tuple(values.shape))
    tensor_scale = float(np.float32(e4m3.max_value * e2m1.max_value / tensor_amax))
    block_amax = np.max(np.abs(blocks), axis=-1)
    block_scales = np.asarray(round_to_format(block_amax / e2m1.max_value * tensor_scale, e4m3, overflow="saturate"))
    safe = np.where(block_scales > 0, block_scales, 1.0)
    scaled = blocks * tensor_scale / safe[..., None]
    elements = np.asarray(round_to_format(scaled, e2m1, overflow="saturate"))
    elements = np.where(block_scales[..., None] > 0, elements, 0.0)
    return NVFP4Tensor(elements, block_scales, tensor_scale, tuple(values.shape))


def nvfp4_dequantize(q: NVFP4Tensor) -> np.ndarray:
    """The float64 tensor ``q`` stands for: ``elements * block_scale / tensor_scale``, original shape."""
    if not isinstance(q, NVFP4Tensor):
        raise ValueError(f"q must be an NVFP4Tensor, got {type(q).__name__}")
    return (q.elements * q.block_scales[..., None] / q.tensor_scale).reshape(q.shape)


def per_tensor_quantize(x, fmt) -> np.ndarray:
    """Quantize with one scale for the whole tensor and return the dequantized float64 values.

    ``fmt``: a float format (name or :class:`~gpuperf.formats.FloatFormat`) or an integer format
    ("int8", "int4" or :class:`~gpuperf.formats.IntFormat`). The scale maps ``max|x|`` onto the format's
    largest value (``max|x| / max_value``, a real number, as per-tensor FP8 recipes use); floats round
    to nearest, saturating. An all-zero ``x`` returns zeros.
    """
    values = _finite_array(x)
    if isinstance(fmt, IntFormat) or (isinstance(fmt, str) and fmt.lower().startswith("int")):
        int_fmt = _int_format(fmt)
        scale = absmax_scale(values, int_fmt) if values.size else 1.0
        return dequantize_int(quantize_int(values, int_fmt, scale), scale)
    float_fmt = _format(fmt)
    absmax = float(np.max(np.abs(values))) if values.size else 0.0
    if absmax == 0.0:
        return np.zeros_like(values)
    scale = absmax / float_fmt.max_value
    return np.asarray(round_to_format(values / scale, float_fmt, overflow="saturate")) * scale


def relative_error(x, x_hat) -> float:
    """``||x - x_hat||_2 / ||x||_2`` over all entries (0.0 when both are zero, inf when only ``x`` is)."""
    reference = _finite_array(x)
    approximation = np.asarray(x_hat, dtype=np.float64)
    if approximation.shape != reference.shape:
        raise ValueError(f"x_hat must have x's shape {reference.shape}, got {approximation.shape}")
    difference = float(np.linalg.norm((reference - approximation).ravel()))
    norm = float(np.linalg.norm(reference.ravel()))
    if norm == 0.0:
        return 0.0 if difference == 0.0 else float("inf")
    return difference / norm


__all__ = [
    "NVFP4Tensor",
    "NVFP4_BITS_PER_ELEMENT",
    "NVFP4_BLOCK_SIZE",
    "SCALE_RULES",
    "nvfp4_dequantize",
    "nvfp4_quantize",
    "shared_exponents",
    "MXFormat",
    "MXTensor",
    "MX_FORMATS",
    "SCALE_FORMAT",
    "TransposedQuantization",
    "compare_transposed_quantization",
    "get_mx_format",
    "mx_dequantize",
    "mx_quantize",
    "mx_requantize",
    "per_tensor_quantize",
    "relative_error",
]
