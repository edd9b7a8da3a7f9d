"""Tests of gpuperf.benchmark.timing: the counting (against closed forms), the timing harness (with a fake clock),
the structure of a Measurement, and input validation. Speeds are never asserted: they depend on the machine.
"""

from __future__ import annotations

import statistics

import numpy as np
import pytest

from gpuperf.benchmark import timing as measure
from gpuperf.benchmark.timing import (
    Measurement,
    copy_bytes_moved,
    measure_copy_bytes_per_s,
    measure_matmul_flop_per_s,
    square_matmul_flop,
    time_calls_s,
)


# --- counting -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 7, 97, 1023])
def test_square_matmul_flop_is_2n_cubed(n):
    assert square_matmul_flop(n) == 2 * n**3


@pytest.mark.parametrize("n", [1, 3, 5, 13])
def test_square_matmul_flop_matches_a_count_of_multiply_adds(n):
    # Independent reference: walk the triple loop of C = A B and count one multiply and one add per term.
    counted = 0
    for _i in range(n):
        for _j in range(n):
            for _k in range(n):
                counted += 2
    assert square_matmul_flop(n) == counted


@pytest.mark.parametrize("n_bytes", [1, 3, 4096, 1_000_003])
def test_copy_counts_read_plus_write(n_bytes):
    src = np.arange(n_bytes, dtype=np.uint64).astype(np.uint8)
    dst = np.zeros_like(src)
    np.copyto(dst, src)
    # Independent reference: the bytes of the source array (read) plus those of the destination (written).
    assert copy_bytes_moved(n_bytes) == src.nbytes + dst.nbytes == 2 * n_bytes
    assert np.array_equal(dst, src)


# --- the timing harness, with a fake clock ---------------------------------------------------------------

