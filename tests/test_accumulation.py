"""gpuperf.accumulation against closed forms and against independent arithmetic (numpy float16/float32
ufuncs, torch bfloat16 tensors, math.fsum)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf import accumulation as acc

torch = pytest.importorskip("torch")


# ---------------------------------------------------------------------------------------------
# Independent references
# ---------------------------------------------------------------------------------------------

def _numpy_sequential(values, dtype):
    """Sequential sum in numpy's own scalar arithmetic of ``dtype`` (float16 / float32)."""
    total = dtype(0)
    for v in np.asarray(values, dtype=dtype):
        total = dtype(total + v)
    return float(total)


def _torch_sequential(values, dtype):
    """Sequential sum with torch tensors of ``dtype``: each ``+`` rounds to ``dtype``."""
    total = torch.zeros((), dtype=dtype)
    for v in torch.tensor(np.asarray(values, dtype=np.float64)).to(dtype):
        total = total + v
    return float(total)


def _numpy_pairwise(values, dtype):
    """Level-by-level tree in numpy scalars, an odd last element passing up unchanged."""
    level = [dtype(v) for v in np.asarray(values, dtype=dtype)]
    while len(level) > 1:
        nxt = [dtype(level[i] + level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return float(level[0])


def _torch_round(x, dtype):
    return torch.tensor(np.asarray(x, dtype=np.float64)).to(dtype).double().numpy()


# ---------------------------------------------------------------------------------------------
# Rounding: the numpy-cast fast paths agree with gpuperf.formats
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["fp32", "fp16"])
def test_numpy_cast_rounding_agrees_with_formats_including_ties_and_subnormals(fmt):
    rng = np.random.default_rng(5)
    f = acc._formats.get_format(fmt)
    x = rng.standard_normal(200_000) * np.exp2(rng.integers(f.min_exponent - f.mantissa_bits - 2, f.max_exponent + 2, 200_000))
    # Exact ties: midpoints between neighbouring values of the format, across its range.
    grid = acc._formats.round_to_format(x, fmt)
    ties = grid + acc._formats.spacing(grid, fmt) / 2
    values = np.concatenate([x, ties[np.isfinite(ties)], [0.0, -0.0, np.inf, -np.inf, f.max_value * 1.5]])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(acc.round_to_accumulator(values, fmt), acc._formats.round_to_format(values, fmt))


# ---------------------------------------------------------------------------------------------
# Swamping
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("accumulator, stall", [("fp16", 32.0), ("bf16", 4.0)])
def test_swamping_of_0_01_stalls_where_half_the_spacing_exceeds_it(accumulator, stall):
    run = acc.swamping(0.01, 10_000, accumulator)
    assert run.final == stall
    assert acc.swamping_stall_value(0.01, accumulator) == stall
    # At the stall value half the spacing exceeds the increment; one binade lower it does not.
    m = acc.mantissa_bits(accumulator)
    assert 2.0 ** (math.log2(stall) - m) / 2 > run.increment_stored
    assert 2.0 ** (math.log2(stall) - 1 - m) / 2 < run.increment_stored
    assert run.stall_step is not None and run.partial_sums[run.stall_step] == stall
    assert run.partial_sums[run.stall_step - 1] < stall


def test_fp32_swamping_of_0_01_is_slightly_off_but_does_not_stall():
    run = acc.swamping(0.01, 10_000, "fp32")
    assert run.stall_step is None
    assert run.final == pytest.approx(100.0029525756836, abs=0)
    assert 1e-5 < run.relative_error < 1e-4
    # The closed form puts the fp32 stall far away: 2**18, where half the spacing (2**-6) > 0.01.
    assert acc.swamping_stall_value(0.01, "fp32") == 2.0 ** 18
    assert np.float32(2.0 ** 18) + np.float32(0.01) == np.float32(2.0 ** 18)
    below = np.nextafter(np.float32(2.0 ** 18), np.float32(0))
    assert below + np.float32(0.01) > below


@pytest.mark.parametrize("increment", [0.01, 0.003, 0.1, 1 / 3, 0.0171])
def test_fp16_swamping_matches_numpy_float16_arithmetic_and_the_closed_form(increment):
    n = 9_000
    run = acc.swamping(increment, n, "fp16")
    reference = np.add.accumulate(np.full(n, increment, dtype=np.float16))  # rounds after every add
    np.testing.assert_array_equal(run.partial_sums[1:], reference.astype(np.float64))
    assert run.final == acc.swamping_stall_value(increment, "fp16")


def test_bf16_swamping_matches_torch_bfloat16_arithmetic():
    run = acc.swamping(0.01, 1_000, "bf16")
    total, sums = torch.zeros((), dtype=torch.bfloat16), []
    step = torch.tensor(0.01, dtype=torch.bfloat16)
    for _ in range(1_000):
        total = total + step
        sums.append(float(total))
    np.testing.assert_array_equal(run.partial_sums[1:], sums)


@pytest.mark.parametrize("increment", [0.01, 0.0625, 0.7, 3.0])
def test_bf16_stall_value_closed_form_matches_simulation(increment):
    stall = acc.swamping_stall_value(increment, "bf16")
    steps = int(2 * stall / increment) + 10  # enough to reach the stall
    assert acc.swamping(increment, steps, "bf16").final == stall


def test_stall_value_is_inf_when_the_sum_overflows_first():
    assert acc.swamping_stall_value(1000.0, "fp16") == math.inf
    run = acc.swamping(1000.0, 80, "fp16")
    assert run.final == math.inf


def test_saturating_formats_stall_at_their_largest_value():
    # 100 rounds to 96 in E4M3 (a tie between 96 and 104 goes to the even mantissa); 480 saturates to 448.
    run = acc.swamping(100.0, 8, "fp8_e4m3fn")
    np.testing.assert_array_equal(run.partial_sums, [0, 96, 192, 288, 384, 448, 448, 448, 448])
    assert acc.swamping_stall_value(100.0, "fp8_e4m3fn") == 448.0
    cast = torch.tensor(480.0).to(torch.float8_e4m3fn).float().item()
    # PyTorch 2.13 saturates like gpuperf's default; older releases (Colab's 2.11) give NaN instead.
    torch_version = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
    if torch_version >= (2, 13):
        assert cast == 448.0
    else:
        assert math.isnan(cast)


# ---------------------------------------------------------------------------------------------
# Sums and orders
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def awkward_values():
    rng = np.random.default_rng(7)
    return rng.standard_normal(1237) * np.exp(rng.uniform(-3, 3, 1237))


@pytest.mark.parametrize("accumulator, dtype", [("fp16", np.float16), ("fp32", np.float32)])
def test_sequential_sum_matches_numpy_scalar_arithmetic(awkward_values, accumulator, dtype):
    assert acc.sum_values(awkward_values, accumulator) == _numpy_sequential(awkward_values, dtype)


@pytest.mark.parametrize("accumulator, dtype", [("fp16", np.float16), ("fp32", np.float32)])
def test_pairwise_sum_matches_an_explicit_tree(awkward_values, accumulator, dtype):
    assert acc.sum_values(awkward_values, accumulator, "pairwise") == _numpy_pairwise(awkward_values, dtype)


@pytest.mark.parametrize("order", acc.ORDERS)
def test_bf16_sums_match_torch(awkward_values, order):
    values = awkward_values[:301]
    if order == "sequential":
        expected = _torch_sequential(values, torch.bfloat16)
    else:
        level = list(torch.tensor(values).to(torch.bfloat16))
        while len(level) > 1:
            nxt = [level[i] + level[i + 1] for i in range(0, len(level) - 1, 2)]
            level = nxt + ([level[-1]] if len(level) % 2 else [])
        expected = float(level[0])
    assert acc.sum_values(values, "bf16", order) == expected


def test_running_sum_ends_at_the_sum_and_batches_are_independent(awkward_values):
    batch = np.stack([awkward_values[:500], awkward_values[500:1000]])
    partial = acc.running_sum(batch, "bf16")
    assert partial.shape == (2, 501) and np.all(partial[:, 0] == 0)
    for row in range(2):
        assert partial[row, -1] == acc.sum_values(batch[row], "bf16")
        assert partial[row, 123] == acc.sum_values(batch[row, :123], "bf16")
    np.testing.assert_array_equal(acc.sum_values(batch, "fp16", "pairwise"),
                                  [acc.sum_values(r, "fp16", "pairwise") for r in batch])


def test_fp64_sum_of_exactly_representable_integers_is_exact():
    values = np.arange(-500, 777)
    for accumulator in ("fp64", "fp32"):
        for order in acc.ORDERS:
            assert acc.sum_values(values, accumulator, order) == values.sum()


finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(finite, min_size=1, max_size=300), st.sampled_from(["fp32", "bf16", "fp16"]),
       st.sampled_from(acc.ORDERS))
