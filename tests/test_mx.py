"""gpuperf.mx: OCP MX block scaling against the spec's formula and a per-block reference written with loops."""

import dataclasses
import math

import numpy as np
import pytest

from gpuperf.formats import FORMATS, decode, representable_values, round_to_format, spacing
from gpuperf.mx import (
    MX_FORMATS,
    SCALE_FORMAT,
    MXFormat,
    MXTensor,
    compare_transposed_quantization,
    get_mx_format,
    mx_dequantize,
    mx_quantize,
    mx_requantize,
    per_tensor_quantize,
    relative_error,
)

ELEMENT_EMAX = {"mxfp8_e4m3": 8, "mxfp8_e5m2": 15, "mxfp6_e3m2": 4, "mxfp6_e2m3": 2, "mxfp4_e2m1": 2}


def reference_block(block: list[float], fmt: MXFormat) -> tuple[int, list[float]]:
    """One block by the spec, with Python scalars: the scale by searching powers of two, the elements
    by nearest-value search in the list of representable values (ties to the even code), clamped."""
    absmax = max(abs(v) for v in block)
    if absmax == 0:
        return -127, [0.0] * len(block)
    k = 0
    while 2.0**k > absmax:
        k -= 1
    while 2.0 ** (k + 1) <= absmax:
        k += 1
    shared = max(k - fmt.element.max_exponent, -127)
    grid = [float(v) for v in representable_values(fmt.element) if v >= 0]  # position = magnitude code
    out = []
    for v in block:
        a = min(abs(v) / 2.0**shared, grid[-1])
        distances = [abs(a - g) for g in grid]
        best = min(distances)
        ties = [i for i, d in enumerate(distances) if d == best]
        i = next((i for i in ties if i % 2 == 0), ties[0])
        out.append(math.copysign(grid[i], v))
    return shared, out


def outlier_data(rng, shape, fraction=0.01, magnitude=1000.0):
    x = rng.standard_normal(shape)
    outliers = rng.random(shape) < fraction
    x[outliers] *= magnitude
    return x, outliers


# ---- formats ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(MX_FORMATS))
def test_formats_closed_forms(name):
    fmt = get_mx_format(name)
    assert fmt.block_size == 32
    assert fmt.element_max_exponent == ELEMENT_EMAX[name]
    assert 2.0**fmt.element_max_exponent <= fmt.element.max_value < 2.0 ** (fmt.element_max_exponent + 1)
    bits = {"mxfp8": 8, "mxfp6": 6, "mxfp4": 4}[name[:5]]
    assert fmt.bits_per_element == bits + 0.25


def test_scale_format_is_e8m0():
    assert SCALE_FORMAT is FORMATS["e8m0"]
    assert (SCALE_FORMAT.min_exponent, SCALE_FORMAT.max_exponent) == (-127, 127)


# ---- quantization matches the spec ------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(MX_FORMATS))
@pytest.mark.parametrize("shape, axis", [((7, 96), -1), ((64, 5), 0), ((3, 32, 2), 1)])
def test_matches_per_block_reference(name, shape, axis):
    fmt = get_mx_format(name)
    rng = np.random.default_rng([sum(map(ord, name)), *shape])
    x = rng.standard_normal(shape) * np.exp2(rng.integers(-20, 20, shape))  # blocks spanning decades
    q = mx_quantize(x, fmt, axis=axis)
    moved_x = np.moveaxis(x, axis, -1).reshape(-1, 32)
    moved_elements = np.moveaxis(q.elements, axis, -1).reshape(-1, 32)
    moved_scales = np.moveaxis(q.scale_exponents, axis, -1).reshape(-1)
    for block, elements, scale in zip(moved_x, moved_elements, moved_scales):
        ref_scale, ref_elements = reference_block(block.tolist(), fmt)
        assert scale == ref_scale
        assert elements.tolist() == ref_elements


@pytest.mark.parametrize("name", list(MX_FORMATS))
def test_scale_puts_the_block_maximum_in_the_top_binade(name):
    fmt = get_mx_format(name)
    rng = np.random.default_rng(11)
    x = rng.standard_normal((50, 64)) * np.exp2(rng.uniform(-30, 30, (50, 1)))
    q = mx_quantize(x, fmt)
    absmax = np.abs(x).reshape(50, 2, 32).max(axis=-1)
    top = np.ldexp(1.0, q.scale_exponents.astype(int) + fmt.element_max_exponent)
    assert np.all((top <= absmax) & (absmax < 2 * top))
    assert np.all(np.abs(q.elements) <= fmt.element.max_value)
    assert np.array_equal(q.elements, round_to_format(q.elements, fmt.element))  # valid element values
    assert np.array_equal(decode(q.scale_bits, SCALE_FORMAT), np.ldexp(1.0, q.scale_exponents.astype(int)))


