"""Figures of chapters 04 and 05 draw what they are given (units on the axes, one artist per series)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np
from matplotlib.figure import Figure

from gpuperf.memory import bank_access, column_read, hierarchy_levels
from gpuperf.plotting import memory as pm
from gpuperf.plotting import systolic as ps
from gpuperf.systolic import wavefront


def _ax():
    return Figure().add_subplot()


def test_hierarchy_and_latency():
    cap, bw = pm.plot_hierarchy(_ax(), _ax(), {d: hierarchy_levels(d) for d in ("A100 80GB SXM", "H200 SXM")})
    assert cap.get_xscale() == "log" and "bytes" in cap.get_xlabel() and "bytes/s" in bw.get_xlabel()
    assert len(cap.patches) == len(bw.patches) == 2 * 5
    assert any(t.get_text() == "n/a" for t in bw.texts)  # registers and L2 publish no bandwidth
    ax = pm.plot_latency(_ax(), {"shared": 30, "L2": 260}, clock_hz=1.98e9)
    assert len(ax.patches) == 2 and "cycles" in ax.get_xlabel()


def test_coalescing_figures():
    ax = pm.plot_sectors_vs_stride(_ax(), [1, 2, 4], [4, 8, 16], [4, 8, 16])
    assert len(ax.lines) == 2 and "sectors" in ax.get_ylabel()
    ax = pm.plot_bandwidth_vs_stride(_ax(), [1, 2, 4, 8, 16], [4e12, 2e12, 1e12, 5e11, 5e11],
                                     [4e12, 2e12, 1e12, 5e11, 5e11], copy_bytes_per_s=4e12)
    assert len(ax.lines) == 3 and "GB/s" in ax.get_ylabel()


def test_bank_figures():
    access = column_read(64, 8)
    ax = pm.plot_bank_access(_ax(), access)
    heights = [p.get_height() for p in ax.patches]
    assert max(heights) == access.conflict_degree == 4
    wide = bank_access([16 * l for l in range(32)], 16)
    assert len(pm.plot_bank_access(_ax(), wide).patches) == 4 * 32
    ax = pm.plot_bank_cases(_ax(), ["a", "b"], [1, 4], [1, 4])
    assert len(ax.patches) == 2 and len(ax.lines) == 1


def test_occupancy_and_systolic_figures():
    ax = pm.plot_occupancy_curve(_ax(), [32, 64], [1.0, 0.5], "256 threads", xlabel="registers per thread")
    assert ax.get_ylim()[1] > 1
    ax = ps.plot_wavefront(_ax(), wavefront(6, 4, 4, 3), 6, title="t")
    assert len(ax.texts) == int((wavefront(6, 4, 4, 3) >= 0).sum())
    ax = ps.plot_utilization(_ax(), [1, 2, 4], [0.1, 0.2, 0.4], "8x8")
    assert np.allclose(ax.lines[0].get_ydata(), [0.1, 0.2, 0.4])


def test_busy_cells_figure():
    from gpuperf.systolic import simulate

    run = simulate(np.ones((6, 4), int), np.ones((4, 4), int), 4, 4, record_frames=True)
    ax = ps.plot_busy_cells(_ax(), run.frames, 16)
    heights = [p.get_height() for p in ax.patches]
    assert len(heights) == run.cycles and sum(heights[4:]) == run.busy_pe_cycles


def test_live_strides_overlay_draws_both_runs():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gpuperf.plotting import memory as pm

    live = {"device": {"device": "Tesla T4"}, "copy": {"bytes_per_s": 2.4e11},
            "results": [{"stride": s, "useful_bytes_per_s": 2.0e11 / s} for s in (1, 2, 4, 8)]}
    fig, ax = plt.subplots()
    pm.plot_live_strides(ax, [1, 2, 4, 8, 16], [1e12, 9e11, 5e11, 2.5e11, 1.3e11], 4.2e12, live)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("T4" in t for t in labels) and any("H200" in t for t in labels)
    assert len(ax.lines) == 3
    plt.close(fig)
