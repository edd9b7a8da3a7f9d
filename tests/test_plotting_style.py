"""Tests for gpuperf.plotting.style: the palette, the rc settings and new_figure's sizes and checks."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402

from gpuperf.plotting import style  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_palette_is_okabe_ito():
    # Okabe and Ito (2008): eight colours, as RGB 0-255.
    okabe_ito = {(0, 0, 0), (230, 159, 0), (86, 180, 233), (0, 158, 115), (240, 228, 66), (0, 114, 178),
                 (213, 94, 0), (204, 121, 167)}
    assert {tuple(round(c * 255) for c in to_rgb(hex_)) for hex_ in style.PALETTE} == okabe_ito
    assert len(style.PALETTE) == 8


def test_use_book_style_sets_an_opaque_white_figure():
    style.use_book_style()
    assert matplotlib.rcParams["figure.facecolor"] == "white" and not matplotlib.rcParams["savefig.transparent"]
    assert [c["color"] for c in matplotlib.rcParams["axes.prop_cycle"]] == list(style.PALETTE)


@pytest.mark.parametrize(
    "kwargs, size",
    [({}, (5.0, 4.0)), ({"ncols": 3}, (11.0, 4.0)), ({"ncols": 2, "nrows": 2}, (9.6, 7.6)),
     ({"width": 6.5, "height": 2.5}, (6.5, 2.5))],
)
def test_new_figure_sizes(kwargs, size):
    fig, axes = style.new_figure(**kwargs)
    assert tuple(fig.get_size_inches()) == pytest.approx(size)
    n = kwargs.get("ncols", 1) * kwargs.get("nrows", 1)
    assert (axes.size if n > 1 else 1) == n


@pytest.mark.parametrize(
    "kwargs, name",
    [({"ncols": 0}, "ncols"), ({"nrows": -1}, "nrows"), ({"ncols": 1.5}, "ncols"), ({"nrows": "2"}, "nrows"),
     ({"ncols": True}, "ncols"), ({"width": 0}, "width"), ({"height": float("nan")}, "height"),
     ({"width": "7"}, "width")],
)
def test_new_figure_rejects_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name) as err:
        style.new_figure(**kwargs)
    assert repr(next(iter(kwargs.values()))) in str(err.value)
