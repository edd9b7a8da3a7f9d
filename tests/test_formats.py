"""gpuperf.formats: closed forms, exhaustive and random agreement with PyTorch's casts, brute-force references."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf.formats import (
    FORMATS,
    INT_FORMATS,
    FloatFormat,
    IntFormat,
    absmax_scale,
    decode,
    dequantize_int,
    encode,
    fields,
    get_format,
    get_int_format,
    overflows,
    quantize_int,
    representable_values,
    round_to_format,
    spacing,
)

torch = pytest.importorskip("torch")

TORCH_DTYPES = {
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
    "fp8_e4m3fn": torch.float8_e4m3fn,
    "fp8_e5m2": torch.float8_e5m2,
}
SMALL_FORMATS = [name for name, f in FORMATS.items() if f.total_bits <= 16]
SUB_BYTE = ["fp6_e3m2", "fp6_e2m3", "fp4_e2m1"]


# ---- helpers ------------------------------------------------------------------------------------------
def torch_round(x32: np.ndarray, dtype) -> np.ndarray:
    """PyTorch's cast float32 -> dtype -> float64."""
    return torch.from_numpy(np.ascontiguousarray(x32)).to(dtype).to(torch.float64).numpy()


def torch_decode(bits: np.ndarray, dtype) -> np.ndarray:
    """Reinterpret integer patterns as dtype (PyTorch) and widen to float64."""
    view_as = {1: torch.uint8, 2: torch.int16}[torch.empty(0, dtype=dtype).element_size()]
    raw = bits.astype(np.uint8) if view_as is torch.uint8 else bits.astype(np.uint16).view(np.int16)
    return torch.from_numpy(raw).view(dtype).to(torch.float64).numpy()


def assert_bitwise_equal(ours, theirs, inputs, what: str) -> None:
    """float64 arrays equal bit for bit (so -0.0 != 0.0), NaN equal to NaN; explains the first mismatch."""
    ours, theirs = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
    same = (ours.view(np.int64) == theirs.view(np.int64)) | (np.isnan(ours) & np.isnan(theirs))
    if not same.all():
        i = int(np.flatnonzero(~same)[0])
        x = np.asarray(inputs).ravel()[i]
        raise AssertionError(
            f"{what}: {int((~same).sum())} of {same.size} differ; first at index {i}: input {x!r} "
            f"({float(x).hex()}), ours {ours.ravel()[i]!r}, reference {theirs.ravel()[i]!r}"
        )


def torch_e4m3_overflow_mode() -> str:
    """PyTorch 2.13 saturates float8_e4m3fn casts (pytorch#178817, April 2026); earlier versions give NaN."""
    probe = torch.tensor([1e6], dtype=torch.float32).to(torch.float8_e4m3fn).float().item()
    return "saturate" if probe == 448.0 else "nan"


def float32_mixture(fmt: FloatFormat, n: int, seed: int) -> np.ndarray:
    """Awkward float32 inputs for ``fmt``: random bit patterns, exact ties and their float32 neighbours,
    the subnormal range, the overflow boundary, log-uniform magnitudes, and specials."""
    rng = np.random.default_rng(seed)
    part = n // 5
    random_bits = rng.integers(0, 2**32, part, dtype=np.uint64).astype(np.uint32).view(np.float32)

    # ties: v + ulp(v)/2 for representable v (every value of a small format, a sample of a large one),
    # including the overflow tie max_value + ulp/2; kept where float32 holds the tie exactly
    if fmt.total_bits <= 16:
        lower = representable_values(fmt)
    else:
        lower = round_to_format(np.exp2(rng.uniform(-140, 127, 50_000)), fmt)
    lower = np.unique(np.append(lower[lower >= 0], fmt.max_value))
    midpoints = lower + spacing(lower, fmt) / 2
    with np.errstate(over="ignore"):
        exact = midpoints.astype(np.float32).astype(np.float64) == midpoints
    midpoints, lower = midpoints[exact].astype(np.float32), lower[exact].astype(np.float32)
    ties = np.concatenate(
        [midpoints, np.nextafter(midpoints, np.float32(np.inf)), np.nextafter(midpoints, np.float32(0)), lower]
    )
    ties = rng.choice(ties, part) * rng.choice(np.float32([-1, 1]), part)

    low = np.log2(fmt.min_subnormal) - 2
    high = np.log2(fmt.min_normal) + 1
    subnormal = np.exp2(rng.uniform(low, high, part)) * rng.choice([-1, 1], part)

    near_max = rng.uniform(0.9, 1.3, part) * fmt.max_value * rng.choice([-1, 1], part)

    log_uniform = np.exp2(rng.uniform(-150, 128.5, part)) * rng.choice([-1, 1], part)

    specials = np.array([np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0, 3.4028234663852886e38, 2.0**-149, -(2.0**-149)])
    with np.errstate(over="ignore", invalid="ignore"):
        parts = [random_bits, ties, subnormal, near_max, log_uniform, specials]
        return np.concatenate([np.asarray(p).astype(np.float32) for p in parts])