class FakeClock:
    """Advances by the next duration each time it is read twice (start, stop)."""

    def __init__(self, durations_s):
        self.durations_s = list(durations_s)
        self.now = 0.0
        self.reads = 0

    def __call__(self):
        if self.reads % 2 == 1:
            self.now += self.durations_s[self.reads // 2]
        self.reads += 1
        return self.now


def test_time_calls_s_returns_each_duration_and_runs_warmup_untimed():
    calls, syncs = [], []
    clock = FakeClock([0.5, 0.25, 2.0])
    times = time_calls_s(lambda: calls.append(1), repeats=3, warmup=2,
                         synchronize=lambda: syncs.append(1), clock=clock)
    assert times == (0.5, 0.25, 2.0)
    assert len(calls) == 2 + 3
    # One sync after the warm-up, one after each timed call.
    assert len(syncs) == 1 + 3


def test_measurement_value_is_median_of_rates(monkeypatch):
    # Replace the timer so the rates are known: work / time for each call.
    fake_times = (4.0, 1.0, 2.0, 8.0, 0.5)
    monkeypatch.setattr(measure, "time_calls_s", lambda *a, **k: fake_times)
    m = measure_matmul_flop_per_s(n=3, repeats=5)
    flop = 2 * 3**3
    assert m.work == flop
    assert m.times_s == fake_times
    assert m.samples == tuple(flop / t for t in fake_times)
    assert m.value == flop / 2.0  # the median time gives the median rate for an odd count
    assert m.value == statistics.median(m.samples)
    assert m.best == flop / 0.5  # the fastest call


# --- real measurements: structure and positivity, never speed ----------------------------------------------

@pytest.mark.parametrize("dtype, short", [("float32", "fp32"), ("fp64", "fp64"), ("float16", "fp16")])
def test_matmul_measurement_structure(dtype, short):
    m = measure_matmul_flop_per_s(n=37, dtype=dtype, repeats=3)
    assert isinstance(m, Measurement)
    assert m.unit == "FLOP/s"
    assert m.dtype == short and m.device == "cpu"
    assert m.work == 2 * 37**3
    assert len(m.samples) == len(m.times_s) == 3
    assert all(s > 0 and np.isfinite(s) for s in m.samples)
    assert all(t >= 0 for t in m.times_s)
    assert min(m.samples) <= m.value <= max(m.samples)
    assert "37x37x37" in m.what and short in m.what
    assert "FLOP/s" in m.summary and "median of 3" in m.summary


def test_copy_measurement_structure():
    m = measure_copy_bytes_per_s(n_bytes=100_003, repeats=4)
    assert m.unit == "bytes/s"
    assert m.work == 2 * 100_003
    assert len(m.samples) == 4
    assert all(s > 0 and np.isfinite(s) for s in m.samples)
    assert m.value == statistics.median(m.samples)
    assert "B/s" in m.summary


def test_measurement_is_frozen():
    m = measure_copy_bytes_per_s(n_bytes=1000, repeats=1)
    with pytest.raises(AttributeError):
        m.value = 1.0


# --- validation -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [0, -4, 2.0, "8", True, None])
def test_bad_sizes_raise_naming_the_argument(bad):
    with pytest.raises(ValueError, match="n must be") as err:
        measure_matmul_flop_per_s(n=bad)
    assert repr(bad) in str(err.value)
    with pytest.raises(ValueError, match="n_bytes must be"):
        measure_copy_bytes_per_s(n_bytes=bad)
    with pytest.raises(ValueError, match="repeats must be"):
        measure_matmul_flop_per_s(n=4, repeats=bad)
    with pytest.raises(ValueError, match="repeats must be"):
        measure_copy_bytes_per_s(n_bytes=4, repeats=bad)
    with pytest.raises(ValueError, match="n must be"):
        square_matmul_flop(bad)
    with pytest.raises(ValueError, match="n_bytes must be"):
        copy_bytes_moved(bad)


@pytest.mark.parametrize("bad", ["int4", "float8", "FP32", ""])
def test_unknown_dtype_raises(bad):
    with pytest.raises(ValueError, match="dtype must be one of") as err:
        measure_matmul_flop_per_s(n=4, dtype=bad)
    assert repr(bad) in str(err.value)


def test_bfloat16_on_cpu_raises_naming_dtype():
    with pytest.raises(ValueError, match="dtype 'bfloat16'"):
        measure_matmul_flop_per_s(n=4, dtype="bfloat16", device="cpu")


@pytest.mark.parametrize("bad", ["gpu", "cuda:0", "", None])
def test_unknown_device_raises(bad):
    with pytest.raises(ValueError, match="device must be"):
        measure_matmul_flop_per_s(n=4, device=bad)
    with pytest.raises(ValueError, match="device must be"):
        measure_copy_bytes_per_s(n_bytes=4, device=bad)


def test_cuda_without_a_gpu_raises(monkeypatch):
    import gpuperf.records

    monkeypatch.setattr(gpuperf.records, "cuda_available", lambda: False)
    with pytest.raises(ValueError, match="device 'cuda'"):
        measure_copy_bytes_per_s(n_bytes=4, device="cuda")


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_time_calls_s_rejects_bad_warmup(bad):
    with pytest.raises(ValueError, match="warmup must be"):
        time_calls_s(lambda: None, repeats=1, warmup=bad)


def test_time_calls_s_rejects_non_callable():
    with pytest.raises(ValueError, match="call must be callable"):
        time_calls_s(42, repeats=1)


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("gpuperf.records").records.cuda_available(), reason="needs a CUDA GPU")
def test_cuda_measurements_structure():
    m = measure_matmul_flop_per_s(n=256, dtype="bf16", repeats=3, device="cuda")
    assert m.device == "cuda" and m.dtype == "bf16" and m.value > 0
    c = measure_copy_bytes_per_s(n_bytes=2**20, repeats=3, device="cuda")
    assert c.work == 2**21 and c.value > 0
    a = measure.measure_add_flop_per_s(n_elements=2**20 + 3, repeats=3, device="cuda", dtype="bf16")
    assert a.device == "cuda" and a.dtype == "bf16" and a.work == 2**20 + 3 and a.value > 0


