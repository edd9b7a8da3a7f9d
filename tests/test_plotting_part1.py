"""Figures of chapters 01-03 draw what they are given (smoke tests on the Agg backend)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from gpuperf import littles_law, scaling, simt  # noqa: E402
from gpuperf import records as recorded  # noqa: E402
from gpuperf.plotting import littles_law as pl  # noqa: E402
from gpuperf.plotting import scaling as ps  # noqa: E402
from gpuperf.plotting import simt as pt  # noqa: E402


@pytest.fixture
def ax():
    fig, ax = plt.subplots()
    yield ax
    plt.close("all")


def fresh():
    return plt.subplots()[1]


def test_scaling_figures(ax):
    ps.plot_scaling_rules(ax, [scaling.scaling_series(r, 4) for r in scaling.RULES])
    assert len(ax.lines) == 3
    data = scaling.load_trend_data()
    trend_ax = fresh()
    ps.plot_trends(trend_ax, data)
    ps.plot_fit(trend_ax, scaling.fit_exponential(data["transistors"], 1970, 2022))
    gain_ax = fresh()
    ps.plot_gain_factors(gain_ax, scaling.DALLY_HOTCHIPS_2023)
    assert len(gain_ax.patches) == 4


def test_littles_law_figures(ax):
    chase = recorded.load_run("pointer_chase_h200")["results"]
    pl.plot_latency_ladder(ax, chase, clock_hz=2e9, cache_bytes={"L2": 60 * 2**20})
    assert len(ax.lines) >= 2
    sweep = recorded.load_run("bytes_in_flight_h200")["results"]
    pl.plot_bandwidth_vs_in_flight(fresh(), sweep, latency_s=3.4e-7, peak_bytes_per_s=4.2e12, n_sms=132,
                                   reference_bytes_per_s=4.2e12)
    pl.plot_requirements(fresh(), littles_law.requirements_for_all_gpus(3.4e-7))
    sizes = np.geomspace(1e3, 1e9, 5)
    pl.plot_small_transfers(fresh(), sizes, [0.1] * 5, "x")


def test_timeline_image_marks_active_lanes():
    cond = simt.branch_condition("alternating", 64)
    run = simt.simulate(simt.two_way_program(3, 5, 2), 64, {"c": cond}, timeline_warps=2)
    image, labels = pt.timeline_image(run.timeline, 32)
    assert labels == ["common", "then", "else"]
    assert image.shape == (2 * 33, 10)
    assert (image[0:32, 0:2] == 1).all()  # common: every lane
    assert (image[0:32:2, 2:5] == 2).all() and (image[1:32:2, 2:5] == 0).all()  # then: even lanes
    assert (image[32, :] == 0).all()  # the gap row between warps


def test_simt_figures(ax):
    cond = simt.branch_condition("random", 128, 0.3)
    run = simt.simulate(simt.two_way_program(3, 3, 1), 128, {"c": cond}, timeline_warps=4)
    pt.plot_warp_timeline(ax, run.timeline, 32, title="t")
    pt.plot_efficiency_vs_probability(fresh(), [0, 0.5, 1], {32: [1, 0.5, 1]}, {32: [1, 0.5, 1]})
    pt.plot_loop_imbalance(fresh(), simt.long_tailed_trip_counts(320), 32)
    pt.plot_prediction_vs_measurement(fresh(), ["a", "b"], [32, 16], [32, 16.4], "threads")


def test_gpu_anatomy_draws_every_sm(ax):
    pl.plot_gpu_anatomy(ax, 132, 64, 4, "L2", "HBM")
    # 132 SMs + 64 warp slots + 32 threads + the boxes around them
    assert len(ax.patches) >= 132 + 64 + 32
    assert any("132 SMs" in t.get_text() for t in ax.texts)


def test_live_in_flight_overlay_draws_recorded_and_live():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gpuperf.plotting.littles_law import plot_live_in_flight

    recorded = [{"warps_per_sm": w, "loads_in_flight_per_thread": k, "bytes_in_flight_per_sm": w * 512 * k,
                 "bytes_per_s": min(4e12, w * k * 3e11)} for w in (1, 4, 16) for k in (1, 2, 8)]
    live = {"device": {"device": "Tesla T4"},
            "results": [{"loads_in_flight_per_thread": 1, "bytes_in_flight_per_sm": b, "fraction_of_copy": f}
                        for b, f in ((2048, 0.4), (4096, 0.8))]}
    fig, ax = plt.subplots()
    plot_live_in_flight(ax, recorded, 4.2e12, live)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sum("recorded" in t for t in labels) == 2  # 8 loads per thread left out
    assert any("T4" in t for t in labels)
    plt.close(fig)