# ---- closed forms -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, max_value, min_normal, min_subnormal, epsilon, bits",
    [
        ("fp32", (2 - 2.0**-23) * 2.0**127, 2.0**-126, 2.0**-149, 2.0**-23, 32),
        ("tf32", (2 - 2.0**-10) * 2.0**127, 2.0**-126, 2.0**-136, 2.0**-10, 19),
        ("bf16", (2 - 2.0**-7) * 2.0**127, 2.0**-126, 2.0**-133, 2.0**-7, 16),
        ("fp16", 65504.0, 2.0**-14, 2.0**-24, 2.0**-10, 16),
        ("fp8_e4m3fn", 448.0, 2.0**-6, 2.0**-9, 0.125, 8),
        ("fp8_e5m2", 57344.0, 2.0**-14, 2.0**-16, 0.25, 8),
        ("fp6_e3m2", 28.0, 0.25, 0.0625, 0.25, 6),
        ("fp6_e2m3", 7.5, 1.0, 0.125, 0.125, 6),
        ("fp4_e2m1", 6.0, 1.0, 0.5, 0.5, 4),
        ("e8m0", 2.0**127, 2.0**-127, 2.0**-127, 1.0, 8),
    ],
)
def test_closed_forms(name, max_value, min_normal, min_subnormal, epsilon, bits):
    fmt = get_format(name)
    assert fmt.max_value == max_value == fmt.max_finite
    assert fmt.min_normal == min_normal
    assert fmt.min_subnormal == min_subnormal
    assert fmt.machine_epsilon == epsilon
    assert fmt.total_bits == bits


def test_bf16_max_is_about_3_39e38_and_fp32_matches_numpy():
    assert round(get_format("bf16").max_value / 1e38, 2) == 3.39
    info = np.finfo(np.float32)
    fp32 = get_format("fp32")
    assert (fp32.max_value, fp32.min_normal, fp32.machine_epsilon) == (info.max, info.tiny, info.eps)
    assert fp32.min_subnormal == info.smallest_subnormal


def test_specials_flags():
    assert [FORMATS[n].has_inf for n in ("fp16", "fp8_e4m3fn", "fp4_e2m1", "e8m0")] == [True, False, False, False]
    assert [FORMATS[n].has_nan for n in ("fp16", "fp8_e4m3fn", "fp4_e2m1", "e8m0")] == [True, True, False, True]
    assert not FORMATS["e8m0"].signed and not FORMATS["e8m0"].has_zero


@pytest.mark.parametrize("name", SMALL_FORMATS)
def test_representable_values_extremes_and_count(name):
    fmt = get_format(name)
    values = representable_values(fmt)
    assert np.all(np.diff(values) > 0)
    assert values[-1] == fmt.max_value
    positive = values[values > 0]
    assert positive[0] == fmt.min_subnormal
    if fmt.signed:
        assert values[0] == -fmt.max_value
        assert np.array_equal(values, -values[::-1])
    # count: all patterns, minus the non-finite ones, minus one for the duplicate zero
    n_special = {"ieee": 2 * (1 << fmt.mantissa_bits), "fn": 2 if fmt.signed else 1, "none": 0}[fmt.specials]
    n_zero_duplicates = 1 if fmt.signed else 0
    assert values.size == (1 << fmt.total_bits) - n_special - n_zero_duplicates