# --- the measured machine as an Accelerator ----------------------------------------------------------------

def _fake(unit, value, device="cpu", dtype="fp32", samples=None):
    samples = (value,) if samples is None else samples
    return Measurement(what="fake", value=value, unit=unit, samples=samples, times_s=(1.0,) * len(samples),
                       work=value, device=device, dtype=dtype)


def test_measured_accelerator_carries_the_two_numbers():
    from gpuperf.benchmark.timing import measured_accelerator

    acc = measured_accelerator(_fake("FLOP/s", 3e11), _fake("bytes/s", 4e10), name="my laptop")
    assert acc.name == "my laptop"
    assert acc.peak_flop_per_s("fp32") == 3e11
    assert acc.hbm_bytes_per_s == 4e10
    # Ridge point = peak / bandwidth, the closed form.
    assert acc.ridge_point_flop_per_byte("fp32") == pytest.approx(3e11 / 4e10)
    with pytest.raises(ValueError):
        acc.peak_flop_per_s("fp32", unit="vector")  # nothing measured there


def test_measured_accelerator_validates():
    from gpuperf.benchmark.timing import measured_accelerator

    flops, bw = _fake("FLOP/s", 1e9), _fake("bytes/s", 1e9)
    with pytest.raises(ValueError, match="matmul must be"):
        measured_accelerator(bw, bw)
    with pytest.raises(ValueError, match="copy must be"):
        measured_accelerator(flops, flops)
    with pytest.raises(ValueError, match="different devices"):
        measured_accelerator(flops, _fake("bytes/s", 1e9, device="cuda"))
    with pytest.raises(ValueError, match="name must be"):
        measured_accelerator(flops, bw, name="")
    with pytest.raises(ValueError, match="statistic must be"):
        measured_accelerator(flops, bw, statistic="mean")


def test_measured_accelerator_best_takes_the_fastest_samples():
    from gpuperf.benchmark.timing import measured_accelerator

    matmul = _fake("FLOP/s", 2e11, samples=(1e11, 2e11, 5e11))
    copy = _fake("bytes/s", 3e10, samples=(3e10, 1e10, 4e10))
    median = measured_accelerator(matmul, copy)
    best = measured_accelerator(matmul, copy, statistic="best")
    assert median.peak_flop_per_s("fp32") == 2e11 and median.hbm_bytes_per_s == 3e10
    assert best.peak_flop_per_s("fp32") == 5e11 and best.hbm_bytes_per_s == 4e10


# --- the elementwise add: a point under the roofs ---------------------------------------------------------

@pytest.mark.parametrize("n_elements", [1, 3, 1000, 1_000_003])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_add_counts_match_the_arrays_it_touches(n_elements, dtype):
    from gpuperf.benchmark.timing import add_bytes_moved, add_flop

    x = np.ones(n_elements, dtype=dtype)
    y = np.full(n_elements, 2, dtype=dtype)
    z = np.empty_like(x)
    np.add(x, y, out=z)
    # Independent reference: one add per output element; bytes of both inputs (read) plus the output (written).
    assert add_flop(n_elements) == z.size
    assert add_bytes_moved(n_elements, dtype) == x.nbytes + y.nbytes + z.nbytes
    assert np.all(z == 3)


@pytest.mark.parametrize("dtype, b", [("float32", 4), ("fp32", 4), ("float64", 8), ("fp16", 2), ("bf16", 2)])
def test_add_bytes_moved_is_3nb_and_intensity_1_over_3b(dtype, b):
    from gpuperf.benchmark.timing import add_bytes_moved, add_flop
    from gpuperf.roofline import arithmetic_intensity

    n = 2**23 + 5
    assert add_bytes_moved(n, dtype) == 3 * n * b
    assert arithmetic_intensity(add_flop(n), add_bytes_moved(n, dtype)) == pytest.approx(1 / (3 * b), rel=1e-15)
    assert add_bytes_moved(7) == 84  # the default is fp32: 3 x 7 x 4