def test_the_largest_element_can_be_clamped():
    """With absmax = 511 the scaled maximum lies in E4M3's top binade above 448: it saturates."""
    x = np.zeros(32)
    x[0] = 511.0
    q = mx_quantize(x, "mxfp8_e4m3")
    assert q.scale_exponents.tolist() == [0]
    assert mx_dequantize(q)[0] == 448.0
    x[0] = 100.0  # 100 / 2^-2 = 400 is a tie between 384 and 416: the even mantissa wins
    assert mx_dequantize(mx_quantize(x, "mxfp8_e4m3"))[0] == 96.0


@pytest.mark.parametrize("name", list(MX_FORMATS))
def test_dequantize_error_bound(name):
    """Each entry is off by at most half an element ulp, or by the clamping of the top binade, times 2^s."""
    fmt = get_mx_format(name)
    rng = np.random.default_rng(12)
    x = rng.standard_normal((31, 160)) * np.exp2(rng.uniform(-10, 10, (31, 1)))
    q = mx_quantize(x, fmt)
    x_hat = mx_dequantize(q)
    scales = q.element_scales()
    scaled = np.abs(x) / scales
    clamp_excess = np.maximum(scaled - fmt.element.max_value, 0)
    inside = np.minimum(scaled, fmt.element.max_value)
    bound = scales * np.maximum(spacing(inside, fmt.element) / 2, clamp_excess)
    assert np.all(np.abs(x - x_hat) <= bound)
    # and the bound is reached somewhere (it is not loose by a factor)
    assert np.max(np.abs(x - x_hat) / np.where(bound > 0, bound, 1)) > 0.9


def test_exact_values_survive():
    e4m3 = representable_values("fp8_e4m3fn")
    x = np.concatenate([e4m3[e4m3 > 0][-32:], -e4m3[e4m3 > 0][:32]]) * 2.0**-5  # block maxima 448 * 2^-5 exactly
    assert np.array_equal(mx_dequantize(mx_quantize(x, "mxfp8_e4m3")), x)


def test_zero_blocks_and_tiny_blocks():
    x = np.zeros((2, 64))
    x[1, 40] = 2.0**-140  # block maximum below 2^(-127 + emax): the scale clamps at 2^-127
    q = mx_quantize(x, "mxfp8_e4m3")
    assert q.scale_exponents.tolist() == [[-127, -127], [-127, -127]]
    assert q.scale_bits.tolist() == [[0, 0], [0, 0]]
    assert np.array_equal(mx_dequantize(q)[0], np.zeros(64))
    # 2^-140 / 2^-127 = 2^-13 is below E4M3's smallest subnormal 2^-9: it flushes to zero
    assert mx_dequantize(q)[1, 40] == 0.0
    x[1, 40] = 2.0**-133  # 2^-6 after scaling: E4M3's smallest normal, kept exactly
    assert mx_dequantize(mx_quantize(x, "mxfp8_e4m3"))[1, 40] == 2.0**-133


# ---- shapes, padding and validation ----------------------------------------------------------------------
def test_block_size_must_divide_the_axis_unless_padding():
    x = np.random.default_rng(1).standard_normal((3, 100))
    with pytest.raises(ValueError, match=r"block_size 32.*100.*axis -1"):
        mx_quantize(x, "mxfp4_e2m1")
    q = mx_quantize(x, "mxfp4_e2m1", pad=True)
    assert q.elements.shape == (3, 128) and q.scale_exponents.shape == (3, 4) and q.shape == (3, 100)
    x_hat = mx_dequantize(q)
    assert x_hat.shape == (3, 100)
    padded = np.concatenate([x, np.zeros((3, 28))], axis=1)
    assert np.array_equal(x_hat, mx_dequantize(mx_quantize(padded, "mxfp4_e2m1"))[:, :100])
    assert q.storage_bits == 3 * 128 * 4 + 3 * 4 * 8


def test_other_block_sizes():
    fmt = dataclasses.replace(get_mx_format("mxfp8_e4m3"), block_size=16)
    x = np.random.default_rng(2).standard_normal((5, 48))
    q = mx_quantize(x, fmt)
    assert q.scale_exponents.shape == (5, 3)
    assert fmt.bits_per_element == 8.5
    with pytest.raises(ValueError, match=r"block_size.*0"):
        dataclasses.replace(fmt, block_size=0)