def test_named_values_in_the_sub_byte_formats():
    assert representable_values("fp4_e2m1")[7:].tolist() == [0, 0.5, 1, 1.5, 2, 3, 4, 6]
    e2m3 = representable_values("fp6_e2m3")
    assert e2m3[e2m3 >= 0][:9].tolist() == [k / 8 for k in range(9)]  # subnormals step by 1/8 up to 1
    assert representable_values("fp6_e3m2")[-4:].tolist() == [16, 20, 24, 28]


# ---- exhaustive decode and round trips against PyTorch --------------------------------------------------
@pytest.mark.parametrize("name", list(TORCH_DTYPES))
def test_decode_matches_torch_on_every_bit_pattern(name):
    fmt = get_format(name)
    bits = np.arange(1 << fmt.total_bits)
    assert_bitwise_equal(decode(bits, fmt), torch_decode(bits, TORCH_DTYPES[name]), bits, f"decode {name}")


def test_decode_matches_torch_for_e8m0():
    bits = np.arange(256)
    ours = decode(bits, "e8m0")
    theirs = torch.from_numpy(bits.astype(np.uint8)).view(torch.float8_e8m0fnu).to(torch.float64).numpy()
    assert_bitwise_equal(ours, theirs, bits, "decode e8m0")


@pytest.mark.parametrize("name", SMALL_FORMATS)
def test_encode_inverts_decode_on_every_bit_pattern(name):
    fmt = get_format(name)
    bits = np.arange(1 << fmt.total_bits)
    values = decode(bits, fmt)
    finite = ~np.isnan(values)
    round_trip = encode(values[finite], fmt, overflow="inf" if fmt.has_inf else "default")
    assert round_trip.dtype == fmt.bits_dtype
    assert np.array_equal(round_trip, bits[finite])
    assert np.all(np.isnan(decode(encode(values[~finite], fmt), fmt)))
    # every value is a fixed point of rounding
    assert_bitwise_equal(round_to_format(values, fmt), values, bits, f"round_to_format fixed points {name}")


@pytest.mark.parametrize("source", ["fp16", "bf16"])
@pytest.mark.parametrize("target", list(TORCH_DTYPES))
def test_rounding_every_16_bit_value_matches_torch(source, target):
    """All 65536 fp16 (or bf16) values, widened exactly to float32, cast to each target."""
    x32 = decode(np.arange(1 << 16), source).astype(np.float32)
    overflow = torch_e4m3_overflow_mode() if target == "fp8_e4m3fn" else "default"
    ours = round_to_format(x32, target, overflow=overflow)
    assert_bitwise_equal(ours, torch_round(x32, TORCH_DTYPES[target]), x32, f"{source} -> {target}")


# ---- millions of random float32 inputs against PyTorch --------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("name", list(TORCH_DTYPES))
def test_random_float32_matches_torch_cast(name):
    fmt = get_format(name)
    x32 = float32_mixture(fmt, 4_000_000, seed=sum(map(ord, name)))
    overflow = "default"
    if name == "fp8_e4m3fn" and torch_e4m3_overflow_mode() == "nan":
        overflow = "nan"  # an older PyTorch: compare with the OCP non-saturating mode instead
    ours = round_to_format(x32, fmt, overflow=overflow)
    assert_bitwise_equal(ours, torch_round(x32, TORCH_DTYPES[name]), x32, f"float32 -> {name}")


def test_random_float32_matches_torch_cast_quick():
    """A small version of the slow test, so a plain `pytest -m 'not slow'` still compares with PyTorch."""
    for name, dtype in TORCH_DTYPES.items():
        x32 = float32_mixture(get_format(name), 30_000, seed=1)
        overflow = torch_e4m3_overflow_mode() if name == "fp8_e4m3fn" else "default"
        assert_bitwise_equal(round_to_format(x32, name, overflow), torch_round(x32, dtype), x32, name)