def test_add_measurement_rates_are_elements_over_time(monkeypatch):
    fake_times = (0.002, 0.004, 0.001)
    monkeypatch.setattr(measure, "time_calls_s", lambda *a, **k: fake_times)
    m = measure.measure_add_flop_per_s(n_elements=1001, repeats=3)
    assert m.unit == "FLOP/s" and m.work == 1001
    assert m.samples == tuple(1001 / t for t in fake_times)
    assert m.value == 1001 / 0.002 and m.best == 1001 / 0.001


def test_add_measurement_times_the_add_it_describes(monkeypatch):
    # Run the timed call once ourselves and check it wrote x + y into an output array of the right size.
    seen = {}

    def fake_time_calls_s(call, repeats, **kwargs):
        seen["result"] = call()
        return (1.0,) * repeats

    monkeypatch.setattr(measure, "time_calls_s", fake_time_calls_s)
    m = measure.measure_add_flop_per_s(n_elements=37, repeats=2, dtype="float16")
    result = seen["result"]
    assert result.shape == (37,) and result.dtype == np.float16 and np.all(result == 2)
    assert m.dtype == "fp16" and m.samples == (37.0, 37.0)


def test_add_measurement_structure():
    m = measure.measure_add_flop_per_s(n_elements=100_003, repeats=3)
    assert isinstance(m, Measurement)
    assert m.unit == "FLOP/s" and m.device == "cpu" and m.dtype == "fp32"
    assert m.work == 100_003
    assert len(m.samples) == len(m.times_s) == 3
    assert all(s > 0 and np.isfinite(s) for s in m.samples)
    assert m.value == statistics.median(m.samples) and m.best == max(m.samples)
    assert "100003" in m.what and "fp32" in m.what


@pytest.mark.parametrize("bad", [0, -4, 2.0, "8", True, None])
def test_add_rejects_bad_sizes_naming_the_argument(bad):
    from gpuperf.benchmark.timing import add_bytes_moved, add_flop

    with pytest.raises(ValueError, match="n_elements must be") as err:
        measure.measure_add_flop_per_s(n_elements=bad)
    assert repr(bad) in str(err.value)
    with pytest.raises(ValueError, match="repeats must be"):
        measure.measure_add_flop_per_s(n_elements=4, repeats=bad)
    with pytest.raises(ValueError, match="n_elements must be"):
        add_flop(bad)
    with pytest.raises(ValueError, match="n_elements must be"):
        add_bytes_moved(bad)


def test_add_rejects_bad_dtype_and_device():
    with pytest.raises(ValueError, match="dtype must be one of") as err:
        measure.measure_add_flop_per_s(n_elements=4, dtype="int8")
    assert "'int8'" in str(err.value)
    with pytest.raises(ValueError, match="dtype must be one of"):
        measure.add_bytes_moved(4, dtype="float8")
    with pytest.raises(ValueError, match="dtype 'bfloat16'"):
        measure.measure_add_flop_per_s(n_elements=4, dtype="bfloat16", device="cpu")
    with pytest.raises(ValueError, match="device must be"):
        measure.measure_add_flop_per_s(n_elements=4, device="gpu")


# --- sizes given as numpy integers, and what a measured machine leaves unmeasured -------------------------

def test_numpy_integer_sizes_are_accepted_and_counted_exactly():
    # A size read from an array (np.int64) is a size; the counts come back as Python ints, which cannot
    # overflow: 2 n^3 for n = 2**21 is 2**64, past int64.
    assert square_matmul_flop(np.int64(2**21)) == 2**64
    assert type(square_matmul_flop(np.int32(3))) is int
    assert copy_bytes_moved(np.int64(5)) == 10
    assert measure.add_flop(np.uint16(7)) == 7
    assert measure.add_bytes_moved(np.int64(7), "fp16") == 42
    m = measure_copy_bytes_per_s(n_bytes=np.int64(1000), repeats=np.int64(2))
    assert m.work == 2000 and len(m.samples) == 2