def test_bad_input_raises_value_error_naming_the_argument():
    with pytest.raises(ValueError, match=r"name_or_format.*mxfp8_e4m3.*'mxfp3'"):
        get_mx_format("mxfp3")
    with pytest.raises(ValueError, match=r"mx_format.*'fp8'"):
        mx_quantize(np.ones(32), "fp8")
    with pytest.raises(ValueError, match=r"x must be finite.*nan"):
        mx_quantize(np.full(32, np.nan), "mxfp8_e4m3")
    with pytest.raises(ValueError, match=r"x must be finite.*inf"):
        per_tensor_quantize([1.0, np.inf], "fp8_e4m3fn")
    with pytest.raises(ValueError, match=r"axis.*\[-2, 2\).*5"):
        mx_quantize(np.ones((32, 32)), "mxfp8_e4m3", axis=5)
    with pytest.raises(ValueError, match=r"x.*scalar"):
        mx_quantize(1.0, "mxfp8_e4m3")
    with pytest.raises(ValueError, match=r"element.*'fp5'"):
        MXFormat("bad", "fp5")
    with pytest.raises(ValueError, match=r"x_hat.*\(3,\)"):
        relative_error(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match=r"q must be an MXTensor"):
        mx_dequantize(np.ones(3))
    with pytest.raises(ValueError, match=r"x.*2-D"):
        compare_transposed_quantization(np.ones(32), "mxfp8_e4m3")
    with pytest.raises(ValueError, match=r"x holds values too large.*128 > 127"):
        mx_quantize(np.full(32, 2.0**130), "mxfp4_e2m1")  # floor(log2) 130 - emax 2 = 128
    with pytest.raises(ValueError, match=r"x must hold real numbers"):
        mx_quantize(np.ones(32, dtype=bool), "mxfp8_e4m3")
    with pytest.raises(ValueError, match=r"pad=True"):
        mx_quantize(np.ones((31, 4)), "mxfp8_e4m3", axis=0)


def test_largest_float32_still_gets_a_scale():
    """Every float32 block fits: max float32 is below 2^128, so s <= 127 - emax_elem."""
    x = np.full(32, np.finfo(np.float32).max, dtype=np.float32)
    for name, fmt in MX_FORMATS.items():
        q = mx_quantize(x, fmt)
        assert q.scale_exponents.tolist() == [127 - fmt.element_max_exponent], name
        assert mx_dequantize(q)[0] == fmt.element.max_value * 2.0 ** (127 - fmt.element_max_exponent)


# ---- MX vs one scale per tensor ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, magnitude", [("mxfp8_e4m3", 1e5), ("mxfp6_e3m2", 1e3), ("mxfp6_e2m3", 1e3), ("mxfp4_e2m1", 1e3)]
)
def test_mx_beats_per_tensor_scaling_on_outlier_data(name, magnitude):
    """With rare outliers far above the bulk, one scale per tensor pushes the bulk into the subnormals
    (or to zero); per-block scales only hurt the few blocks that hold an outlier."""
    fmt = get_mx_format(name)
    x, outliers = outlier_data(np.random.default_rng(13), (64, 256), fraction=0.0005, magnitude=magnitude)
    bulk = ~outliers
    mx_error = relative_error(x[bulk], mx_dequantize(mx_quantize(x, fmt))[bulk])
    tensor_error = relative_error(x[bulk], per_tensor_quantize(x, fmt.element)[bulk])
    assert mx_error * 5 < tensor_error


def test_e5m2_range_absorbs_outliers_even_per_tensor():
    """E5M2 spans 2^-16 .. 57344, about 32 binades: outliers 1e5x larger still leave the bulk normal."""
    x, outliers = outlier_data(np.random.default_rng(13), (64, 256), fraction=0.0005, magnitude=1e5)
    bulk = ~outliers
    mx_error = relative_error(x[bulk], mx_dequantize(mx_quantize(x, "mxfp8_e5m2"))[bulk])
    tensor_error = relative_error(x[bulk], per_tensor_quantize(x, "fp8_e5m2")[bulk])
    assert tensor_error < 1.1 * mx_error


def test_per_tensor_quantize_closed_forms():
    x = np.array([-6.0, 3.0, 1.2, 0.2])  # absmax 6 is E2M1's max: the scale is 1
    assert per_tensor_quantize(x, "fp4_e2m1").tolist() == [-6.0, 3.0, 1.0, 0.0]
    assert per_tensor_quantize(x * 1000, "fp4_e2m1").tolist() == [-6000.0, 3000.0, 1000.0, 0.0]
    assert per_tensor_quantize(np.zeros(4), "fp8_e4m3fn").tolist() == [0.0] * 4
    assert per_tensor_quantize([127.0, 0.6, -1.4], "int8").tolist() == [127.0, 1.0, -1.0]