def test_e4m3fn_default_overflow_saturates_like_this_torch():
    x = np.array([448.0, 464.0, 465.0, 480.0, 1e6, np.inf, -np.inf, np.nan])
    assert_bitwise_equal(round_to_format(x, "fp8_e4m3fn"), [448, 448, 448, 448, 448, 448, -448, np.nan], x, "sat")
    assert_bitwise_equal(
        round_to_format(x, "fp8_e4m3fn", overflow="nan"), [448, 448, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan], x, "nan"
    )
    if torch_e4m3_overflow_mode() == "saturate":
        assert_bitwise_equal(round_to_format(x, "fp8_e4m3fn"), torch_round(x.astype(np.float32), torch.float8_e4m3fn), x, "torch")


def test_e8m0_matches_torch_on_positive_normal_float32():
    """PyTorch's float8_e8m0fnu ignores the sign and treats float32 subnormals by their bit fields, so
    the comparison is over positive normal floats, inf and NaN (see round_to_format's docstring)."""
    x32 = np.abs(float32_mixture(get_format("e8m0"), 200_000, seed=8))
    x32 = x32[(x32 >= np.finfo(np.float32).tiny) | ~np.isfinite(x32)]
    x32 = np.concatenate([x32, np.float32([1.5, 3.0, 0.75, 2.0**127, 1.5 * 2.0**127, 1.4999999 * 2.0**127])])
    assert_bitwise_equal(round_to_format(x32, "e8m0"), torch_round(x32, torch.float8_e8m0fnu), x32, "e8m0")


