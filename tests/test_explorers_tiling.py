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
    live = te.tile_explorer(mode="live")
    every_control_changes_the_text(live, ("tile_m", "tile_n", "tile_k", "shape", "device"))