def test_error_never_exceeds_the_textbook_bound(values, accumulator, order):
    terms = acc.round_to_accumulator(values, accumulator)
    error = abs(acc.sum_values(values, accumulator, order) - math.fsum(terms.tolist()))
    bound = acc.summation_error_bound(values, accumulator, order)
    # fp16 sums of 300 terms of 1e3 overflow; the bound assumes they do not.
    if math.isfinite(error):
        assert error <= bound


def test_pairwise_bound_is_much_tighter_than_sequential():
    values = np.ones(4096)
    seq = acc.summation_error_bound(values, "fp32", "sequential")
    tree = acc.summation_error_bound(values, "fp32", "pairwise")
    u = 2.0 ** -24
    assert seq == pytest.approx(4095 * u / (1 - 4095 * u) * 4096)
    assert tree == pytest.approx(12 * u / (1 - 12 * u) * 4096)
    assert acc.summation_error_bound(values, "bf16", "sequential") == math.inf


# ---------------------------------------------------------------------------------------------
# Dot products
# ---------------------------------------------------------------------------------------------

def test_dot_in_fp32_matches_float32_arithmetic_and_fsum():
    x, y = acc.random_dot_inputs(1531, seed=3, input_format="bf16")
    assert np.all(acc.round_to_accumulator(x, "bf16") == x)
    result = acc.dot(x, y, "fp32", "sequential", "bf16")
    products = (x * y).astype(np.float32)  # bf16 x bf16 products are exact in fp32
    assert np.all(products.astype(np.float64) == x * y)
    assert result.value == _numpy_sequential(products, np.float32)
    assert result.exact == math.fsum((x * y).tolist())
    assert result.abs_error <= result.error_bound
    assert result.n == 1531


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(min_value=-1e2, max_value=1e2, allow_nan=False), min_size=1, max_size=200),
       st.sampled_from(["fp32", "bf16", "fp16", "fp8_e4m3fn"]), st.sampled_from(acc.ORDERS),
       st.sampled_from(["bf16", "fp16", "fp32"]))