def test_relative_error_closed_forms():
    assert relative_error([3.0, 4.0], [3.0, 4.0]) == 0.0
    assert relative_error([3.0, 4.0], [0.0, 4.0]) == 0.6
    assert relative_error([0.0], [0.0]) == 0.0 and relative_error([0.0], [1.0]) == math.inf


# ---- the transposition wrinkle ---------------------------------------------------------------------------------
def test_requantizing_along_the_other_axis_differs_from_quantizing_the_original():
    rng = np.random.default_rng(14)
    x = rng.standard_normal((96, 64))
    rows = mx_quantize(x, "mxfp8_e4m3", axis=1)
    from_rows = mx_requantize(rows, axis=0)
    direct = mx_quantize(x, "mxfp8_e4m3", axis=0)
    assert isinstance(from_rows, MXTensor) and from_rows.axis == 0
    assert from_rows.scale_exponents.shape == direct.scale_exponents.shape == (3, 64)
    differing = mx_dequantize(from_rows) != mx_dequantize(direct)
    result = compare_transposed_quantization(x, "mxfp8_e4m3")
    assert result.fraction_differing == np.mean(differing) > 0
    assert result.column_direct_error == relative_error(x, mx_dequantize(direct))
    assert result.row_error == relative_error(x, mx_dequantize(rows))
    # a column of the row-quantized tensor crosses blocks with different scales: one scale cannot cover it
    assert len(np.unique(rows.scale_exponents[:32, 0])) > 1


def test_requantizing_along_the_same_axis_is_idempotent():
    x = np.random.default_rng(15).standard_normal((8, 64))
    q = mx_quantize(x, "mxfp6_e3m2", axis=1)
    again = mx_requantize(q, axis=1)
    assert np.array_equal(again.elements, q.elements)
    assert np.array_equal(again.scale_exponents, q.scale_exponents)


# ---- the scale rounded up (NVIDIA's MXFP8 recipe) and NVFP4 -----------------------------------------------
from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from gpuperf.mx import (  # noqa: E402
    NVFP4_BITS_PER_ELEMENT,
    SCALE_RULES,
    nvfp4_dequantize,
    nvfp4_quantize,
    shared_exponents,
)


def reference_ceil_exponent(absmax: float, max_value: float) -> int:
    """The smallest integer s with absmax / 2^s <= max_value, by search with Python floats."""
    s = -200
    while absmax / 2.0**s > max_value:
        s += 1
    return s


@settings(max_examples=300, deadline=None)
@given(absmax=st.floats(min_value=1e-30, max_value=1e30), name=st.sampled_from(sorted(MX_FORMATS)))
def test_ceil_rule_matches_a_search_and_never_clamps(absmax, name):
    fmt = get_mx_format(name)
    s = int(shared_exponents(np.array([absmax]), fmt, "ceil")[0])
    assert s == reference_ceil_exponent(absmax, fmt.element.max_value)
    assert absmax / 2.0**s <= fmt.element.max_value < absmax / 2.0 ** (s - 1)


@settings(max_examples=300, deadline=None)
@given(absmax=st.floats(min_value=1e-30, max_value=1e30), name=st.sampled_from(sorted(MX_FORMATS)))
def test_floor_rule_is_the_spec_formula_and_ceil_is_never_smaller(absmax, name):
    fmt = get_mx_format(name)
    floor_s = int(shared_exponents(np.array([absmax]), fmt, "floor")[0])
    assert floor_s == math.floor(math.log2(absmax)) - fmt.element_max_exponent or (
        2.0 ** (floor_s + fmt.element_max_exponent) <= absmax < 2.0 ** (floor_s + fmt.element_max_exponent + 1)
    )
    # floor(log2 a) - emax <= ceil(log2(a / max)) <= that + 1, since 2^emax <= max < 2^(emax + 1)
    ceil_s = int(shared_exponents(np.array([absmax]), fmt, "ceil")[0])
    assert floor_s <= ceil_s <= floor_s + 1


def test_ceil_rule_stores_511_without_clamping():
    x = np.zeros(32)
    x[0] = 511.0
    q = mx_quantize(x, "mxfp8_e4m3", scale_rule="ceil")
    assert q.scale_exponents.tolist() == [1] and q.scale_rule == "ceil"
    assert mx_dequantize(q)[0] == 512.0  # 255.5 rounds to 256 in E4M3 (spacing 16 there), times 2
    assert mx_dequantize(mx_quantize(x, "mxfp8_e4m3"))[0] == 448.0  # the spec's rule clamps it
    assert mx_requantize(q, axis=0).scale_rule == "ceil"


