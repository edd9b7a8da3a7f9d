"""Tests for gpuperf.roofline: closed forms, independent references, properties and argument checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf import hardware
from gpuperf import roofline as rl
from gpuperf.hardware import Accelerator

# --------------------------------------------------------------------------------------------------
# Test devices. Made-up round figures (not real devices), so the tests do not depend on the table.
# --------------------------------------------------------------------------------------------------


def make_gpu(**overrides) -> Accelerator:
    fields = dict(
        name="Test GPU",
        vendor="test",
        kind="gpu",
        matrix_flop_per_s={"tf32": 400e12, "bf16": 800e12, "fp16": 800e12, "fp8": 1600e12, "int8": 1600e12},
        vector_flop_per_s={"fp64": 50e12, "fp32": 100e12, "bf16": 200e12},
        hbm_bytes_per_s=4e12,
        hbm_capacity_bytes=80e9,
        sm_count=100,
        registers_per_sm_bytes=256 * 1024,
        shared_memory_per_sm_bytes=228 * 1024,
        shared_memory_bytes_per_clock_per_sm=128,
        l2_bytes=50e6,
        boost_clock_hz=2e9,
        sources={
            "matrix_flop_per_s": "test matrix source",
            "vector_flop_per_s": "test vector source",
            "hbm_bytes_per_s": "test hbm source",
            "l2_bytes_per_s": "test l2 source",
            "shared_memory_bytes_per_clock_per_sm": "test smem source",
            "sm_count": "test sm source",
            "boost_clock_hz": "test clock source",
        },
        l2_bytes_per_s=12e12,
    )
    fields.update(overrides)
    return Accelerator(**fields)


def make_tpu() -> Accelerator:
    return Accelerator(
        name="Test TPU",
        vendor="test",
        kind="tpu",
        matrix_flop_per_s={"bf16": 200e12, "int8": 400e12},
        vector_flop_per_s={"fp32": 10e12},
        hbm_bytes_per_s=1e12,
        hbm_capacity_bytes=16e9,
        sm_count=1,
        registers_per_sm_bytes=None,
        shared_memory_per_sm_bytes=None,
        shared_memory_bytes_per_clock_per_sm=None,
        l2_bytes=None,
        boost_clock_hz=1.5e9,
        sources={"hbm_bytes_per_s": "tpu hbm source"},
    )


GPU = make_gpu()
TPU = make_tpu()

positive = st.floats(min_value=1e-6, max_value=1e18, allow_nan=False, allow_infinity=False)
nonnegative = st.floats(min_value=0.0, max_value=1e18, allow_nan=False, allow_infinity=False)

# --------------------------------------------------------------------------------------------------
# dtypes
# --------------------------------------------------------------------------------------------------


def test_bytes_per_element_table():
    assert dict(rl.BYTES_PER_ELEMENT) == {
        "fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "fp6": 0.75, "fp4": 0.5, "int8": 1,
    }
    assert set(rl.BYTES_PER_ELEMENT) == set(hardware.DTYPES)
    # bits / 8 for the packed formats, as an independent check
    assert rl.bytes_per_element("fp6") == 6 / 8 and rl.bytes_per_element("fp4") == 4 / 8
    with pytest.raises(TypeError):
        rl.BYTES_PER_ELEMENT["bf16"] = 3  # read-only


@pytest.mark.parametrize("bad", ["float16", "BF16", "", None, 2])
def test_unknown_dtype_is_rejected(bad):
    with pytest.raises(ValueError, match="dtype"):
        rl.bytes_per_element(bad)
    with pytest.raises(ValueError, match="dtype"):
        rl.matmul(4, 4, 4, dtype=bad)
    with pytest.raises(ValueError, match="dtype"):
        rl.OpCost("x", 1.0, 1.0, bad)


# --------------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------------


def test_intensity_and_ridge_closed_forms():
    assert rl.arithmetic_intensity(12.0, 4.0) == 3.0
    assert rl.arithmetic_intensity(0, 5) == 0.0  # a copy does no arithmetic
    assert rl.ridge_point(800e12, 4e12) == 200.0
    assert rl.ridge_point(1, 3) == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: rl.arithmetic_intensity(1.0, 0.0), "bytes_moved"),
        (lambda: rl.arithmetic_intensity(-1.0, 1.0), "flop"),
        (lambda: rl.arithmetic_intensity(float("nan"), 1.0), "flop"),
        (lambda: rl.ridge_point(1e12, 0.0), "bytes_per_s"),
        (lambda: rl.ridge_point(0.0, 1e12), "peak_flop_per_s"),
        (lambda: rl.attainable_flop_per_s(1.0, 1e12, 0.0), "bytes_per_s"),
        (lambda: rl.attainable_flop_per_s(1.0, -1.0, 1e12), "peak_flop_per_s"),
        (lambda: rl.attainable_flop_per_s(-1.0, 1e12, 1e12), "intensity_flop_per_byte"),
        (lambda: rl.attainable_flop_per_s(np.array([1.0, np.nan]), 1e12, 1e12), "intensity_flop_per_byte"),
        (lambda: rl.attainable_flop_per_s("a lot", 1e12, 1e12), "intensity_flop_per_byte"),
        (lambda: rl.time_lower_bound_s(1.0, 1.0, 1e12, 0.0), "bytes_per_s"),
        (lambda: rl.time_lower_bound_s(1.0, -2.0, 1e12, 1e12), "bytes_moved"),
        (lambda: rl.binding_roof(1.0, 1.0, 0.0, 1e12), "peak_flop_per_s"),
        (lambda: rl.binding_roof(-1.0, 1.0, 1e12, 1e12), "flop"),
    ],
)
def test_model_rejects_bad_arguments(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_attainable_scalar_and_array():
    peak, bw = 800e12, 4e12  # ridge 200
    value = rl.attainable_flop_per_s(50, peak, bw)
    assert isinstance(value, float) and value == 200e12
    assert rl.attainable_flop_per_s(200, peak, bw) == peak
    assert rl.attainable_flop_per_s(1e6, peak, bw) == peak
    assert rl.attainable_flop_per_s(math.inf, peak, bw) == peak
    grid = np.array([[0.0, 1.0], [200.0, 400.0]])
    out = rl.attainable_flop_per_s(grid, peak, bw)
    assert isinstance(out, np.ndarray) and out.shape == (2, 2)
    np.testing.assert_array_equal(out, [[0.0, 4e12], [peak, peak]])
    # a list works too and comes back as an array
    np.testing.assert_array_equal(rl.attainable_flop_per_s([1.0, 2.0], peak, bw), [4e12, 8e12])


@settings(max_examples=200, deadline=None)
@given(i1=nonnegative, i2=nonnegative, peak=positive, bw=positive)
def test_attainable_properties(i1, i2, peak, bw):
    lo, hi = sorted((i1, i2))
    a_lo = rl.attainable_flop_per_s(lo, peak, bw)
    a_hi = rl.attainable_flop_per_s(hi, peak, bw)
    assert a_lo <= a_hi  # monotone in intensity
    assert a_hi <= peak  # never above the peak
    ridge = rl.ridge_point(peak, bw)
    if lo < ridge:
        assert a_lo == lo * bw  # the memory roof, exactly
    else:
        assert a_lo == peak
    # the array path agrees with the scalar path
    np.testing.assert_array_equal(rl.attainable_flop_per_s(np.array([lo, hi]), peak, bw), [a_lo, a_hi])


@settings(max_examples=200, deadline=None)
@given(flop=nonnegative, bytes_moved=nonnegative, peak=positive, bw=positive)
def test_time_bound_properties(flop, bytes_moved, peak, bw):
    t = rl.time_lower_bound_s(flop, bytes_moved, peak, bw)
    assert t >= flop / peak and t >= bytes_moved / bw
    assert t in (flop / peak, bytes_moved / bw)
    bound = rl.binding_roof(flop, bytes_moved, peak, bw)
    assert bound == ("compute" if t == flop / peak else "memory")


@settings(max_examples=200, deadline=None)
@given(flop=positive, bytes_moved=positive, peak=positive, bw=positive)
def test_time_bound_matches_attainable_rate(flop, bytes_moved, peak, bw):
    # time = flop / attainable rate: the two forms of the roofline agree
    t = rl.time_lower_bound_s(flop, bytes_moved, peak, bw)
    rate = rl.attainable_flop_per_s(rl.arithmetic_intensity(flop, bytes_moved), peak, bw)
    assert t == pytest.approx(flop / rate, rel=1e-12)


def test_binding_roof_tie_and_sides():
    # exactly at the ridge (powers of two keep every quotient exact): compute
    assert rl.binding_roof(2.0**40, 2.0**33, 2.0**50, 2.0**43) == "compute"
    assert rl.binding_roof(2.0**40, 2.0**33 + 2.0**20, 2.0**50, 2.0**43) == "memory"
    assert rl.binding_roof(2.0**40 + 2.0**28, 2.0**33, 2.0**50, 2.0**43) == "compute"
    assert rl.binding_roof(0.0, 0.0, 1.0, 1.0) == "compute"


# --------------------------------------------------------------------------------------------------
# OpCost and analyze
# --------------------------------------------------------------------------------------------------


def test_opcost_validates_and_is_frozen():
    op = rl.OpCost("x", 10, 4, "fp32")
    assert op.intensity_flop_per_byte == 2.5 and isinstance(op.flop, float)
    with pytest.raises(ValueError, match="bytes_moved"):
        rl.OpCost("x", 1.0, 0.0, "fp32")
    with pytest.raises(ValueError, match="flop"):
        rl.OpCost("x", -1.0, 1.0, "fp32")
    with pytest.raises(ValueError, match="name"):
        rl.OpCost("", 1.0, 1.0, "fp32")
    with pytest.raises(AttributeError):
        op.flop = 3.0


def test_analyze_memory_bound_op():
    op = rl.relu(10**9)  # 1e9 FLOP, 4e9 bytes in bf16
    a = rl.analyze(op, GPU)
    assert a.accelerator_name == "Test GPU" and a.unit == "matrix" and a.op is op
    assert a.peak_flop_per_s == 800e12 and a.bytes_per_s == 4e12
    assert a.ridge_flop_per_byte == 200.0 and a.intensity_flop_per_byte == 0.25
    assert a.compute_time_s == pytest.approx(1e9 / 800e12)
    assert a.memory_time_s == pytest.approx(1e-3)  # 4e9 B / 4e12 B/s
    assert a.time_s == a.memory_time_s and a.bound == "memory"
    assert a.attainable_flop_per_s == pytest.approx(1e12)  # 0.25 FLOP/B * 4e12 B/s
    assert a.fraction_of_peak == pytest.approx(1 / 800)
    text = a.summary()
    assert "memory-bound" in text and "1 ms" in text and "relu" in text


def test_analyze_compute_bound_op_and_options():
    op = rl.matmul(4096, 4096, 4096)
    a = rl.analyze(op, GPU)
    assert a.bound == "compute" and a.time_s == a.compute_time_s == pytest.approx(2 * 4096**3 / 800e12)
    assert a.attainable_flop_per_s == a.peak_flop_per_s
    v = rl.analyze(op, GPU, unit="vector")  # same op, slower unit: ridge 50
    assert v.peak_flop_per_s == 200e12 and v.ridge_flop_per_byte == 50.0
    f = rl.analyze(op, GPU, dtype="fp8")  # peak of another dtype, bytes of the op's
    assert f.peak_flop_per_s == 1600e12 and f.intensity_flop_per_byte == op.intensity_flop_per_byte


def test_analyze_rejects_bad_arguments():
    op = rl.matmul(64, 64, 64, dtype="tf32")
    with pytest.raises(ValueError, match="tf32"):
        rl.analyze(op, TPU)  # the TPU has no tf32
    with pytest.raises(ValueError, match="unit"):
        rl.analyze(op, GPU, unit="tensor")
    with pytest.raises(ValueError, match="dtype"):
        rl.analyze(op, GPU, dtype="fp12")
    with pytest.raises(ValueError, match="op"):
        rl.analyze((1.0, 2.0), GPU)
    with pytest.raises(ValueError, match="accelerator"):
        rl.analyze(op, 42)


needs_table = pytest.mark.skipif(
    not hasattr(hardware, "get_accelerator"), reason="gpuperf.hardware has no device table yet"
)


@needs_table
def test_analyze_by_name_matches_the_instance():
    acc = hardware.get_accelerator("H200")
    op = rl.matmul(97, 1025, 33)
    assert rl.analyze(op, "H200") == rl.analyze(op, acc)
    assert rl.analyze(op, "h200 sxm").accelerator_name == "H200 SXM"


# --------------------------------------------------------------------------------------------------
# The op catalog against independent references
# --------------------------------------------------------------------------------------------------


def traffic(reads: dict, writes: dict, b: float) -> float:
    """Independent byte count: list every tensor read and written with its shape."""
    return b * sum(math.prod(shape) for shape in [*reads.values(), *writes.values()])


def matmul_flop_by_loops(m, k, n):
    flop = 0
    for _i in range(m):
        for _j in range(n):
            for _l in range(k):
                flop += 2  # one multiply, one add
    return flop


@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (3, 5, 7), (17, 1, 9), (13, 11, 2)])
def test_matmul_flop_by_brute_force(m, k, n):
    assert rl.matmul(m, k, n).flop == matmul_flop_by_loops(m, k, n)


@pytest.mark.parametrize("dtype", list(rl.BYTES_PER_ELEMENT))
@pytest.mark.parametrize("m, k, n", [(1823, 781, 97), (1, 4096, 1), (1025, 3, 4097)])
def test_matmul_bytes_by_listing_tensors(m, k, n, dtype):
    b = rl.BYTES_PER_ELEMENT[dtype]
    op = rl.matmul(m, k, n, dtype)
    assert op.bytes_moved == traffic({"A": (m, k), "B": (k, n)}, {"C": (m, n)}, b)
    assert op.flop == 2 * m * k * n and op.dtype == dtype


@pytest.mark.parametrize("dtype", ["fp32", "bf16", "fp8", "fp4"])
@pytest.mark.parametrize("size", [1, 97, 1000, 8191])
def test_square_matmul_intensity_closed_form(size, dtype):
    b = rl.bytes_per_element(dtype)
    # 2 N^3 / (3 N^2 b) = 2 N / (3 b)
    assert rl.matmul(size, size, size, dtype).intensity_flop_per_byte == pytest.approx(2 * size / (3 * b))


def test_gemv_is_about_one_flop_per_byte_in_bf16():
    for size in (4096, 8192, 16384):
        op = rl.gemv(size, size)
        # 2 m^2 / ((m^2 + 2 m) 2) = 1 / (1 + 2 / m): the two vectors shave off about 2 / m
        assert op.intensity_flop_per_byte == pytest.approx(1 / (1 + 2 / size), rel=1e-12)
        assert 1.0 - 2.5 / size < op.intensity_flop_per_byte < 1.0
    assert rl.gemv(16384, 16384, "fp32").intensity_flop_per_byte == pytest.approx(0.5, rel=2e-4)


@pytest.mark.parametrize("m, k", [(1, 1), (4097, 3), (97, 1823)])
def test_gemv_by_listing_tensors(m, k):
    op = rl.gemv(m, k, "fp16")
    assert op.flop == 2 * m * k
    assert op.bytes_moved == traffic({"A": (m, k), "x": (k,)}, {"y": (m,)}, 2)
    # a gemv is a matmul with n = 1
    assert op.flop == rl.matmul(m, k, 1, "fp16").flop
    assert op.bytes_moved == rl.matmul(m, k, 1, "fp16").bytes_moved


@pytest.mark.parametrize("dtype", list(rl.BYTES_PER_ELEMENT))
def test_relu_intensity_is_one_over_two_b(dtype):
    op = rl.relu(1_000_003, dtype)
    b = rl.BYTES_PER_ELEMENT[dtype]
    assert op.intensity_flop_per_byte == pytest.approx(1 / (2 * b))
    assert op.bytes_moved == traffic({"x": (1_000_003,)}, {"y": (1_000_003,)}, b)


def test_relu_is_a_chain_of_one():
    assert rl.relu(777).flop == rl.elementwise_chain(777, 1).flop
    assert rl.relu(777).bytes_moved == rl.elementwise_chain(777, 1).bytes_moved
    assert rl.elementwise_chain(777, 1, fused=False).bytes_moved == rl.relu(777).bytes_moved


def test_elementwise_chain_closed_forms():
    n, k = 1001, 5
    fused = rl.elementwise_chain(n, k, "fp32")
    unfused = rl.elementwise_chain(n, k, "fp32", fused=False)
    assert fused.flop == unfused.flop == k * n
    assert fused.bytes_moved == traffic({"x": (n,)}, {"y": (n,)}, 4)
    # unfused: op i reads t_{i-1} and writes t_i, for i = 1..k
    reads = {f"t{i}": (n,) for i in range(k)}
    writes = {f"t{i + 1}": (n,) for i in range(k)}
    assert unfused.bytes_moved == traffic(reads, writes, 4)
    assert unfused.bytes_moved / fused.bytes_moved == k


@settings(max_examples=100, deadline=None)
@given(
    n=st.integers(1, 10**9),
    k=st.integers(1, 64),
    dtype=st.sampled_from(list(rl.BYTES_PER_ELEMENT)),
)
def test_fused_chain_never_moves_more_bytes(n, k, dtype):
    fused = rl.elementwise_chain(n, k, dtype)
    unfused = rl.elementwise_chain(n, k, dtype, fused=False)
    assert fused.bytes_moved <= unfused.bytes_moved
    assert fused.intensity_flop_per_byte >= unfused.intensity_flop_per_byte


class Ledger:
    """An independent reference: run an op as numpy primitives and count each one's FLOP and traffic.

    Each primitive reads its distinct input arrays once and writes its output once (one eager kernel).
    Elementwise ops cost one FLOP per output element; a reduction over the last axis costs c - 1 per row.
    """

    def __init__(self):
        self.flop = 0
        self.read_elements = 0
        self.write_elements = 0
        self.kernels = 0

    def _record(self, flop, inputs, out):
        self.flop += flop
        distinct = {id(a): a for a in inputs}
        self.read_elements += sum(np.asarray(a).size for a in distinct.values())
        self.write_elements += out.size
        self.kernels += 1
        return out

    def elementwise(self, fn, *inputs):
        out = fn(*inputs)
        return self._record(out.size, inputs, out)

    def reduce(self, fn, x):
        out = fn(x, axis=-1, keepdims=True)
        return self._record(x.size - out.size, [x], out)

    def mean(self, x):
        out = np.mean(x, axis=-1, keepdims=True)
        return self._record(x.size - out.size + out.size, [x], out)  # c - 1 adds + 1 divide per row


def layernorm_by_ledger(x, gamma, beta, eps=1e-5):
    led = Ledger()
    mean = led.mean(x)
    xc = led.elementwise(np.subtract, x, mean)
    sq = led.elementwise(np.multiply, xc, xc)
    var = led.mean(sq)
    t = led.elementwise(lambda v: v + eps, var)
    rstd = led.elementwise(lambda v: 1 / np.sqrt(v), t)
    xhat = led.elementwise(np.multiply, xc, rstd)
    ys = led.elementwise(np.multiply, xhat, gamma)
    y = led.elementwise(np.add, ys, beta)
    return y, led


def softmax_by_ledger(x):
    led = Ledger()
    m = led.reduce(np.max, x)
    z = led.elementwise(np.subtract, x, m)
    e = led.elementwise(np.exp, z)
    s = led.reduce(np.sum, e)
    y = led.elementwise(np.divide, e, s)
    return y, led


@pytest.mark.parametrize("rows, cols", [(1, 1), (7, 13), (33, 1), (5, 97)])
@pytest.mark.parametrize("dtype", ["fp32", "bf16", "fp8"])
def test_layernorm_against_the_ledger(rows, cols, dtype):
    rng = np.random.default_rng(rows * 1000 + cols)
    x, gamma, beta = rng.normal(size=(rows, cols)), rng.normal(size=cols), rng.normal(size=cols)
    y, led = layernorm_by_ledger(x, gamma, beta)
    # the decomposition really is LayerNorm
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * gamma + beta
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-12)
    b = rl.bytes_per_element(dtype)
    unfused = rl.layernorm(rows, cols, dtype, fused=False)
    assert unfused.flop == led.flop == rows * (7 * cols + 2)
    assert unfused.bytes_moved == (led.read_elements + led.write_elements) * b
    assert len(rl.layernorm_passes(rows, cols)) == led.kernels
    fused = rl.layernorm(rows, cols, dtype)
    assert fused.flop == led.flop  # fusion saves traffic, not arithmetic
    assert fused.bytes_moved == traffic(
        {"x": (rows, cols), "gamma": (cols,), "beta": (cols,)}, {"y": (rows, cols)}, b
    )


@pytest.mark.parametrize("rows, cols", [(1, 1), (7, 13), (33, 1), (5, 97)])
@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_softmax_against_the_ledger(rows, cols, dtype):
    rng = np.random.default_rng(rows * 1000 + cols)
    x = rng.normal(size=(rows, cols)) * 30
    y, led = softmax_by_ledger(x)
    expected = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(y, expected / expected.sum(-1, keepdims=True), rtol=1e-12)
    b = rl.bytes_per_element(dtype)
    unfused = rl.softmax(rows, cols, dtype, fused=False)
    assert unfused.flop == led.flop == rows * (5 * cols - 2)
    assert unfused.bytes_moved == (led.read_elements + led.write_elements) * b
    assert len(rl.softmax_passes(rows, cols)) == led.kernels
    fused = rl.softmax(rows, cols, dtype)
    assert fused.flop == led.flop
    assert fused.bytes_moved == traffic({"x": (rows, cols)}, {"y": (rows, cols)}, b)


def test_unfused_normalizations_move_several_times_the_bytes():
    r, c = 8 * 4096, 4096
    ln = rl.layernorm(r, c, fused=False).bytes_moved / rl.layernorm(r, c).bytes_moved
    sm = rl.softmax(r, c, fused=False).bytes_moved / rl.softmax(r, c).bytes_moved
    assert ln == pytest.approx(12 / 2, rel=1e-3) and sm == pytest.approx(8 / 2, rel=1e-3)
    assert rl.softmax(r, c, fused=False).intensity_flop_per_byte == pytest.approx(5 / 16, rel=1e-3)


@pytest.mark.parametrize("seq_len, head_dim", [(1, 1), (97, 64), (1025, 128), (4096, 80)])
def test_attention_scores_by_listing_tensors(seq_len, head_dim):
    op = rl.attention_scores(seq_len, head_dim, "fp16")
    assert op.flop == matmul_flop_by_loops(1, head_dim, 1) * seq_len * seq_len
    assert op.bytes_moved == traffic(
        {"Q": (seq_len, head_dim), "K": (seq_len, head_dim)}, {"S": (seq_len, seq_len)}, 2
    )
    # S = Q K^T is a matmul of shape (N, d) x (d, N)
    assert op.flop == rl.matmul(seq_len, head_dim, seq_len, "fp16").flop
    assert op.bytes_moved == rl.matmul(seq_len, head_dim, seq_len, "fp16").bytes_moved


def test_attention_scores_intensity_tends_to_2d_over_b():
    assert rl.attention_scores(2**20, 64, "bf16").intensity_flop_per_byte == pytest.approx(64, rel=1e-3)


SIZED_OPS = [
    (rl.matmul, ("m", "k", "n")),
    (rl.gemv, ("m", "k")),
    (rl.elementwise_chain, ("n_elements", "k_ops")),
    (rl.relu, ("n_elements",)),
    (rl.layernorm, ("rows", "cols")),
    (rl.softmax, ("rows", "cols")),
    (rl.attention_scores, ("seq_len", "head_dim")),
]


@pytest.mark.parametrize("fn, names", SIZED_OPS, ids=[f.__name__ for f, _ in SIZED_OPS])
@pytest.mark.parametrize("bad", [0, -3, 2.5, 4.0, True, "8", None])
def test_op_sizes_must_be_positive_ints(fn, names, bad):
    for position, name in enumerate(names):
        args = [5] * len(names)
        args[position] = bad
        with pytest.raises(ValueError, match=rf"{name}.*{bad!r}"):
            fn(*args)


def test_op_sizes_accept_numpy_ints():
    assert rl.matmul(np.int64(3), np.int32(4), 5).flop == 120


# --------------------------------------------------------------------------------------------------
# Smallest compute-bound square matmul
# --------------------------------------------------------------------------------------------------


def brute_force_min_square(acc, dtype, unit):
    ridge = acc.peak_flop_per_s(dtype, unit) / acc.hbm_bytes_per_s
    n = 1
    while rl.matmul(n, n, n, dtype).intensity_flop_per_byte < ridge:
        n += 1
    return n


@pytest.mark.parametrize(
    "acc, dtype, unit",
    [
        (GPU, "bf16", "matrix"),
        (GPU, "bf16", "vector"),
        (GPU, "fp8", "matrix"),
        (GPU, "fp32", "vector"),
        (GPU, "fp64", "vector"),
        (TPU, "bf16", "matrix"),
        (TPU, "int8", "matrix"),
        (make_gpu(hbm_bytes_per_s=3e12, matrix_flop_per_s={"bf16": 7e14}), "bf16", "matrix"),
        (make_gpu(hbm_bytes_per_s=1.7e12, matrix_flop_per_s={"bf16": 3.3e14}), "bf16", "matrix"),
        (make_gpu(hbm_bytes_per_s=1e14, matrix_flop_per_s={"bf16": 1e12}), "bf16", "matrix"),  # ridge 0.01
    ],
)
def test_min_square_matmul_matches_brute_force(acc, dtype, unit):
    n = rl.min_square_matmul_for_compute_bound(acc, dtype, unit)
    assert n == brute_force_min_square(acc, dtype, unit)
    ridge = acc.ridge_point_flop_per_byte(dtype, unit)
    assert rl.analyze(rl.matmul(n, n, n, dtype), acc, unit).bound == "compute"
    if n > 1:
        assert rl.analyze(rl.matmul(n - 1, n - 1, n - 1, dtype), acc, unit).bound == "memory"
    assert abs(n - 1.5 * rl.bytes_per_element(dtype) * ridge) <= 1


def test_min_square_matmul_exact_tie():
    # ridge exactly 300 FLOP/byte, bf16: 2 N / 6 = 300 at N = 900 exactly, which counts as compute-bound
    acc = make_gpu(hbm_bytes_per_s=1e12, matrix_flop_per_s={"bf16": 300e12})
    assert rl.min_square_matmul_for_compute_bound(acc) == 900
    assert rl.matmul(900, 900, 900).intensity_flop_per_byte == acc.ridge_point_flop_per_byte("bf16")


def test_min_square_matmul_rejects_missing_peak():
    with pytest.raises(ValueError, match="tf32"):
        rl.min_square_matmul_for_compute_bound(TPU, "tf32")
    with pytest.raises(ValueError, match="unit"):
        rl.min_square_matmul_for_compute_bound(GPU, "bf16", "simd")


@needs_table
def test_min_square_matmul_on_the_a100_40gb_matches_the_seed_lecture():
    # Lecture 000, section 6: an A100 in BF16 needs N >= 602 (312 TFLOP/s over 1.555 TB/s).
    assert rl.min_square_matmul_for_compute_bound("A100 40GB SXM") == 602


# --------------------------------------------------------------------------------------------------
# Hierarchical roofs
# --------------------------------------------------------------------------------------------------


def test_compute_roofs():
    roofs = rl.compute_roofs(GPU, "bf16")
    assert [(r.name, r.kind, r.value) for r in roofs] == [
        ("Tensor Cores bf16", "compute", 800e12),
        ("CUDA cores bf16", "compute", 200e12),
    ]
    assert roofs[0].source == "test matrix source"
    assert [r.value for r in rl.compute_roofs(GPU, "fp8")] == [1600e12]  # no vector fp8
    assert [r.value for r in rl.compute_roofs(GPU, "fp64")] == [50e12]
    assert [r.name for r in rl.compute_roofs(TPU, "bf16")] == ["MXU bf16"]
    with pytest.raises(ValueError, match="fp4"):
        rl.compute_roofs(GPU, "fp4")
    with pytest.raises(ValueError, match="dtype"):
        rl.compute_roofs(GPU, "half")


def test_memory_roofs():
    roofs = rl.memory_roofs(GPU)
    assert [r.name for r in roofs] == ["HBM", "L2", "shared memory"]
    assert all(r.kind == "memory" for r in roofs)
    assert roofs[0].value == 4e12 and roofs[1].value == 12e12
    assert roofs[2].value == 128 * 100 * 2e9  # bytes/clock/SM x SMs x clock = 25.6 TB/s
    assert "test smem source" in roofs[2].source and "test clock source" in roofs[2].source
    values = [r.value for r in roofs]
    assert values == sorted(values)  # slowest first
    # a device without L2 bandwidth or shared memory figures has only HBM
    assert [(r.name, r.value, r.source) for r in rl.memory_roofs(TPU)] == [("HBM", 1e12, "tpu hbm source")]


def test_roof_validates():
    with pytest.raises(ValueError, match="kind"):
        rl.Roof("x", "cache", 1.0, "")
    with pytest.raises(ValueError, match="value"):
        rl.Roof("x", "memory", 0.0, "")


@needs_table
def test_every_device_in_the_table_has_roofs():
    for acc in hardware.ACCELERATORS:
        assert rl.memory_roofs(acc)[0].value == acc.hbm_bytes_per_s
        for dtype in {*acc.matrix_flop_per_s, *acc.vector_flop_per_s}:
            roofs = rl.compute_roofs(acc, dtype)
            assert max(r.value for r in roofs) == max(
                acc.matrix_flop_per_s.get(dtype, 0), acc.vector_flop_per_s.get(dtype, 0)
            )


# --------------------------------------------------------------------------------------------------
# Formatting, argument types and the order of the roofs
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "time_s, text",
    [
        (0.0, "0 ns"),
        (3.7e-10, "0.37 ns"),
        (5e-9, "5 ns"),
        (999.4e-9, "999 ns"),
        (999.6e-9, "1 µs"),  # rounded first, then the unit: not "1e+03 ns"
        (1.389e-4, "139 µs"),
        (0.99951e-3, "1 ms"),
        (2.054e-3, "2.05 ms"),
        (0.99951, "1 s"),
        (59.96, "60 s"),
        (1234.5, "1230 s"),
    ],
)
def test_format_duration(time_s, text):
    assert rl.format_duration(time_s) == text


@pytest.mark.parametrize("bad", [-1e-9, float("nan"), float("inf"), "1 ms", None, True])
def test_format_duration_rejects_bad_times(bad):
    with pytest.raises(ValueError, match="time_s") as err:
        rl.format_duration(bad)
    assert repr(bad) in str(err.value)


def test_summary_states_the_time_in_its_unit():
    a = rl.analyze(rl.gemv(4096, 4096), make_gpu())  # (4096^2 + 2 * 4096) * 2 B / 4e12 B/s = 8.39 us
    assert a.time_s == pytest.approx((4096**2 + 2 * 4096) * 2 / 4e12)
    assert ">= 8.39 µs" in a.summary()


@pytest.mark.parametrize(
    "call",
    [
        lambda fused: rl.elementwise_chain(10, 3, fused=fused),
        lambda fused: rl.layernorm(3, 7, fused=fused),
        lambda fused: rl.softmax(3, 7, fused=fused),
    ],
)
@pytest.mark.parametrize("bad", ["no", 0, None, 1.0])
def test_fused_must_be_a_bool(call, bad):
    with pytest.raises(ValueError, match=r"fused must be True or False") as err:
        call(bad)
    assert repr(bad) in str(err.value)
    # numpy booleans (from an array comparison, say) are fine
    assert call(np.bool_(False)) == call(False) and call(np.bool_(True)) == call(True)


@pytest.mark.parametrize("bad", [["bf16"], {"bf16": 2}])
def test_unhashable_dtype_or_unit_is_a_value_error(bad):
    with pytest.raises(ValueError, match="dtype"):
        rl.bytes_per_element(bad)
    with pytest.raises(ValueError, match="unit"):
        rl.analyze(rl.relu(5), GPU, unit=bad)


def test_memory_roofs_are_sorted_even_when_l2_is_the_fastest():
    # a made-up device whose (measured) L2 outruns its shared memory: 30 TB/s against 25.6 TB/s
    acc = make_gpu(l2_bytes_per_s=30e12)
    roofs = rl.memory_roofs(acc)
    assert [r.name for r in roofs] == ["HBM", "shared memory", "L2"]
    assert [r.value for r in roofs] == [4e12, 25.6e12, 30e12]


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 10**7), d=st.integers(1, 512), dtype=st.sampled_from(["fp32", "bf16", "fp8"]))
def test_attention_scores_intensity_stays_below_2d_over_b(n, d, dtype):
    b = rl.bytes_per_element(dtype)
    intensity = rl.attention_scores(n, d, dtype).intensity_flop_per_byte
    assert intensity < 2 * d / b
    assert intensity == pytest.approx(2 * d / b * n / (n + 2 * d), rel=1e-12)


def test_h200_shared_memory_roof_is_an_upper_bound_at_the_boost_clock():
    h200 = hardware.get_accelerator("H200 SXM")
    smem = [r for r in rl.memory_roofs(h200) if r.name == "shared memory"]
    assert len(smem) == 1
    assert smem[0].value == pytest.approx(128 * 132 * 1.98e9)  # 33.5 TB/s, about 7x HBM
    assert round(smem[0].value / h200.hbm_bytes_per_s) == 7


# ---- second edition: the no-overlap bracket, the general matmul intensity, residual + RMSNorm, ridge rows ----
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(flop=st.floats(0, 1e18), bytes_moved=st.floats(1, 1e15), peak=st.floats(1e9, 1e16), bw=st.floats(1e9, 1e14))
def test_no_overlap_time_brackets_the_roofline_within_two(flop, bytes_moved, peak, bw):
    lower = rl.time_lower_bound_s(flop, bytes_moved, peak, bw)
    upper = rl.time_no_overlap_s(flop, bytes_moved, peak, bw)
    assert lower <= upper <= 2 * lower * (1 + 1e-12)
    assert upper == pytest.approx(flop / peak + bytes_moved / bw)


def test_no_overlap_equals_twice_the_bound_exactly_at_the_ridge():
    h200 = hardware.get_accelerator("H200 SXM")
    ridge = h200.ridge_point_flop_per_byte("bf16")
    a = rl.analyze(rl.OpCost("at the ridge", ridge * 1e9, 1e9, "bf16"), h200)
    assert a.no_overlap_time_s == pytest.approx(2 * a.time_s)
    with pytest.raises(ValueError, match="bytes_per_s"):
        rl.time_no_overlap_s(1.0, 1.0, 1.0, 0.0)


@settings(max_examples=200, deadline=None)
@given(m=st.integers(1, 10**5), k=st.integers(1, 10**5), n=st.integers(1, 10**5),
       dtype=st.sampled_from(["fp32", "bf16", "fp8", "fp4"]))
def test_matmul_intensity_closed_form_and_the_smallest_dimension(m, k, n, dtype):
    closed = rl.matmul_intensity_flop_per_byte(m, k, n, dtype)
    assert closed == pytest.approx(rl.matmul(m, k, n, dtype).intensity_flop_per_byte, rel=1e-12)
    b = rl.bytes_per_element(dtype)
    smallest = min(m, k, n)
    assert 2 * smallest / (3 * b) * (1 - 1e-12) <= closed <= 2 * smallest / b * (1 + 1e-12)


def test_residual_rmsnorm_counts():
    t, d = 8192, 4096
    fused, unfused = rl.residual_rmsnorm(t, d, fused=True), rl.residual_rmsnorm(t, d, fused=False)
    assert fused.flop == unfused.flop == t * (5 * d + 2)
    assert fused.bytes_moved == (4 * t * d + d) * 2 and unfused.bytes_moved == (5 * t * d + d) * 2
    assert unfused.bytes_moved / fused.bytes_moved == pytest.approx(1.25, rel=1e-4)
    with pytest.raises(ValueError, match="tokens"):
        rl.residual_rmsnorm(0, d)
    with pytest.raises(ValueError, match="fused"):
        rl.residual_rmsnorm(1, d, fused="yes")


def test_ridge_rows():
    rows = rl.ridge_rows(["V100 SXM2", "B200"], dtypes=("fp16", "fp4"))
    v100, b200 = rows
    assert v100["ridge_fp4"] is None and v100["peak_fp4"] is None
    assert v100["ridge_fp16"] == pytest.approx(125e12 / 900e9)
    assert b200["ridge_fp4"] == pytest.approx(9e15 / 7.7e12) and b200["name"] == "B200"
    with pytest.raises(ValueError, match="dtype"):
        rl.ridge_rows(["B200"], dtypes=("fp12",))