def test_dot_error_never_exceeds_its_bound(values, accumulator, order, input_format):
    x = np.asarray(values)
    y = np.cos(np.arange(x.size) * 0.7) * 3  # a fixed second vector of mixed signs
    result = acc.dot(x, y, accumulator, order, input_format)
    products = np.abs(acc.dot_products(x, y, input_format))
    tiny = acc._formats.get_format(accumulator).min_normal
    no_underflow = not np.any((products > 0) & (products < tiny))  # a subnormal product errs absolutely
    if no_underflow and math.isfinite(result.value) and abs(result.value) < acc.max_finite(accumulator):
        assert result.abs_error <= result.error_bound


def test_dot_bound_counts_the_rounding_of_each_product():
    # One product, rounded to bf16: the bound must allow that single rounding (gamma_1 |p|).
    x, y = np.array([0.6796875]), np.array([0.68359375])  # bf16 values; the product needs 16 bits
    result = acc.dot(x, y, "bf16", input_format="bf16")
    u = 2.0 ** -8
    assert result.value != result.exact and result.abs_error <= u * result.magnitude
    assert result.error_bound == pytest.approx(u / (1 - u) * result.magnitude, rel=1e-15)
    # bf16 products are exact in fp32: no extra rounding, the summation bound alone.
    x, y = acc.random_dot_inputs(257, seed=4)
    fp32 = acc.dot(x, y, "fp32", "pairwise")
    assert fp32.error_bound == acc.summation_error_bound(x * y, "fp32", "pairwise")
    bf16 = acc.dot(x, y, "bf16", "pairwise")
    k = 9 + 1  # ceil(log2 257) additions and the product's rounding
    assert bf16.error_bound == pytest.approx(k * u / (1 - k * u) * bf16.magnitude, rel=1e-15)


