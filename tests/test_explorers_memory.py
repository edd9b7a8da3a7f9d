"""Chapter 04/05 explorers: every state renders, live and static modes build, the models behind them agree."""

from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")

from gpuperf.explorers import core
from gpuperf.explorers import memory as em
from gpuperf.explorers import systolic as es
from gpuperf.memory import sm_occupancy


def _controls(factory_name):
    controls = {
        "occupancy": [core.dropdown("device", em.OCCUPANCY_DEVICES),
                      core.slider("threads_per_block", [128, 256, 512, 1024]),
                      core.slider("registers_per_thread", [32, 64, 96, 128, 255]),
                      core.slider("shared_memory_kib", [0, 16, 48, 100, 200])],
        "banks": [core.dropdown("pattern", list(em.BANK_PATTERNS.items())),
                  core.slider("pad", em.BANK_PADS), core.dropdown("element", ["fp16", "fp32"])],
    }
    return controls[factory_name]


def test_occupancy_view_on_every_state_names_the_binding_limit():
    for params in core.states(_controls("occupancy")):
        view = em.occupancy_view(**params)
        try:
            r = sm_occupancy(params["device"], params["threads_per_block"], params["registers_per_thread"],
                             params["shared_memory_kib"] * 1024)
        except ValueError:
            assert "Cannot launch" in view.html
            continue
        assert f"<b>{r.blocks_per_sm}</b> block(s)" in view.html and "binds" in view.html


def test_bank_view_on_every_state():
    for params in core.states(_controls("banks")):
        view = em.bank_view(**params)
        if view.figure is None:
            assert "Not a valid layout" in view.html
        else:
            assert "wavefront" in view.figure.axes[0].get_title()


def test_bank_explorer_padding_starts_unpadded_with_a_short_label():
    """Issue 30: the slider starts where the lesson starts (no padding, 32-way) and its label is short
    enough to leave the slider its width."""
    pad = next(c for c in _bank_controls() if c.name == "pad")
    assert pad.values[pad.default] == 0 and pad.values == em.BANK_PADS
    assert len(pad.label) <= 10 and {1, 2, 8} <= set(pad.values)
    assert "32-way" in em.bank_view("column", 0, "fp16").html


def _bank_controls():
    captured = {}

    def fake_explorer(view, controls, **kwargs):
        captured["controls"] = controls
        return None

    original = em.explorer
    em.explorer = fake_explorer
    try:
        em.bank_explorer()
    finally:
        em.explorer = original
    return captured["controls"]


def test_bank_view_shows_the_seeds_padding_mistake():
    assert "4-way conflict" in em.bank_view("column", 8, "fp16").html
    assert "conflict-free" in em.bank_view("column", 2, "fp16").html
    assert "conflict-free" in em.bank_view("chunks", 8, "fp16").html


@pytest.mark.redundant_on_gpu  # pure CPU (matplotlib, ipywidgets): make test covers it; make test-gpu skips it
def test_explorers_build_live_and_static():
    import pytest

    pytest.importorskip("ipywidgets")  # the H200 machine has none; CI and Colab do
    live = core.explorer(em.occupancy_view, _controls("occupancy"), mode="live")
    assert live is not None
    static = core.explorer(em.bank_view, _controls("banks"), mode="static")
    assert len(static.html) < core.MAX_BYTES


def test_wavefront_frames_cover_weight_load_and_stream():
    frames = es._frames()
    assert len(frames) == es.ROWS + (es.M_ROWS + es.ROWS + es.COLS - 2)
    for k in range(len(frames)):
        assert es.wavefront_view(k).figure is not None
