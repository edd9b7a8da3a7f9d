"""Tests for gpuperf.plotting.overhead's timeline: lanes, highlighted ranges and the drawn window."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from gpuperf import overhead as oh  # noqa: E402
from gpuperf.plotting.overhead import plot_timeline  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


EVENTS = [oh.TimelineEvent("aten::add", 0.0, 10e-6, 0), oh.TimelineEvent("kernel", 9e-6, 1e-6, 1),
          oh.TimelineEvent("aten::item", 11e-6, 5e-6, 0), oh.TimelineEvent("Memcpy DtoH", 12e-6, 1e-6, 1),
          oh.TimelineEvent("aten::add", 40e-6, 10e-6, 0)]


def test_plot_timeline_lanes_highlight_and_window():
    fig, ax = plt.subplots()
    plot_timeline(ax, EVENTS, ("host", "device"), highlight={"aten::item": "item", "Memcpy": "copy"},
                  window_s=(0.0, 20e-6))
    assert [t.get_text() for t in ax.get_yticklabels()] == ["host", "device"]
    assert len(ax.patches) == 4  # the add at 40 us lies outside the window
    assert ax.get_xlim() == pytest.approx((0, 20))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["item", "copy"]


def test_plot_timeline_without_options_has_no_legend():
    fig, ax = plt.subplots()
    plot_timeline(ax, EVENTS)
    assert len(ax.patches) == 5 and ax.get_legend() is None
    with pytest.raises(ValueError, match="events"):
        plot_timeline(ax, EVENTS, window_s=(1.0, 1e-6))
