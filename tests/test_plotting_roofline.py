"""Tests for gpuperf.plotting.roofline: the figures build headless, with log axes and the right artists."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from gpuperf import hardware, roofline  # noqa: E402
from gpuperf.hardware import Accelerator  # noqa: E402
from gpuperf.plotting import roofline as plot  # noqa: E402
from gpuperf.plotting.style import new_figure  # noqa: E402


def make_acc(name="Test GPU", kind="gpu", matrix=None, vector=None, hbm=4e12, smem_per_clock=128.0,
             l2_bytes_per_s=12e12):
    """A made-up device (round figures, not a real part)."""
    return Accelerator(
        name=name, vendor="test", kind=kind,
        matrix_flop_per_s=matrix if matrix is not None else {"bf16": 800e12, "fp8": 1600e12},
        vector_flop_per_s=vector if vector is not None else {"fp32": 100e12, "bf16": 200e12},
        hbm_bytes_per_s=hbm, hbm_capacity_bytes=80e9, sm_count=100, registers_per_sm_bytes=None,
        shared_memory_per_sm_bytes=None, shared_memory_bytes_per_clock_per_sm=smem_per_clock,
        l2_bytes=None, boost_clock_hz=2e9, sources={}, l2_bytes_per_s=l2_bytes_per_s,
    )


GPU = make_acc()


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def lines(ax, gid):
    return [line for line in ax.get_lines() if line.get_gid() == gid]


def test_plain_roofline():
    fig, ax = new_figure()
    points = [("relu", 0.25, 1e12), ("matmul", 1365.0, 800e12)]
    out = plot.plot_roofline(ax, GPU, points=points)
    assert out is ax
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "Arithmetic intensity (FLOP/byte)" and ax.get_ylabel() == "Attainable (FLOP/s)"
    (roof,) = lines(ax, "roof")
    (ridge,) = lines(ax, "ridge")
    assert len(lines(ax, "point")) == 2
    assert not lines(ax, "memory-roof") and not lines(ax, "compute-roof")
    # the drawn roof is the model, with its corner exactly at the ridge (200 FLOP/byte)
    x, y = roof.get_data()
    np.testing.assert_allclose(x, [1e-2, 200.0, 1e4])
    np.testing.assert_allclose(y, roofline.attainable_flop_per_s(np.asarray(x), 800e12, 4e12))
    assert ridge.get_xdata()[0] == pytest.approx(200.0)
    assert [t.get_text() for t in ax.texts] == ["relu", "matmul"]
    assert ax.get_xlim() == pytest.approx((1e-2, 1e4))
    fig.canvas.draw()  # renders without error on Agg


def test_roofline_of_another_unit_and_label():
    fig, ax = new_figure()
    plot.plot_roofline(ax, GPU, "bf16", "vector", intensity_range=(0.1, 1000), label="my roof")
    (roof,) = lines(ax, "roof")
    assert roof.get_label() == "my roof"
    assert max(roof.get_ydata()) == 200e12
    assert lines(ax, "ridge")[0].get_xdata()[0] == pytest.approx(50.0)


def test_ridge_outside_the_range_is_not_drawn():
    fig, ax = new_figure()
    plot.plot_roofline(ax, GPU, intensity_range=(1000, 1e5))
    assert not lines(ax, "ridge") and len(lines(ax, "roof")) == 1


def test_hierarchical_roofline_draws_every_roof():
    fig, ax = new_figure()
    plot.plot_roofline(ax, GPU, "bf16", hierarchical=True, points=[("op", 3.0, 1e13)])
    assert len(lines(ax, "compute-roof")) == 2  # matrix and vector bf16
    assert len(lines(ax, "memory-roof")) == 3  # HBM, L2, shared memory
    assert len(lines(ax, "point")) == 1 and len(lines(ax, "ridge")) == 1
    heights = sorted(line.get_ydata()[0] for line in lines(ax, "compute-roof"))
    assert heights == [200e12, 800e12]
    # every memory roof stops at the highest compute roof
    for line in lines(ax, "memory-roof"):
        assert line.get_ydata()[-1] == pytest.approx(800e12)
    fig.canvas.draw()


def test_hierarchical_counts_follow_the_device():
    bare = make_acc(matrix={"bf16": 100e12}, vector={}, smem_per_clock=None, l2_bytes_per_s=None)
    fig, ax = new_figure()
    plot.plot_roofline(ax, bare, hierarchical=True)
    assert len(lines(ax, "compute-roof")) == 1 and len(lines(ax, "memory-roof")) == 1


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(dtype="fp4"), "fp4"),
        (dict(unit="tensor"), "unit"),
        (dict(intensity_range=(10, 1)), "intensity_range"),
        (dict(intensity_range=(0, 1)), "intensity_range"),
        (dict(intensity_range=5), "intensity_range"),
        (dict(points=[("bad", -1.0, 1e12)]), "points"),
        (dict(points=[("short", 1.0)]), "points"),
    ],
)
def test_plot_roofline_rejects_bad_arguments(kwargs, name):
    fig, ax = new_figure()
    with pytest.raises(ValueError, match=name):
        plot.plot_roofline(ax, GPU, **kwargs)


def test_point_for_an_analysis():
    analysis = roofline.analyze(roofline.relu(10**6), GPU)
    name, intensity, rate = plot.point_for(analysis)
    assert name == analysis.op.name and intensity == 0.25 and rate == pytest.approx(1e12)
    assert plot.point_for(analysis, "ReLU")[0] == "ReLU"


def test_ridge_points_bars():
    devices = [
        GPU,
        make_acc("Slow memory", hbm=1e12),
        make_acc("No bf16", matrix={"fp8": 1e15}, vector={"fp32": 1e13}),
    ]
    fig, ax = new_figure()
    out = plot.plot_ridge_points(ax, devices, "bf16")
    assert out is ax and ax.get_xlim()[0] == 0
    assert len(ax.patches) == 2  # the device without bf16 is left out
    assert sorted(p.get_width() for p in ax.patches) == pytest.approx([200.0, 800.0])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Test GPU", "Slow memory"]
    assert "FLOP/byte" in ax.get_xlabel()
    fig.canvas.draw()


def test_ridge_points_rejects_bad_arguments():
    fig, ax = new_figure()
    with pytest.raises(ValueError, match="dtype"):
        plot.plot_ridge_points(ax, [GPU], "fp64")
    with pytest.raises(ValueError, match="dtype"):
        plot.plot_ridge_points(ax, [GPU], "half")
    with pytest.raises(ValueError, match="unit"):
        plot.plot_ridge_points(ax, [GPU], unit="simd")


@pytest.mark.skipif(not hasattr(hardware, "ACCELERATORS"), reason="no device table yet")
def test_figures_for_the_real_table():
    fig, (left, right) = new_figure(ncols=2)
    plot.plot_roofline(left, "H200", hierarchical=True)
    plot.plot_ridge_points(right, hardware.ACCELERATORS, "bf16")
    bf16 = [a for a in hardware.ACCELERATORS if "bf16" in a.matrix_flop_per_s]
    assert len(right.patches) == len(bf16)
    fig.canvas.draw()


# --- plot_points: many nearby points, named in a legend ---------------------------------------------------

def test_plot_points_gives_each_point_its_own_marker_and_a_legend_beside_the_axes():
    fig, ax = new_figure()
    plot.plot_roofline(ax, GPU, intensity_range=(1e-2, 1e2))
    # Twelve awkwardly spaced points, several within a factor 1.01 of each other (the case labels in place fail).
    points = [(f"p{i}", 0.3 * 1.01**i, 1.2e12 * 1.01**i) for i in range(12)]
    out = plot.plot_points(ax, points)
    assert out is ax
    marked = lines(ax, "marked-point")
    assert len(marked) == 12
    assert len({line.get_marker() for line in marked}) == 12  # every shape distinct
    assert [line.get_label() for line in marked] == [name for name, _, _ in points]
    for line, (_, intensity, rate) in zip(marked, points):
        assert line.get_xdata()[0] == intensity and line.get_ydata()[0] == rate
    # no colour of a point is the roof's
    assert all(line.get_color() != lines(ax, "roof")[0].get_color() for line in marked)
    legend = ax.get_legend()
    texts = [t.get_text() for t in legend.get_texts()]
    # the roof, then the points (the ridge, at 200 FLOP/byte, lies outside this intensity range)
    assert texts == ["Test GPU, bf16 matrix unit"] + [name for name, _, _ in points]
    fig.canvas.draw()
    # Beside the axes: the legend's box starts right of the axes' box.
    renderer = fig.canvas.get_renderer()
    assert legend.get_window_extent(renderer).x0 > ax.get_window_extent(renderer).x1
    # the scales and x limits of the roofline are kept
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlim() == pytest.approx((1e-2, 1e2))


def test_plot_points_legend_inside_on_request():
    fig, ax = new_figure()
    plot.plot_roofline(ax, GPU)
    plot.plot_points(ax, [("a", 1.0, 1e12), ("b", 2.0, 3e12)], legend_outside=False)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend_box, axes_box = ax.get_legend().get_window_extent(renderer), ax.get_window_extent(renderer)
    assert axes_box.x0 <= legend_box.x0 and legend_box.x1 <= axes_box.x1


def test_plot_points_markers_cycle_after_the_last_shape():
    fig, ax = new_figure()
    plot.plot_roofline(ax, GPU)
    n = len(plot.POINT_MARKERS) + 1
    plot.plot_points(ax, [(f"p{i}", 1.0 + i, 1e12) for i in range(n)])
    marked = lines(ax, "marked-point")
    assert marked[-1].get_marker() == marked[0].get_marker() == plot.POINT_MARKERS[0]


def test_plot_points_widens_the_y_limits_to_show_a_point_below_the_roof():
    fig, ax = new_figure()
    plot.plot_roofline(ax, GPU, intensity_range=(1.0, 1e3))
    y_lo, y_hi = ax.get_ylim()
    low = y_lo / 100  # a slow kernel far below the lowest part of the roof
    plot.plot_points(ax, [("slow", 2.0, low)])
    assert ax.get_ylim()[0] <= low and ax.get_ylim()[1] == pytest.approx(y_hi)
    plot.plot_points(ax, [("fast", 2.0, y_hi * 10)])
    assert ax.get_ylim()[1] >= y_hi * 10


@pytest.mark.parametrize(
    "points, kwargs, name",
    [
        ([], {}, "points"),
        (5, {}, "points"),
        ("abc", {}, "points"),
        ([("zero", 0.0, 1e12)], {}, "points"),
        ([("nan", 1.0, float("nan"))], {}, "points"),
        ([("two", 1.0)], {}, "points"),
        ([("ok", 1.0, 1e12)], {"legend_outside": "yes"}, "legend_outside"),
    ],
)
def test_plot_points_rejects_bad_arguments(points, kwargs, name):
    fig, ax = new_figure()
    plot.plot_roofline(ax, GPU)
    with pytest.raises(ValueError, match=name):
        plot.plot_points(ax, points, **kwargs)


def test_labelled_points_never_take_the_roof_colour_or_yellow():
    fig, ax = new_figure()
    points = [(f"p{i}", 0.1 * 2**i, 1e11 * 2**i) for i in range(9)]  # more points than the palette has colours
    plot.plot_roofline(ax, GPU, points=points)
    roof_colour = lines(ax, "roof")[0].get_color()
    colours = [line.get_color() for line in lines(ax, "point")]
    assert len(colours) == 9
    assert roof_colour not in colours and "#F0E442" not in colours
    assert len(set(colours[:6])) == 6  # the first six are all different


# ---- second edition: fraction-of-peak bars and measured series --------------------------------------------
def test_fraction_of_peak_bars_and_measured_series():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gpuperf import roofline as rl
    from gpuperf.plotting.roofline import plot_fraction_of_peak, plot_measured_series, plot_roofline

    h200 = "H200 SXM"
    analyses = {"matmul": rl.analyze(rl.matmul(4096, 4096, 4096), h200), "relu": rl.analyze(rl.relu(2**20), h200)}
    fig, ax = plt.subplots()
    plot_fraction_of_peak(ax, analyses)
    bars = [p for p in ax.patches if p.get_gid() == "fraction-bar"]
    assert [round(b.get_width(), 6) for b in bars] == [100.0, round(100 * analyses["relu"].fraction_of_peak, 6)]
    assert bars[0].get_facecolor() != bars[1].get_facecolor()
    with pytest.raises(ValueError, match="analyses"):
        plot_fraction_of_peak(ax, {})
    fig2, ax2 = plt.subplots()
    plot_roofline(ax2, h200)
    plot_measured_series(ax2, {"sweep": ([1.0, 10.0], [1e12, 1e13]), "one": ([100.0], [1e5])})
    lines = [l for l in ax2.get_lines() if l.get_gid() == "measured-series"]
    assert len(lines) == 2 and lines[0].get_linestyle() == "-" and lines[1].get_linestyle() == "None"
    assert ax2.get_ylim()[0] <= 1e5 / 2
    with pytest.raises(ValueError, match="series"):
        plot_measured_series(ax2, {"bad": ([1.0], [-1.0])})
    plt.close("all")


def test_ridge_point_groups():
    import matplotlib.pyplot as plt

    from gpuperf import roofline as rl
    from gpuperf.plotting.roofline import plot_ridge_point_groups

    rows = rl.ridge_rows(["V100 SXM2", "H100 SXM", "B200"])
    fig, ax = plt.subplots()
    plot_ridge_point_groups(ax, rows)
    bars = [p for p in ax.patches if p.get_gid() == "ridge-bar"]
    # fp16 for all three, fp8 for H100 and B200, fp4 for B200 only
    assert len(bars) == 3 + 2 + 1
    assert max(b.get_width() for b in bars) == pytest.approx(rows[2]["ridge_fp4"])
    with pytest.raises(ValueError, match="dtypes"):
        plot_ridge_point_groups(ax, rows, dtypes=("fp12",))
    plt.close(fig)
