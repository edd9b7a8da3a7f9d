"""Tests of the tile-size explorer: the view on every state, the numbers against the model, both worlds."""

from __future__ import annotations

import pytest

from gpuperf import tiling
from gpuperf.explorers import core
from gpuperf.explorers import tiling as te


def test_view_on_every_state_matches_the_model():
    controls = [core.slider("tile_m", te.TILE_SIDES, default=128), core.slider("tile_n", te.TILE_SIDES, default=128),
                core.slider("tile_k", te.TILE_KS, default=64), core.dropdown("shape", te.SHAPES),
                core.dropdown("device", te.DEVICES)]
    assert core.state_count(controls) == 3 * 3 * 3 * 3 * 2
    for params in list(core.states(controls))[::7]:
        view = te.tile_view(**params)
        m, n, k = params["shape"]
        choice = tiling.tile_choice(params["device"], m, n, k, params["tile_m"], params["tile_n"],
                                    params["tile_k"], "bf16", stages=te.STAGES)
        assert f"{choice.quantization.waves} wave(s)" in view.html
        assert f"{choice.quantization.useful_fraction:.1%}" in view.html
        assert view.figure is not None


def test_nvidia_example_in_the_view():
    one = te.tile_view(256, 128, 64, (2304, 1536, 4096), "A100 80GB SXM").html
    two = te.tile_view(256, 128, 64, (2304, 1544, 4096), "A100 80GB SXM").html
    assert "108 tiles" in one and "<b>1 wave(s)</b>" in one
    assert "117 tiles" in two and "<b>2 wave(s)</b>" in two


@pytest.mark.redundant_on_gpu  # pure CPU (matplotlib, ipywidgets): make test covers it; make test-gpu skips it
def test_static_and_live(every_control_changes_the_text):
    static = te.tile_explorer(mode="static")
    assert isinstance(static, core.StaticExplorer)
    assert static.n_states == 162
    # every tile size of a shape and device is a figure of its own on the site (tile_view draws the tiles'
    # outlines: test_the_drawing_changes_with_the_tile_size_even_in_one_wave)
    assert static.n_figures >= len(te.TILE_SIDES) ** 2
    live = te.tile_explorer(mode="live")
    every_control_changes_the_text(live, ("tile_m", "tile_n", "tile_k", "shape", "device"))
    # the live figure changes with the tile, and changes back
    before = live.image.value
    widget = live.controls["tile_m"]
    old = widget.value
    widget.value = (old + 1) % len(widget.options)
    assert live.image.value != before
    widget.value = old
    assert live.image.value == before


def _png(view):
    return core.figure_png(view.figure)


def test_the_drawing_changes_with_the_tile_size_even_in_one_wave():
    # 2304 x 1536 on the H200 runs in one wave with 128 x 128 and with 256 x 256 tiles: the drawing must
    # still differ, through the tiles' outlines (issue 30: it used to change only the title and numbers).
    shape = (2304, 1536, 4096)
    views = {t: te.tile_view(t, t, 64, shape, "H200 SXM") for t in te.TILE_SIDES}
    pngs = {t: _png(v) for t, v in views.items()}
    assert len(set(pngs.values())) == len(te.TILE_SIDES)
    # 128 x 256 against 256 x 128: same count of tiles, same waves, a different drawing
    a = _png(te.tile_view(128, 256, 64, shape, "H200 SXM"))
    b = _png(te.tile_view(256, 128, 64, shape, "H200 SXM"))
    assert a != b
    ax = views[128].figure.axes[0]
    tiles_m, tiles_n = 2304 // 128, 1536 // 128
    segments = sum(len(c.get_segments()) for c in ax.collections)
    assert segments == (tiles_m + 1) + (tiles_n + 1)
    # the outlines themselves (not only the title) differ between tile sizes
    counts = {t: sum(len(c.get_segments()) for c in v.figure.axes[0].collections) for t, v in views.items()}
    assert counts == {64: (36 + 1) + (24 + 1), 128: (18 + 1) + (12 + 1), 256: (9 + 1) + (6 + 1)}