def test_dot_rounds_inputs_to_the_input_format():
    x, y = np.array([1 + 2.0 ** -9, 3.0]), np.array([1.0, 1 / 3])
    result = acc.dot(x, y, "fp64", input_format="bf16")
    assert result.value == 1.0 + float(_torch_round(1 / 3, torch.bfloat16) * 3)


def test_low_precision_sequential_dot_is_far_worse_than_fp32_or_a_tree():
    x, y = acc.random_dot_inputs(4096, seed=0, distribution="uniform")
    fp32 = acc.dot(x, y, "fp32").relative_error
    bf16_tree = acc.dot(x, y, "bf16", "pairwise").relative_error
    bf16_seq = acc.dot(x, y, "bf16", "sequential")
    assert fp32 < 1e-5 < bf16_tree < 1e-2 < bf16_seq.relative_error
    # Uniform [0,1) products average 1/4 < half the bf16 spacing at 256 (= 1): the sum stalls at 256.
    assert bf16_seq.value == 256.0


def test_dot_error_sweep_agrees_with_single_dot_products():
    sweep = acc.dot_error_sweep(lengths=(5, 100, 333), n_trials=3, seed=11, distribution="normal",
                                configs=(("bf16", "sequential"), ("fp16", "pairwise")))
    for (accumulator, order), errors in sweep.relative_error.items():
        for i, n in enumerate(sweep.lengths):
            per_trial = []
            for t in range(3):
                x, y = acc.random_dot_inputs(333, seed=11 + t, distribution="normal")
                per_trial.append(acc.dot(x[:n], y[:n], accumulator, order).relative_error)
            assert errors[i] == pytest.approx(np.median(per_trial), rel=0, abs=0)


# ---------------------------------------------------------------------------------------------
# Non-associativity
# ---------------------------------------------------------------------------------------------

def test_split_sum_matches_chunked_float32_arithmetic(awkward_values):
    values = awkward_values.astype(np.float32)
    for parts in (1, 2, 3, 8, 16, 1237):
        partials = [np.float32(_numpy_sequential(c, np.float32)) for c in np.array_split(values, parts)]
        assert acc.split_sum(values, parts) == _numpy_sequential(partials, np.float32)
    assert acc.split_sum(values, 1) == acc.sum_values(values, "fp32")
    assert acc.split_sum(values, 1237) == acc.sum_values(values, "fp32")


def test_different_splits_give_different_fp32_sums_but_not_for_integers():
    values = np.random.default_rng(0).standard_normal(4096).astype(np.float32)
    result = acc.split_sums(values, (1, 2, 4, 8, 16))
    assert result.n_distinct >= 2
    assert result.spread <= 2 * acc.summation_error_bound(values, "fp32")
    integers = np.random.default_rng(1).integers(-1000, 1000, 4096).astype(np.float32)
    exact = acc.split_sums(integers)
    assert exact.n_distinct == 1 and exact.sums[0] == exact.exact == integers.astype(np.int64).sum()