# ---- independent references where PyTorch has no type ----------------------------------------------------
def brute_force_nearest_even(x: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Nearest value by exhaustive search; a tie goes to the neighbour whose magnitude code is even.

    Non-negative values of a format are listed in the order of their codes (0, 1, 2, ...), so the
    position of a value in the sorted list of non-negative values is its magnitude code.
    """
    grid = representable_values(fmt)
    grid = grid[grid >= 0]
    codes = np.arange(grid.size)
    a = np.abs(x)
    distance = np.abs(a[:, None] - grid[None, :])
    best = distance.min(axis=1, keepdims=True)
    candidates = distance == best
    even = candidates & (codes[None, :] % 2 == 0)
    choice = np.where(even.any(axis=1), even.argmax(axis=1), candidates.argmax(axis=1))
    return np.copysign(grid[choice], x)


@pytest.mark.parametrize("name", SUB_BYTE + ["fp8_e4m3fn"])
def test_sub_byte_rounding_matches_brute_force(name):
    fmt = get_format(name)
    rng = np.random.default_rng(7)
    grid = representable_values(fmt)
    midpoints = (grid[:-1] + grid[1:]) / 2
    x = np.concatenate(
        [
            rng.uniform(-1.2, 1.2, 40_000) * fmt.max_value,
            np.exp2(rng.uniform(np.log2(fmt.min_subnormal) - 3, np.log2(fmt.max_value), 40_000)) * rng.choice([-1, 1], 40_000),
            midpoints,
            np.nextafter(midpoints, np.inf),
            np.nextafter(midpoints, -np.inf),
            grid,
        ]
    )
    x = x[np.abs(x) <= fmt.max_value]  # beyond max the reference is saturation, checked below
    assert_bitwise_equal(round_to_format(x, fmt), brute_force_nearest_even(x, fmt), x, name)


@pytest.mark.parametrize("name", SUB_BYTE)
def test_sub_byte_formats_saturate(name):
    fmt = get_format(name)
    x = np.array([fmt.max_value * 1.01, -fmt.max_value * 50, np.inf, -np.inf, 1e300])
    assert round_to_format(x, fmt).tolist() == [fmt.max_value, -fmt.max_value, fmt.max_value, -fmt.max_value, fmt.max_value]
    assert np.isnan(round_to_format(np.nan, fmt))
    with pytest.raises(ValueError, match="x"):
        encode(np.nan, fmt)


def test_fp32_from_float64_matches_numpy_cast():
    rng = np.random.default_rng(3)
    x = np.concatenate(
        [
            rng.integers(0, 2**63, 200_000, dtype=np.int64).view(np.float64),  # any float64, specials included
            np.exp2(rng.uniform(-152, 129, 200_000)) * rng.choice([-1, 1], 200_000),
        ]
    )
    with np.errstate(over="ignore", invalid="ignore"):
        reference = x.astype(np.float32).astype(np.float64)
    assert_bitwise_equal(round_to_format(x, "fp32"), reference, x, "float64 -> fp32")


def test_tf32_matches_integer_round_to_nearest_even_on_float32_bits():
    x32 = float32_mixture(get_format("tf32"), 300_000, seed=4)
    bits = x32.view(np.uint32).astype(np.uint64)
    dropped = 23 - 10
    lsb = (bits >> dropped) & 1
    rounded_bits = ((bits + (1 << (dropped - 1)) - 1 + lsb) >> dropped) << dropped
    with np.errstate(invalid="ignore"):
        reference = rounded_bits.astype(np.uint32).view(np.float32).astype(np.float64)
    reference[np.isnan(x32)] = np.nan  # the bit trick would turn some NaN payloads into inf
    assert_bitwise_equal(round_to_format(x32, "tf32"), reference, x32, "float32 -> tf32")


# ---- where overflow starts ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["fp16", "bf16", "fp8_e5m2"])
def test_overflows_where_torch_gives_inf(name):
    """For IEEE formats the overflow test is exactly where PyTorch's cast returns inf."""
    fmt = get_format(name)
    top, half_ulp = fmt.max_value, float(spacing(fmt.max_value, fmt)) / 2
    with np.errstate(over="ignore", invalid="ignore"):  # bf16's 1.2 x max is past float32's range: inf
        x = np.concatenate([
            np.float32([top, top + half_ulp, np.inf, -np.inf, np.nan, 0.0]),
            np.nextafter(np.float32(top + half_ulp), np.float32([0, np.inf])),
            np.float32(np.random.default_rng(9).uniform(0.9, 1.2, 5000) * top),
        ])
        x = np.concatenate([x, -x])
        theirs = np.isinf(torch_round(x, TORCH_DTYPES[name]))
    assert np.array_equal(overflows(x, fmt), theirs)
    assert overflows(top + half_ulp, fmt) and not overflows(np.nextafter(top + half_ulp, 0), fmt)


@pytest.mark.parametrize("name, last_safe, first_over", [
    ("fp8_e4m3fn", 464.0, np.nextafter(464.0, np.inf)),  # 448 = 1.110 x 2^8 is even: the tie 464 stays
    ("fp4_e2m1", np.nextafter(7.0, 0), 7.0),  # 6 = 1.1 x 2^2 is odd: the tie 7 overflows
    ("fp6_e3m2", np.nextafter(30.0, 0), 30.0),  # 28 = 1.11 x 2^4
    ("fp6_e2m3", np.nextafter(7.75, 0), 7.75),  # 7.5 = 1.111 x 2^2
    ("e8m0", np.nextafter(1.5 * 2.0**127, 0), 1.5 * 2.0**127),  # E8M0 ties round up
])
def test_overflow_boundary_of_formats_without_infinity(name, last_safe, first_over):
    assert not overflows(last_safe, name) and overflows(first_over, name)
    fmt = get_format(name)
    assert round_to_format(last_safe, fmt) == fmt.max_value
    if fmt.has_nan:  # the non-saturating mode turns exactly the overflowing values into NaN
        assert np.isnan(round_to_format(first_over, fmt, overflow="nan"))
        assert round_to_format(last_safe, fmt, overflow="nan") == fmt.max_value


@pytest.mark.parametrize("name", SMALL_FORMATS)
def test_overflows_agrees_with_every_overflow_mode(name):
    fmt = get_format(name)
    rng = np.random.default_rng(10)
    x = np.concatenate([rng.uniform(0, 1.5, 20_000) * fmt.max_value, [np.inf, np.nan, fmt.max_value]])
    over = overflows(x, fmt)
    assert over.shape == x.shape and over.dtype == bool and not over[-2] and over[-3]
    for mode in ("inf", "nan"):
        if (mode == "inf" and fmt.has_inf) or (mode == "nan" and fmt.has_nan):
            changed = ~np.isfinite(round_to_format(x, fmt, overflow=mode)) & ~np.isnan(x)
            assert np.array_equal(changed, over)
    inside = ~over & np.isfinite(x)
    assert np.array_equal(round_to_format(x[inside], fmt, "saturate"), round_to_format(x[inside], fmt))


def test_single_rounding_from_float64():
    """Rounding float64 -> fp16 directly differs from rounding through float32 (double rounding)."""
    x = 1 + 2.0**-11 + 2.0**-40  # just above the tie between 1 and 1 + 2^-10
    assert round_to_format(x, "fp16") == 1 + 2.0**-10
    assert round_to_format(np.float32(x), "fp16") == 1.0  # float32 already lost the 2^-40


# ---- spacing, fields ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SMALL_FORMATS)
def test_spacing_is_the_gap_to_the_next_value(name):
    fmt = get_format(name)
    values = representable_values(fmt)
    nonneg = values[values >= 0]
    assert np.array_equal(spacing(nonneg[:-1], fmt), np.diff(nonneg))
    assert_bitwise_equal(spacing(-nonneg[:-1], fmt), np.diff(nonneg), nonneg, "spacing is symmetric")


def test_spacing_conventions():
    fp16, bf16 = get_format("fp16"), get_format("bf16")
    assert spacing(1.0, fp16) == fp16.machine_epsilon  # the gap above a power of two
    assert spacing(np.nextafter(1.0, 0), fp16) == fp16.machine_epsilon / 2  # below it, inside [0.5, 1)
    assert spacing(0.0, fp16) == fp16.min_subnormal
    assert spacing(fp16.max_value, fp16) == 32.0
    assert np.isnan(spacing(70000.0, fp16)) and np.isnan(spacing(np.inf, fp16)) and np.isnan(spacing(np.nan, fp16))
    # integers stop being exact where the spacing reaches 2: 256 in bf16, 2048 in fp16
    assert spacing(255.0, bf16) == 1 and spacing(256.0, bf16) == 2
    assert spacing(2047.0, fp16) == 1 and spacing(2048.0, fp16) == 2
    assert round_to_format(257.0, bf16) == 256.0 and round_to_format(2049.0, fp16) == 2048.0
    assert spacing(100.0, bf16) == 0.5 and spacing(10000.0, bf16) == 64.0


@pytest.mark.parametrize(
    "name, x, bit_string, unbiased, subnormal, special",
    [
        ("fp16", 1.0, "0 01111 0000000000", 0, False, False),
        ("fp16", -2.0, "1 10000 0000000000", 1, False, False),
        ("fp16", 2.0**-24, "0 00000 0000000001", -14, True, False),
        ("fp16", 0.0, "0 00000 0000000000", -14, False, False),
        ("fp16", np.inf, "0 11111 0000000000", None, False, True),
        ("bf16", 1.0, "0 01111111 0000000", 0, False, False),
        ("fp8_e4m3fn", 448.0, "0 1111 110", 8, False, False),
        ("fp8_e4m3fn", np.nan, "0 1111 111", None, False, True),
        ("fp8_e5m2", -57344.0, "1 11110 11", 15, False, False),
        ("fp4_e2m1", 0.5, "0 00 1", 0, True, False),
        ("fp4_e2m1", -6.0, "1 11 1", 2, False, False),
        ("e8m0", 1.0, "01111111", 0, False, False),
        ("e8m0", 2.0**-127, "00000000", -127, False, False),
    ],
)
def test_fields_of_known_values(name, x, bit_string, unbiased, subnormal, special):
    f = fields(x, name)
    assert (f.bit_string, f.unbiased_exponent, f.is_subnormal, f.is_special) == (bit_string, unbiased, subnormal, special)
    assert int(f.bit_string.replace(" ", ""), 2) == f.bits
    again = fields(f.bits, name, from_bits=True)
    assert again.bits == f.bits and again.bit_string == f.bit_string
    assert again.value == f.value or (np.isnan(again.value) and np.isnan(f.value) and np.isnan(x))


@pytest.mark.parametrize("name", SMALL_FORMATS)
def test_fields_rebuild_the_value(name):
    fmt = get_format(name)
    for bits in range(0, 1 << fmt.total_bits, max(1, (1 << fmt.total_bits) // 509)):
        f = fields(bits, fmt, from_bits=True)
        if f.is_special:
            continue
        if fmt.has_subnormals and f.exponent_bits_value == 0:
            significand = f.mantissa_bits_value / 2**fmt.mantissa_bits
        else:
            significand = 1 + f.mantissa_bits_value / 2**fmt.mantissa_bits
        assert (-1) ** f.sign * significand * 2.0**f.unbiased_exponent == f.value


# ---- properties ------------------------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=64), st.sampled_from(SMALL_FORMATS))
def test_rounding_is_monotone_and_idempotent(x, name):
    fmt = get_format(name)
    if not fmt.signed:
        x = abs(x)
    r = round_to_format(x, fmt)
    assert round_to_format(r, fmt) == r or np.isnan(r)
    with np.errstate(over="ignore"):
        bigger = round_to_format(np.nextafter(x, np.inf), fmt)
    assert bigger >= r or np.isnan(bigger) or np.isnan(r)


# ---- errors ----------------------------------------------------------------------------------------------
def test_bad_input_raises_value_error_naming_the_argument():
    with pytest.raises(ValueError, match=r"name_or_format.*fp16.*'fp7'"):
        get_format("fp7")
    with pytest.raises(ValueError, match=r"fmt.*'fp7'"):
        round_to_format(1.0, "fp7")
    with pytest.raises(ValueError, match=r"overflow.*'clip'"):
        round_to_format(1.0, "fp16", overflow="clip")
    with pytest.raises(ValueError, match=r"overflow='inf'.*fp8_e4m3fn"):
        round_to_format(1.0, "fp8_e4m3fn", overflow="inf")
    with pytest.raises(ValueError, match=r"overflow='nan'.*fp4_e2m1"):
        encode(1.0, "fp4_e2m1", overflow="nan")
    with pytest.raises(ValueError, match=r"bits.*256"):
        decode(256, "fp8_e5m2")
    with pytest.raises(ValueError, match=r"bits.*float"):
        decode(1.5, "fp16")
    with pytest.raises(ValueError, match=r"fmt.*fp32"):
        representable_values("fp32")
    with pytest.raises(ValueError, match=r"x_or_bits.*shape"):
        fields([1.0, 2.0], "fp16")
    with pytest.raises(ValueError, match=r"x.*dtype"):
        round_to_format("one", "fp16")
    with pytest.raises(ValueError, match=r"specials.*'ibm'"):
        FloatFormat("x", 4, 3, 7, "ibm")
    with pytest.raises(ValueError, match=r"mantissa_bits"):
        FloatFormat("x", 4, 0, 7, "ieee")
    with pytest.raises(ValueError, match=r"exponent_bits.*0"):
        FloatFormat("x", 0, 3, 7, "none")
    with pytest.raises(ValueError, match=r"exponent_bits >= 2.*1"):
        FloatFormat("x", 1, 3, 0, "ieee")
    with pytest.raises(ValueError, match=r"bias.*float64.*bias=1023"):
        FloatFormat("x", 11, 20, 1023, "none")  # top value 2^1024 is not a float64
    with pytest.raises(ValueError, match=r"bias.*float64.*bias=1100"):
        FloatFormat("x", 8, 3, 1100, "ieee")  # smallest value 2^-1102 underflows float64
    with pytest.raises(ValueError, match=r"fmt.*'fp7'"):
        overflows(1.0, "fp7")


def test_aliases_and_formats_pass_through():
    assert get_format("bfloat16") is FORMATS["bf16"]
    assert get_format("float8_e4m3fn") is FORMATS["fp8_e4m3fn"]
    assert get_format(FORMATS["fp16"]) is FORMATS["fp16"]


def test_scalars_in_scalars_out():
    assert isinstance(round_to_format(0.1, "fp16"), np.float64)
    assert round_to_format(0.1, "fp16") == 0.0999755859375
    assert encode(1.0, "fp8_e4m3fn") == 0x38 and isinstance(encode(1.0, "fp8_e4m3fn"), np.uint8)
    assert decode(0x3C00, "fp16") == 1.0
    assert round_to_format(np.ones((3, 5), np.float32), "bf16").shape == (3, 5)


def test_custom_format_e3m4():
    """A format built from its parameters behaves like the named ones (OCP-style E3M4 without specials)."""
    fmt = FloatFormat("e3m4", 3, 4, 3, "none")
    assert fmt.max_value == 2.0**4 * (1 + 15 / 16)
    assert fmt.min_subnormal == 2.0 ** (-2 - 4)
    x = np.linspace(-40, 40, 4001)
    assert_bitwise_equal(round_to_format(x, fmt), brute_force_nearest_even(np.clip(x, -fmt.max_value, fmt.max_value), fmt), x, "e3m4")


# ---- integers with a scale -------------------------------------------------------------------------------
def test_int_ranges():
    assert (INT_FORMATS["int8"].min_value, INT_FORMATS["int8"].max_value) == (-128, 127)
    assert (INT_FORMATS["int4"].min_value, INT_FORMATS["int4"].max_value) == (-8, 7)
    assert get_int_format("int4") is INT_FORMATS["int4"]
    with pytest.raises(ValueError, match=r"name_or_format.*'int3'"):
        get_int_format("int3")
    with pytest.raises(ValueError, match="bits"):
        IntFormat("int1", 1)


def test_quantize_int_rounds_half_to_even_and_clips():
    q = quantize_int([0.5, 1.5, 2.5, -0.5, -1.5, 200.0, -200.0, 1.26], "int8", 1.0)
    assert q.tolist() == [0, 2, 2, 0, -2, 127, -128, 1]
    assert q.dtype == np.int8
    assert quantize_int([9.0, -9.0], "int4", 1.0).tolist() == [7, -8]


def test_absmax_round_trip_error_is_at_most_half_a_step():
    rng = np.random.default_rng(5)
    x = rng.standard_t(3, size=(97, 13))  # heavy tails, awkward shape
    for fmt in INT_FORMATS.values():
        scale = absmax_scale(x, fmt)
        assert scale == np.max(np.abs(x)) / fmt.max_value
        q = quantize_int(x, fmt, scale)
        assert np.max(np.abs(q)) == fmt.max_value
        assert np.max(np.abs(dequantize_int(q, scale) - x)) <= scale / 2 * (1 + 1e-12)
    per_row = absmax_scale(x, "int8", axis=1)
    assert per_row.shape == (97, 1)
    q = quantize_int(x, "int8", per_row)
    assert np.all(np.max(np.abs(q), axis=1) == 127)
    assert np.all(np.abs(dequantize_int(q, per_row) - x) <= per_row / 2 * (1 + 1e-12))


def test_absmax_of_zeros_and_bad_scales():
    assert absmax_scale(np.zeros(10), "int8") == 1.0
    for bad in (0.0, -1.0, np.inf, np.nan):
        with pytest.raises(ValueError, match=r"scale.*(0\.0|-1\.0|inf|nan)"):
            quantize_int([1.0], "int8", bad)
        with pytest.raises(ValueError, match="scale"):
            dequantize_int(np.int8(3), bad)
    with pytest.raises(ValueError, match="x"):
        quantize_int([np.nan], "int8", 1.0)
    with pytest.raises(ValueError, match="q"):
        dequantize_int([1.5], 1.0)
    assert math.isclose(dequantize_int(np.int8(-3), 0.5), -1.5)


def test_pattern_counts_against_closed_forms():
    from gpuperf import formats as F

    e4m3 = F.pattern_counts("fp8_e4m3fn")
    assert (e4m3.patterns, e4m3.nan_patterns, e4m3.inf_patterns, e4m3.finite_values, e4m3.max_value) == (256, 2, 0, 253, 448.0)
    e5m2 = F.pattern_counts("fp8_e5m2")  # IEEE: 2 infinities, 2 * (2**2 - 1) NaNs
    assert (e5m2.nan_patterns, e5m2.inf_patterns, e5m2.finite_values) == (6, 2, 256 - 8 - 1)
    fp16 = F.pattern_counts("fp16")
    assert (fp16.nan_patterns, fp16.inf_patterns, fp16.finite_values) == (2 * 1023, 2, 65536 - 2048 - 1)
    fp4 = F.pattern_counts("fp4_e2m1")
    assert (fp4.nan_patterns, fp4.inf_patterns, fp4.finite_values) == (0, 0, 15)
    with pytest.raises(ValueError, match="fmt"):
        F.pattern_counts("fp32")