@pytest.mark.parametrize("name", list(MX_FORMATS))
def test_ceil_rule_error_bound_without_clamping(name):
    """Under the ceil rule every entry is within half an element ulp of its scaled value, times 2^s."""
    fmt = get_mx_format(name)
    rng = np.random.default_rng(21)
    x = rng.standard_normal((40, 64)) * np.exp2(rng.uniform(-20, 20, (40, 1)))
    q = mx_quantize(x, fmt, scale_rule="ceil")
    scales = q.element_scales()
    assert np.all(np.abs(x / scales) <= fmt.element.max_value)
    half_ulp = spacing(np.abs(x / scales), fmt.element) / 2
    assert np.all(np.abs(mx_dequantize(q) - x) <= half_ulp * scales * (1 + 1e-12))


def test_scale_rule_must_be_known():
    with pytest.raises(ValueError, match="scale_rule"):
        mx_quantize(np.ones(32), "mxfp8_e4m3", scale_rule="round")
    assert SCALE_RULES == ("floor", "ceil")


def test_nvfp4_closed_forms_and_exact_values():
    assert NVFP4_BITS_PER_ELEMENT == 4.5
    grid = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6] * 2, dtype=float)
    x = np.concatenate([grid, -grid])  # amax 6: s_enc = 448, every block scale 448 (exact in E4M3)
    q = nvfp4_quantize(x)
    assert q.tensor_scale == 448.0 and q.block_scales.tolist() == [448.0, 448.0]
    assert np.array_equal(nvfp4_dequantize(q), x)
    zero = nvfp4_quantize(np.zeros(32))
    assert np.all(nvfp4_dequantize(zero) == 0) and np.all(zero.block_scales == 0)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), spread=st.floats(0, 12))
@example(seed=450672395, spread=8.575422439857032)  # a block scale subnormal in E4M3 (found on the H200 run)
def test_nvfp4_against_a_loop_reference(seed, spread):
    """Each entry equals a per-block reference written with Python scalars, and the error per entry is at
    most one E2M1 unit (half the spacing of 2 near the top, or the saturation from a rounded-down scale)
    times the block's effective scale."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 48)) * np.exp2(rng.uniform(-spread, spread, (3, 1)))
    q = nvfp4_quantize(x)
    e4m3, e2m1 = FORMATS["fp8_e4m3fn"], FORMATS["fp4_e2m1"]
    s_enc = float(np.float32(448 * 6 / np.abs(x).max()))
    grid = [float(v) for v in representable_values(e2m1) if v >= 0]
    y = nvfp4_dequantize(q)
    for r in range(3):
        for b in range(3):
            block = x[r, 16 * b:16 * (b + 1)]
            scale = float(round_to_format(np.abs(block).max() / 6 * s_enc, e4m3, overflow="saturate"))
            assert q.block_scales[r, b] == scale
            if scale == 0:  # the block's scale underflowed E4M3 (a block far smaller than the tensor's max)
                assert np.all(y[r, 16 * b:16 * (b + 1)] == 0)
                assert np.abs(block).max() / 6 * s_enc < FORMATS["fp8_e4m3fn"].min_subnormal
                continue
            for j, v in enumerate(block):
                a = min(abs(v) * s_enc / scale, 6.0)
                best = min(grid, key=lambda g: (abs(a - g), grid.index(g) % 2))
                assert y[r, 16 * b + j] == pytest.approx(math.copysign(best, v) * scale / s_enc, rel=1e-12, abs=0)
                # one E2M1 unit (half the spacing of 2 near 6) inside the grid; past 6 the saturation error
                # a - 6, which a subnormal E4M3 block scale (rounded down by up to half its spacing) can make
                # larger than one unit (seed 450672395, spread 8.58: a = 7.42)
                units = max(1.0, abs(v) * s_enc / scale - 6.0)
                assert abs(y[r, 16 * b + j] - v) <= units * scale / s_enc * (1 + 1e-12)


def test_nvfp4_bad_input():
    with pytest.raises(ValueError, match="multiple of 16"):
        nvfp4_quantize(np.ones(24))
    with pytest.raises(ValueError, match="x must be finite"):
        nvfp4_quantize(np.array([np.inf] * 16))
    with pytest.raises(ValueError, match="q must be"):
        nvfp4_dequantize(np.ones(16))