# ---------------------------------------------------------------------------------------------
# RMSNorm overflow
# ---------------------------------------------------------------------------------------------

def test_fp16_rmsnorm_overflows_on_an_outlier_and_zeroes_the_row():
    x = np.random.default_rng(2).standard_normal(4096)
    x[100] = 300.0
    fp16 = acc.rms_norm(x, "fp16", "fp16")
    assert fp16.overflowed and fp16.sum_of_squares == math.inf
    assert np.all(fp16.y == 0.0)
    for storage, compute in (("bf16", "bf16"), ("bf16", "fp32"), ("fp16", "fp32")):
        result = acc.rms_norm(x, storage, compute)
        assert not result.overflowed
    # fp32 compute: the output is the reference rounded to bf16, within one bf16 rounding (2**-8 relative).
    good = acc.rms_norm(x, "bf16", "fp32")
    assert np.all(np.abs(good.y - good.reference) <= 2.0 ** -8 * np.abs(good.reference) * 1.01 + 1e-12)


def test_fp16_sum_of_squares_overflows_without_any_single_large_value():
    x = np.full(1100, 8.0)  # 64 per square, 70,400 in total > 65,504
    result = acc.rms_norm(x, "fp16", "fp16", eps=0.0)
    assert result.overflowed and np.all(result.y == 0)
    assert not acc.rms_norm(x[:1000], "fp16", "fp16", eps=0.0).overflowed  # 64,000 fits


def test_rmsnorm_of_a_constant_row_is_plus_minus_one():
    x = np.array([-3.0, 3.0] * 5 + [3.0])  # 11 squares of 9: every partial sum is exact even in bf16
    for compute in ("fp32", "bf16", "fp16"):
        np.testing.assert_array_equal(acc.rms_norm(x, "bf16", compute, eps=0.0).y, np.sign(x))


@pytest.mark.parametrize("fmt, dtype", [("fp32", np.float32), ("fp16", np.float16)])
def test_rms_norm_matches_step_by_step_ieee_arithmetic(fmt, dtype):
    """Multiplication, division by n and square root emulated in float64 then rounded (double rounding)
    agree with numpy's own float32 / float16 operations, on an awkward length with tiny and large values."""
    rng = np.random.default_rng(21)
    x = rng.standard_normal(1237) * np.exp2(rng.integers(-12, 4, 1237))
    x[5] = 1e-7  # subnormal in fp16
    result = acc.rms_norm(x, fmt, fmt, eps=1e-5)
    xs = x.astype(dtype)
    total = dtype(0)
    for v in xs:
        total = dtype(total + dtype(v * v))
    rms = np.sqrt(dtype(total / dtype(xs.size)) + dtype(1e-5))
    assert result.sum_of_squares == float(total) and result.rms == float(rms)
    np.testing.assert_array_equal(result.y, (xs / rms).astype(np.float64))


def test_rms_norm_converts_the_row_to_the_compute_format():
    """bf16 storage, fp16 compute: a bf16 value below fp16's normal range is rounded when it is loaded."""
    x = np.array([3.0, 2.0 ** -24 * 1.4453125, -4.0])  # a bf16 value with 8 significant bits
    result = acc.rms_norm(x, "bf16", "fp16", eps=0.0)
    loaded = x.astype(np.float16)  # 1.445 x 2^-24 is below fp16's smallest subnormal but one: it loads as 2^-24
    assert loaded[1] == 2.0 ** -24
    # 2^-24 / 2.887 rounds to 0 in fp16; dividing the unconverted 1.445 x 2^-24 would have given 2^-24.
    assert result.y[1] == 0.0
    rms = np.sqrt(np.float16(np.float16(np.float16(9.0) + loaded[1] * loaded[1]) + np.float16(16.0)) / np.float16(3))
    expected = _torch_round((loaded / rms).astype(np.float64), torch.bfloat16)
    np.testing.assert_array_equal(result.y, expected)


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=32), st.integers(1, 2 ** 24))
def test_division_by_a_count_is_correctly_rounded_in_fp32(s, n):
    # the model's s / n: float64 quotient rounded to fp32 equals IEEE float32 division (n exact in fp32)
    assert acc.round_to_accumulator(s / n, "fp32") == np.float32(s) / np.float32(n)


