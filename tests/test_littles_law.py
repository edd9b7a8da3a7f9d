"""gpuperf.littles_law: Little's law against hand computations and the hardware table."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf import hardware, littles_law as ll
from gpuperf.results import latency as lat

pos = st.floats(1e-9, 1e13, allow_nan=False, allow_infinity=False)


def test_h200_by_hand():
    r = ll.in_flight_requirement("H200", 600e-9)
    assert r.bytes_in_flight == pytest.approx(4.8e12 * 600e-9)  # 2.88 MB
    assert r.bytes_in_flight_per_sm == pytest.approx(2.88e6 / 132)
    assert r.warps_per_sm_needed == pytest.approx(2.88e6 / 132 / (32 * 16))
    assert r.max_warps_per_sm == 64
    assert r.fraction_of_max_warps == pytest.approx(r.warps_per_sm_needed / 64)
    r4 = ll.in_flight_requirement("H200", 600e-9, loads_per_thread=4)
    assert r4.warps_per_sm_needed == pytest.approx(r.warps_per_sm_needed / 4)


@given(pos, pos)
def test_little_product(b, t):
    assert ll.required_bytes_in_flight(b, t) == pytest.approx(b * t)


def _closed_loop(n_requests, bytes_per_request, latency_s, bytes_per_s, rounds=200):
    """Independent reference, an event simulation: ``n_requests`` requests circulate forever, each
    through one FIFO memory channel (``bytes_per_request / bytes_per_s`` of service) and then a fixed
    ``latency_s``, and is reissued the moment it returns. Returns the delivered bytes/s and the mean
    number of requests in the system (time in system x completions per second), both measured over
    the second half of the run."""
    import heapq

    service = bytes_per_request / bytes_per_s
    ready = [(0.0, i) for i in range(n_requests)]
    heapq.heapify(ready)
    server_free = 0.0
    issued, returned = [], []
    for _ in range(n_requests * rounds):
        t_issue, i = heapq.heappop(ready)
        server_free = max(t_issue, server_free) + service
        issued.append(t_issue)
        returned.append(server_free + latency_s)
        heapq.heappush(ready, (returned[-1], i))
    half = len(returned) // 2
    window_s = returned[-1] - returned[half]
    completions_per_s = (len(returned) - 1 - half) / window_s
    mean_time_s = sum(r - a for a, r in zip(issued[half + 1:], returned[half + 1:])) / (
        len(returned) - 1 - half)
    return completions_per_s * bytes_per_request, completions_per_s * mean_time_s


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 96), st.sampled_from([16, 128, 512]), st.floats(1e-7, 1e-6))
def test_model_against_a_queue_simulation(n_requests, bytes_per_request, latency_s):
    """The simulated channel obeys Little's law (mean requests inside = N) and delivers exactly
    ``min(B, N s / t')`` with t' = t + s/B, the model's curve, independently of the model's code."""
    bytes_per_s = 4e12 / 132  # one SM's share of an H200-like device
    delivered, in_system = _closed_loop(n_requests, bytes_per_request, latency_s, bytes_per_s)
    assert in_system == pytest.approx(n_requests, rel=0.02)
    loaded_latency_s = latency_s + bytes_per_request / bytes_per_s
    model = ll.bandwidth_from_bytes_in_flight(n_requests * bytes_per_request, loaded_latency_s,
                                              bytes_per_s)
    assert delivered == pytest.approx(float(model), rel=0.02)


@given(st.lists(st.floats(0, 1e9), min_size=1, max_size=20), st.floats(1e-8, 1e-5), st.floats(1e9, 1e13))
def test_model_is_monotone_and_capped(x, t, peak):
    x = np.sort(np.array(x))
    bw = ll.bandwidth_from_bytes_in_flight(x, t, peak)
    assert (np.diff(bw) >= -1e-6 * peak).all()
    assert (bw <= peak * (1 + 1e-12)).all()
    below = x / t < peak
    np.testing.assert_allclose(bw[below], x[below] / t)


def test_every_gpu_has_a_row():
    rows = ll.requirements_for_all_gpus(500e-9)
    gpus = [n for n in hardware.accelerator_names() if hardware.get_accelerator(n).kind == "gpu"]
    assert [r.accelerator for r in rows] == gpus
    for r in rows:
        assert r.bytes_in_flight == pytest.approx(hardware.get_accelerator(r.accelerator).hbm_bytes_per_s * 500e-9)


def test_sweep_prediction_shape_and_values():
    p = ll.predict_sweep([1, 2, 64], [1, 8], n_sms=132, latency_s=1e-6, peak_bytes_per_s=4e12)
    assert p.bytes_per_s.shape == (2, 3)
    assert p.bytes_in_flight_per_sm[0, 0] == 32 * 16
    assert p.bytes_per_s[0, 0] == pytest.approx(132 * 512 / 1e-6)
    assert p.bytes_per_s[1, 2] == 4e12  # 64 warps x 8 loads: 256 KiB per SM, past the knee


def test_small_transfer():
    s = ll.small_transfer(1e6, 600e-9, 4.8e12)
    assert s.time_s == pytest.approx(600e-9 + 1e6 / 4.8e12)
    assert s.fraction_of_peak == pytest.approx(1e6 / 4.8e12 / s.time_s)
    big = ll.small_transfer(1e10, 600e-9, 4.8e12)
    assert big.fraction_of_peak > 0.99


@pytest.mark.parametrize("call, name", [
    (lambda: ll.required_bytes_in_flight(0, 1e-6), "bytes_per_s"),
    (lambda: ll.required_bytes_in_flight(1e12, -1), "latency_s"),
    (lambda: ll.in_flight_requirement("TPU v4", 1e-6), "accelerator"),
    (lambda: ll.in_flight_requirement("H200", 1e-6, bytes_per_load=0), "bytes_per_load"),
    (lambda: ll.in_flight_requirement("H200", 1e-6, loads_per_thread=1.5), "loads_per_thread"),
    (lambda: ll.bandwidth_from_bytes_in_flight([-1.0], 1e-6, 1e12), "bytes_in_flight"),
    (lambda: ll.bytes_in_flight_per_sm(-1, 1), "warps_per_sm"),
    (lambda: ll.predict_sweep([1], [1], 0, 1e-6, 1e12), "n_sms"),
    (lambda: ll.small_transfer(1e6, float("nan"), 1e12), "latency_s"),
])
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_latency_levels_pick_the_plateaus():
    rows = ([{"level": "global", "working_set_bytes": 2**k, "cycles_per_load": 40.0} for k in range(12, 17)]
            + [{"level": "global", "working_set_bytes": 2**k, "cycles_per_load": 300.0} for k in range(19, 24)]
            + [{"level": "global", "working_set_bytes": 2**k, "cycles_per_load": 700.0 + k} for k in range(28, 31)]
            + [{"level": "shared", "working_set_bytes": 4096, "cycles_per_load": 30.0}])
    lv = lat.latency_levels(rows, l2_bytes=2**25, clock_hz=2e9)
    assert (lv.l1_cycles, lv.l2_cycles, lv.hbm_cycles, lv.shared_cycles) == (40.0, 300.0, 729.0, 30.0)
    assert lv.seconds("hbm") == pytest.approx(729 / 2e9)
    with pytest.raises(ValueError, match="level"):
        lat.latency_levels([r for r in rows if r["level"] == "global"], 2**25, 2e9).seconds("shared")
    with pytest.raises(ValueError, match="working set"):
        lat.latency_levels(rows[:3], 2**25, 2e9)
    with pytest.raises(ValueError, match="clock_hz"):
        lat.latency_levels(rows, 2**25, 0)


def test_recorded_h200_chase():
    from gpuperf import records as recorded

    run = recorded.load_run("pointer_chase_h200")
    assert all(r["correct"] for r in run["results"])
    lv = lat.latency_levels(run["results"], hardware.get_accelerator("H200").l2_bytes,
                           float(run["provenance"]["sm_clock_hz_after_chase"]))
    assert lv.shared_cycles < lv.l1_cycles < lv.l2_cycles < lv.hbm_cycles


def test_first_touch_is_read_where_recorded():
    rows = ([{"level": "global", "working_set_bytes": 2**k, "cycles_per_load": 40.0} for k in range(12, 17)]
            + [{"level": "global", "working_set_bytes": 2**k, "cycles_per_load": 290.0,
                "first_pass_cycles_per_load": 370.0 + k} for k in range(19, 24)]
            + [{"level": "global", "working_set_bytes": 2**k, "cycles_per_load": 700.0} for k in range(28, 31)])
    assert lat.latency_levels(rows, 2**25, 2e9).l2_first_touch_cycles == 391.0
    plain = [{k: v for k, v in r.items() if k != "first_pass_cycles_per_load"} for r in rows]
    assert lat.latency_levels(plain, 2**25, 2e9).l2_first_touch_cycles is None


def test_one_recorded_set_of_latencies():
    """Every chapter reads the same pointer chase (H200, 2026-12-04, the chain written in whole lines before
    each chase): the values chapters 02, 04 and 05 state, and first reads of L2 lines slower than revisits
    but faster than HBM."""
    lv, run = lat.recorded_latency_levels()
    assert run["provenance"]["device"] == "NVIDIA H200" and run["provenance"]["date"] == "2026-12-04"
    assert run["provenance"]["chase_chain_written"].startswith("every word of every line")
    assert round(lv.clock_hz / 1e9, 2) == 1.98
    assert [round(c) for c in (lv.shared_cycles, lv.l1_cycles, lv.l2_cycles, lv.hbm_cycles)] == [
        29, 40, 287, 669]
    assert round(lv.l2_first_touch_cycles) == 330
    assert lv.l2_cycles < lv.l2_first_touch_cycles < lv.hbm_cycles