def test_measured_accelerator_marks_unmeasured_figures_as_none():
    from gpuperf import roofline
    from gpuperf.benchmark.timing import measured_accelerator

    acc = measured_accelerator(_fake("FLOP/s", 3e11), _fake("bytes/s", 4e10))
    assert acc.sm_count is None and acc.boost_clock_hz is None and acc.l2_bytes is None
    assert acc.shared_memory_bytes_per_clock_per_sm is None and acc.vector_flop_per_s == {}
    # so its hierarchy has one memory roof and one compute roof, the two measured numbers
    assert [(r.name, r.value) for r in roofline.memory_roofs(acc)] == [("HBM", 4e10)]
    assert [r.value for r in roofline.compute_roofs(acc, "fp32")] == [3e11]
    # and the smallest compute-bound fp32 square matmul follows from I = N / 6 >= 7.5
    assert roofline.min_square_matmul_for_compute_bound(acc, "fp32") == 45


def test_matmul_on_the_cpu_computes_the_product_it_times(monkeypatch):
    seen = {}

    def fake_time_calls_s(call, repeats, **kwargs):
        seen["result"] = call()
        return (1.0,) * repeats

    monkeypatch.setattr(measure, "time_calls_s", fake_time_calls_s)
    measure_matmul_flop_per_s(n=5, repeats=1, dtype="float64")
    rng = np.random.default_rng(0)  # the same inputs, drawn independently
    a, b = rng.standard_normal((5, 5)), rng.standard_normal((5, 5))
    np.testing.assert_allclose(seen["result"], a @ b, rtol=1e-12)


# ---- the bandwidth roof as the best of copy and add; the BLAS thread request -------------------------------
def _fake_run(unit, samples, work, device="cpu"):
    from gpuperf.benchmark.timing import Measurement

    return Measurement("fake", sorted(samples)[len(samples) // 2], unit, tuple(samples),
                       tuple(work / s for s in samples), work, device, "fp32")


def test_as_bandwidth_scales_every_sample():
    from gpuperf.benchmark.timing import as_bandwidth

    add = _fake_run("FLOP/s", [1e9, 2e9, 3e9], work=100.0)
    bw = as_bandwidth(add, bytes_moved=1200.0)
    assert bw.unit == "bytes/s" and bw.samples == (12e9, 24e9, 36e9) and bw.best == 36e9 and bw.value == 24e9
    with pytest.raises(ValueError, match="run"):
        as_bandwidth(bw, 1.0)
    with pytest.raises(ValueError, match="bytes_moved"):
        as_bandwidth(add, 0)


def test_best_bandwidth_picks_the_fastest_call():
    from gpuperf.benchmark.timing import best_bandwidth

    copy = _fake_run("bytes/s", [5e9, 6e9], work=1.0)
    add = _fake_run("bytes/s", [4e9, 8e9], work=1.0)
    assert best_bandwidth(copy, add) is add and best_bandwidth(copy) is copy
    with pytest.raises(ValueError, match="runs"):
        best_bandwidth()
    with pytest.raises(ValueError, match="different devices"):
        best_bandwidth(copy, _fake_run("bytes/s", [1e9], 1.0, device="cuda"))


def test_request_single_blas_thread_in_a_fresh_process():
    import subprocess
    import sys

    code = ("import os; [os.environ.pop(v, None) for v in ('OPENBLAS_NUM_THREADS','MKL_NUM_THREADS',"
            "'OMP_NUM_THREADS','VECLIB_MAXIMUM_THREADS')]\n"
            "from gpuperf.benchmark.blas_threads import request_single_blas_thread as r\n"
            "first = r(); import numpy; second = r()\n"
            "print(first, second, os.environ['OPENBLAS_NUM_THREADS'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False", "1"]