def test_largest_finite_square_input():
    assert acc.largest_finite_square_input("fp16") == 255.875
    assert np.isfinite(np.float16(255.875) * np.float16(255.875))
    with np.errstate(over="ignore"):
        assert np.isinf(np.float16(256) * np.float16(256))
    x = acc.largest_finite_square_input("bf16")
    t = torch.tensor(x, dtype=torch.bfloat16)
    assert float(t) == x and torch.isfinite(t * t)
    nxt = t + torch.tensor(2.0 ** (math.frexp(x)[1] - 8), dtype=torch.bfloat16)  # one bf16 spacing up
    assert float(nxt) > x and torch.isinf(nxt * nxt)
    e5m2 = torch.tensor([224.0, 256.0], dtype=torch.float8_e5m2).float()
    assert acc.largest_finite_square_input("fp8_e5m2") == 224.0
    assert torch.isfinite((e5m2[0] ** 2).to(torch.float8_e5m2).float()) and torch.isinf((e5m2[1] ** 2).to(torch.float8_e5m2).float())
    # Saturating formats: E4M3's 22**2 = 484 is past 464 (the tie above 448, which stays at 448); 20**2 = 400.
    assert acc.largest_finite_square_input("fp8_e4m3fn") == 20.0
    assert acc.largest_finite_square_input("fp4_e2m1") == 2.0  # 3**2 = 9 > 7, the odd tie above 6


# ---------------------------------------------------------------------------------------------
# Integers and RoPE
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt, dtype, expected", [
    ("bf16", torch.bfloat16, 256), ("fp16", torch.float16, 2048), ("fp8_e4m3fn", torch.float8_e4m3fn, 16),
    ("fp8_e5m2", torch.float8_e5m2, 8),
])
def test_largest_exact_integer_run_matches_torch_casts(fmt, dtype, expected):
    n = acc.largest_exact_integer_run(fmt)
    assert n == expected
    ints = np.arange(0, n + 2, dtype=np.float64)
    stored = _torch_round(ints, dtype)
    assert np.all(stored[: n + 1] == ints[: n + 1]) and stored[n + 1] != n + 1


def test_largest_exact_integer_run_of_small_formats():
    assert acc.largest_exact_integer_run("fp32") == 2 ** 24
    assert acc.largest_exact_integer_run("fp4_e2m1") == 4  # 0, 0.5, 1, 1.5, 2, 3, 4, 6
    assert acc.largest_exact_integer_run("fp6_e2m3") == 7  # max 7.5 < 2**4


def test_position_ids_collide_in_bf16():
    stored = acc.round_positions([255, 256, 257, 258, 1001, 1003], "bf16")
    np.testing.assert_array_equal(stored, [255, 256, 256, 258, 1000, 1004])
    np.testing.assert_array_equal(stored, _torch_round([255, 256, 257, 258, 1001, 1003], torch.bfloat16))


