"""gpuperf.plotting.formats: the figures build headless, with the right scales, labels and data."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from gpuperf import accumulation as acc  # noqa: E402
from gpuperf import formats  # noqa: E402
from gpuperf.plotting import formats as P  # noqa: E402
from gpuperf.plotting.style import new_figure  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def by_gid(ax, gid):
    return [a for a in [*ax.get_lines(), *ax.patches, *ax.collections] if a.get_gid() == gid]


# ---- spacing ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["fp32", "bf16", "fp16", "fp8_e4m3fn", "fp8_e5m2", "fp6_e2m3", "fp4_e2m1", "e8m0"])
def test_spacing_curve_matches_formats_spacing(fmt):
    f = formats.get_format(fmt)
    x, y = P.spacing_curve(fmt)
    assert x[-1] == f.max_value and np.all(np.diff(x) > 0)
    # Between consecutive breakpoints (a staircase, steps-post) the spacing is the library's.
    mid = np.sqrt(x[:-1] * x[1:])
    np.testing.assert_array_equal(y[:-1], formats.spacing(mid, f))
    if f.has_subnormals:
        assert x[0] == f.min_subnormal and y[0] == f.min_subnormal


def test_spacing_curve_against_a_brute_force_grid():
    # fp8 E4M3: the gaps between its sorted positive values are exactly the staircase.
    values = formats.representable_values("fp8_e4m3fn")
    positive = values[values > 0]
    gaps = np.diff(positive)
    x, y = P.spacing_curve("fp8_e4m3fn")
    level = y[np.searchsorted(x, positive[:-1], side="right") - 1]
    np.testing.assert_array_equal(gaps, level)


def test_relative_spacing_is_between_half_and_one_machine_epsilon_in_the_normal_range():
    f = formats.get_format("bf16")
    x, y = P.spacing_curve("bf16", relative=True)
    normal = x >= f.min_normal
    assert np.all(y[normal] <= f.machine_epsilon) and np.all(y[normal] >= f.machine_epsilon / 2 * (1 - 1e-12))
    assert y[0] == 1.0  # the smallest subnormal is its own spacing


def test_plot_spacing_axes_and_clipping():
    fig, ax = new_figure()
    out = P.plot_spacing(ax, ("bf16", "fp16"), x_range=(1e-3, 1e5))
    assert out is ax and ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlim() == pytest.approx((1e-3, 1e5))
    assert "ulp" in ax.get_ylabel() and "|x|" in ax.get_xlabel()
    (bf16,) = by_gid(ax, "spacing-bf16")
    x, y = bf16.get_data()
    assert x[0] == 1e-3 and x[-1] == 1e5
    # bf16 near 100 has spacing 0.5 and near 10000 spacing 64 (lecture 002, section 7.3)
    assert y[np.searchsorted(x, 100.0, side="right") - 1] == 0.5
    assert y[np.searchsorted(x, 10000.0, side="right") - 1] == 64.0
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["bf16", "fp16"]


def test_plot_spacing_relative_clipped_sawtooth_is_continuous():
    fig, ax = new_figure()
    P.plot_spacing(ax, ("fp16",), relative=True, x_range=(3.0, 1000.0))
    (line,) = by_gid(ax, "spacing-fp16")
    x, y = line.get_data()
    assert x[0] == 3.0 and y[0] == pytest.approx(2.0 ** -9 / 3.0)  # spacing 2^(1-10) in [2, 4)
    assert x[-1] == 1000.0 and y[-1] == pytest.approx(0.5 / 1000.0)  # spacing 2^(9-10) in [512, 1024)


# ---- layouts and grids ------------------------------------------------------------------------------

def test_bit_layouts_draw_one_box_per_bit():
    fig, ax = new_figure()
    P.plot_bit_layouts(ax, ("bf16", "fp8_e4m3fn", "e8m0"))
    assert len(by_gid(ax, "bit-bf16-sign")) == 1
    assert len(by_gid(ax, "bit-bf16-exponent")) == 8 and len(by_gid(ax, "bit-bf16-mantissa")) == 7
    assert len(by_gid(ax, "bit-fp8_e4m3fn-mantissa")) == 3
    assert not by_gid(ax, "bit-e8m0-sign") and len(by_gid(ax, "bit-e8m0-exponent")) == 8
    assert [t.get_text() for t in ax.get_yticklabels()] == ["e8m0", "fp8_e4m3fn", "bf16"]
    assert "bits" in ax.get_xlabel()


def test_value_grid():
    fig, ax = new_figure()
    fp4 = formats.representable_values("fp4_e2m1")
    P.plot_value_grid(ax, {"fp4": fp4, "int4": np.arange(-7, 8) * 6 / 7})
    (coll,) = by_gid(ax, "grid-fp4")
    assert len(coll.get_segments()) == fp4.size == 15


# ---- accumulation ------------------------------------------------------------------------------------

def test_swamping_plot_shows_each_run_and_its_stall():
    runs = [acc.swamping(0.01, 3000, f) for f in ("fp32", "fp16", "bf16")]
    fig, ax = new_figure()
    P.plot_swamping(ax, runs)
    assert ax.get_yscale() == "log" and ax.get_xlabel() == "additions"
    (fp16,) = by_gid(ax, "swamping-fp16")
    np.testing.assert_array_equal(fp16.get_ydata(), runs[1].partial_sums[1:])
    (stall,) = by_gid(ax, "stall-bf16")
    assert stall.get_ydata()[0] == 4.0
    assert not by_gid(ax, "stall-fp32")  # 2**18 is far above the curve
    (exact,) = by_gid(ax, "exact")
    assert exact.get_ydata()[-1] == pytest.approx(30.0)


def test_dot_error_plot():
    sweep = acc.dot_error_sweep(lengths=(16, 256, 1024), n_trials=2,
                                configs=(("fp32", "sequential"), ("bf16", "pairwise")))
    fig, ax = new_figure()
    P.plot_dot_error(ax, sweep)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    (line,) = by_gid(ax, "dot-bf16-pairwise")
    np.testing.assert_array_equal(line.get_xdata(), [16, 256, 1024])
    expected = sweep.relative_error[("bf16", "pairwise")]
    np.testing.assert_array_equal(line.get_ydata(), np.where(expected > 0, expected, np.nan))


def test_quantization_error_bars():
    errors = {"uniform": {"int8": 0.01, "fp8": 0.03}, "outliers": {"int8": 0.5, "fp8": 0.04}}
    fig, ax = new_figure()
    P.plot_quantization_errors(ax, errors)
    assert ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0
    dots = by_gid(ax, "dots-int8")
    assert len(dots) == 1 and list(dots[0].get_ydata()) == [1.0, 50.0]  # percent
    assert [t.get_text() for t in ax.get_xticklabels()] == ["uniform", "outliers"]


# ---- bad input ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, argument", [
    (lambda ax: P.plot_spacing(ax, ("fp12",)), "fmts"),
    (lambda ax: P.plot_spacing(ax, "bf16"), "fmts"),
    (lambda ax: P.plot_spacing(ax, ("bf16",), x_range=(1.0, 0.5)), "x_range"),
    (lambda ax: P.plot_bit_layouts(ax, ()), "fmts"),
    (lambda ax: P.plot_value_grid(ax, {}), "grids"),
    (lambda ax: P.plot_value_grid(ax, {"a": [math.inf]}), "grids"),
    (lambda ax: P.plot_swamping(ax, []), "runs"),
    (lambda ax: P.plot_swamping(ax, [acc.swamping(0.01, 10, "fp16"), acc.swamping(0.1, 10, "fp16")]), "runs"),
    (lambda ax: P.plot_dot_error(ax, None), "sweep"),
    (lambda ax: P.plot_quantization_errors(ax, {"a": {"x": 0.0}}), "errors"),
    (lambda ax: P.plot_quantization_errors(ax, {"a": {"x": 1.0}, "b": {"y": 1.0}}), "errors"),
])
def test_bad_input_raises_value_error_naming_the_argument(call, argument):
    fig, ax = new_figure()
    with pytest.raises(ValueError, match=argument):
        call(ax)
