"""Tests of gpuperf.overhead: the three-term model against hand values and its limits, the steady state,
the doubling test, and the ATen op counter on the CPU."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf import overhead as oh
from gpuperf.benchmark import host_overhead as ho

pos = st.floats(min_value=1e-9, max_value=1e3, allow_nan=False)


def test_kernel_time_terms_and_regimes():
    kt = oh.kernel_time(flop=1e12, bytes_moved=1e9, peak_flop_per_s=1e15, bytes_per_s=1e12, overhead_s=5e-6)
    assert kt.compute_s == pytest.approx(1e-3) and kt.memory_s == pytest.approx(1e-3)
    assert kt.time_s == pytest.approx(1e-3 + 5e-6)
    assert oh.kernel_time(1, 1, 1e15, 1e12, 5e-6).regime == "overhead"
    assert oh.kernel_time(1e6, 1e9, 1e15, 1e12, 5e-6).regime == "memory"
    assert oh.kernel_time(1e15, 1e9, 1e15, 1e12, 5e-6).regime == "compute"


@settings(max_examples=100, deadline=None)
@given(g=pos, h=pos)
def test_steady_state_and_busy_fraction(g, h):
    t = oh.steady_state_time_s(g, h)
    assert t == max(g, h)
    f = oh.gpu_busy_fraction(g, h)
    assert 0 < f <= 1 and f == pytest.approx(g / max(g, h))
    assert (f == 1.0) == (g >= h)


def test_sweep_has_three_regimes():
    sizes = [2**p for p in range(8, 29)]
    times = oh.sweep_times_s(sizes, 1.0, 12.0, 60e12, 4e12, 5e-6)
    assert times[0] == 5e-6  # flat: the host time
    assert times[-1] == pytest.approx(12 * 2**28 / 4e12)  # memory-bound: bytes / B
    mm = oh.sweep_times_s([64, 8192], 2.0, 6.0, 700e12, 4e12, 5e-6, flop_power=3, bytes_power=2)
    assert mm[0] == 5e-6 and mm[1] == pytest.approx(2 * 8192**3 / 700e12)


def test_doubling():
    assert oh.doubling_ratio(lambda n: 5e-6 + n * 1e-12, 1000) == pytest.approx((5e-6 + 2e-9) / (5e-6 + 1e-9))
    assert oh.doubling_ratio(lambda n: n * 1e-9, 1000) == pytest.approx(2.0)
    assert oh.regime_from_doubling(1.05) == "overhead"
    assert oh.regime_from_doubling(1.95) == "work-bound"


def test_min_gpu_time_to_hide_host():
    assert oh.min_gpu_time_to_hide_host_s(10e-6) == 10e-6
    assert oh.min_gpu_time_to_hide_host_s(10e-6, 0.5) == 5e-6


def test_python_call_time_is_positive():
    assert ho.python_call_time_s(lambda: None, number=100, repeats=3) > 0


def test_count_aten_ops_counts_dispatched_ops():
    torch = pytest.importorskip("torch")
    x = torch.randn(4, 4)
    counts = ho.count_aten_ops(lambda: (x * 2 + 1).relu().sum())
    assert counts["mul"] == 1 and counts["add"] == 1 and counts["relu"] == 1 and counts["sum"] == 1


def test_bad_inputs_raise_value_error():
    with pytest.raises(ValueError, match="peak_flop_per_s"):
        oh.kernel_time(1, 1, 0, 1, 0)
    with pytest.raises(ValueError, match="flop"):
        oh.kernel_time(-1, 1, 1, 1, 0)
    with pytest.raises(ValueError, match="busy_fraction"):
        oh.min_gpu_time_to_hide_host_s(1e-6, 1.5)
    with pytest.raises(ValueError, match="size"):
        oh.doubling_ratio(lambda n: 1.0, 0)
    with pytest.raises(ValueError, match="number"):
        ho.python_call_time_s(lambda: None, number=0)
    with pytest.raises(ValueError, match="gpu_time_s"):
        oh.gpu_busy_fraction(0, 1)


def test_sweep_synchronous_adds_the_host_time():
    # a CPU op dispatches and computes in one thread: t_o + max(F/P, Q/B), not the GPU's max
    sync = oh.sweep_times_s([2**28], 1.0, 12.0, 60e12, 4e12, 5e-6, synchronous=True)
    assert sync[0] == pytest.approx(5e-6 + 12 * 2**28 / 4e12)
    both = oh.sweep_times_s([1000], 1.0, 12.0, 60e12, 4e12, 5e-6, synchronous=True)
    assert both[0] == pytest.approx(5e-6 + 12000 / 4e12)


def test_graph_busy_fraction():
    assert oh.graph_busy_fraction(3e-6, 1e-6) == pytest.approx(0.75)
    assert oh.graph_busy_fraction(3e-6, 0) == 1.0
    with pytest.raises(ValueError, match="device_gap_s"):
        oh.graph_busy_fraction(3e-6, -1)


def test_host_timeline_on_the_cpu():
    import torch

    x = torch.ones(64)
    events = ho.host_timeline(lambda: torch.relu(torch.add(x, 1.0)))
    top = [e for e in events if e.depth == 0]
    assert [e.name for e in top] == ["aten::add", "aten::relu"]
    assert top[0].start_s == 0 and all(e.duration_s >= 0 for e in events)
    assert top[1].start_s >= top[0].start_s + top[0].duration_s
    with pytest.raises(ValueError, match="max_depth"):
        ho.host_timeline(lambda: None, max_depth=-1)


def test_timeline_from_rows():
    rows = [
        {"experiment": "sync_trace", "variant": "a", "name": "k", "lane": "device", "start_s": 2e-6,
         "duration_s": 1e-6},
        {"experiment": "sync_trace", "variant": "a", "name": "aten::add", "lane": "host", "start_s": 0.0,
         "duration_s": 3e-6},
        {"experiment": "sync_trace", "variant": "b", "name": "x", "lane": "host", "start_s": 0.0,
         "duration_s": 1e-6},
    ]
    events = oh.timeline_from_rows(rows, "a")
    assert [(e.name, e.depth) for e in events] == [("aten::add", 0), ("k", 1)]
    with pytest.raises(ValueError, match="variant"):
        oh.timeline_from_rows(rows, "c")


def _sync_rows(steps: int, item: bool) -> list[dict]:
    """A synthetic sync trace: each step an add (host 10 us) and its kernel (1 us); with ``item``, an item
    (host 5 us) enclosing a 1 us copy. Steps every 20 us."""
    rows = []
    for i in range(steps):
        t = 20e-6 * i
        rows.append({"experiment": "sync_trace", "variant": "v", "name": "aten::add", "lane": "host",
                     "start_s": t, "duration_s": 10e-6})
        rows.append({"experiment": "sync_trace", "variant": "v", "name": "void kernel", "lane": "device",
                     "start_s": t + 9e-6, "duration_s": 1e-6})
        if item:
            rows.append({"experiment": "sync_trace", "variant": "v", "name": "aten::item", "lane": "host",
                         "start_s": t + 11e-6, "duration_s": 5e-6})
            rows.append({"experiment": "sync_trace", "variant": "v", "name": "Memcpy DtoH", "lane": "device",
                         "start_s": t + 12e-6, "duration_s": 1e-6})
    return rows


def test_summarize_sync_trace():
    s = oh.summarize_sync_trace(oh.timeline_from_rows(_sync_rows(6, item=True), "v"), skip=1)
    assert s.steps == 4 and s.first_step_s == pytest.approx(20e-6)
    assert s.step_s == pytest.approx(20e-6) and s.kernel_s == pytest.approx(1e-6)
    assert s.host_op_s == pytest.approx({"aten::add": 10e-6, "aten::item": 5e-6})
    assert s.device_busy_fraction == pytest.approx(0.1)
    assert s.copies == 4 and s.copies_inside_host == 4
    plain = oh.summarize_sync_trace(oh.timeline_from_rows(_sync_rows(6, item=False), "v"), skip=0)
    assert plain.steps == 5 and plain.copies == 0 and plain.device_busy_fraction == pytest.approx(0.05)
    events = oh.timeline_from_rows(_sync_rows(3, item=False), "v")
    with pytest.raises(ValueError, match="events"):
        oh.summarize_sync_trace(events, skip=2)
    with pytest.raises(ValueError, match="skip"):
        oh.summarize_sync_trace(events, skip=-1)


def test_timeline_window_clips_and_shifts():
    events = [oh.TimelineEvent("a", 0.0, 10e-6, 0), oh.TimelineEvent("b", 8e-6, 4e-6, 1),
              oh.TimelineEvent("c", 30e-6, 1e-6, 0)]
    out = oh.timeline_window(events, 5e-6, 10e-6)
    assert [e.name for e in out] == ["a", "b"]
    assert out[0].start_s == 0 and out[0].duration_s == pytest.approx(5e-6)
    assert out[1].start_s == pytest.approx(3e-6) and out[1].duration_s == pytest.approx(4e-6)
    with pytest.raises(ValueError, match="length_s"):
        oh.timeline_window(events, 0.0, 0.0)


def test_recorded_sync_trace_shows_the_wait():
    from gpuperf import records as recorded

    rows = recorded.load_run("overhead_sync_h200")["results"]
    free = oh.summarize_sync_trace(oh.timeline_from_rows(rows, "no sync"), skip=3)
    item = oh.summarize_sync_trace(oh.timeline_from_rows(rows, "item() after each"), skip=3)
    assert free.copies == 0 and item.copies == item.copies_inside_host == item.steps
    assert item.step_s > 2 * free.step_s