def test_rope_angles():
    positions = np.arange(0, 3000, 7)
    exact = acc.rope_angles(positions, 64, "fp64")
    inv = 10_000.0 ** (-np.arange(32) / 32)
    np.testing.assert_allclose(exact, positions[:, None] * inv, rtol=1e-15)
    bf16 = acc.rope_angles(positions, 64, "bf16")
    # The fastest pair rotates by exactly the (rounded) position: its angle is the stored position id.
    np.testing.assert_array_equal(bf16[:, 0], acc.round_positions(positions, "bf16"))
    err = acc.rope_angle_error(positions, 64, "bf16")
    # Bound: position and angle roundings (spacing s(p) = 2**(floor(log2 p) - 7)) plus the 2**-8 relative
    # rounding of the inverse frequency, times p.
    p = np.maximum(positions, 1)
    spacing = 2.0 ** (np.floor(np.log2(p)) - 7)
    assert np.all(err <= 2 * spacing + p / 128)
    assert err[positions > 1024].max() > 2.0  # radians: the rotation is meaningless
    assert acc.rope_angle_error([1001], 64, "bf16")[0] >= 1.0
    assert acc.rope_angle_error(positions, 64, "fp32").max() < 1e-3


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, argument", [
    (lambda: acc.sum_values([1.0], "fp12"), "accumulator"),
    (lambda: acc.sum_values([1.0], "fp32", "random"), "order"),
    (lambda: acc.sum_values([1.0, float("nan")]), "values"),
    (lambda: acc.sum_values(3.0), "values"),
    (lambda: acc.swamping(0.01, 0), "n_additions"),
    (lambda: acc.swamping(-0.01, 10), "increment"),
    (lambda: acc.swamping_stall_value(float("inf"), "fp16"), "increment"),
    (lambda: acc.dot([1.0, 2.0], [1.0], "fp32"), "x and y"),
    (lambda: acc.dot([1.0], [1.0], "fp32", input_format="fp64"), "input_format"),
    (lambda: acc.split_sum([1.0, 2.0], 3), "n_parts"),
    (lambda: acc.split_sum([1.0, 2.0], 0), "n_parts"),
    (lambda: acc.rms_norm([1.0], "int8"), "storage_format"),
    (lambda: acc.rms_norm([1.0], "bf16", "fp8"), "compute_format"),
    (lambda: acc.rope_angles([1], 63), "head_dim"),
    (lambda: acc.largest_exact_integer_run("e8m0"), "fmt"),
    (lambda: acc.random_dot_inputs(0), "n"),
    (lambda: acc.dot_error_sweep(lengths=(0,)), "lengths"),
])
def test_bad_input_raises_value_error_naming_the_argument(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()


# ---- stochastic rounding ---------------------------------------------------------------------------------
def test_stochastic_round_picks_a_neighbour_and_is_unbiased():
    from gpuperf.accumulation import stochastic_round
    from gpuperf.formats import round_to_format, spacing

    rng = np.random.default_rng(3)
    x = np.full(200_000, 1.0 + 0.3 * 2**-7)  # 30% of the way from 1 to the next BF16 value
    y = stochastic_round(x, "bf16", rng)
    assert set(np.unique(y).tolist()) == {1.0, 1.0 + 2**-7}
    assert abs(y.mean() - x[0]) < 5 * 2**-7 * np.sqrt(0.3 * 0.7 / x.size)  # within 5 standard errors
    exact = round_to_format(rng.standard_normal(1000) * 100, "bf16")
    assert np.array_equal(stochastic_round(exact, "bf16", rng), exact)  # representable values stay
    z = rng.standard_normal(1000) * 10
    r = stochastic_round(z, "fp16", rng)
    assert np.all(np.abs(r - z) < spacing(z, "fp16")) and np.all(np.sign(r) == np.sign(z))
    assert np.array_equal(round_to_format(r, "fp16"), r)
    with pytest.raises(ValueError, match="fmt"):
        stochastic_round(z, "fp64", rng)
    with pytest.raises(ValueError, match="rng"):
        stochastic_round(z, "bf16", 3)
    with pytest.raises(ValueError, match="x must be finite"):
        stochastic_round([np.inf], "bf16", rng)


def test_stochastic_sum_escapes_swamping():
    from gpuperf.accumulation import sum_values, sum_values_stochastic

    updates = [1.0] + [1e-3] * 1000
    assert sum_values(updates, "bf16") == 1.0  # round to nearest: swamped
    results = [sum_values_stochastic(updates, "bf16", seed=s) for s in range(20)]
    assert abs(np.mean(results) - 2.0) < 0.1
