"""Tests for gpuperf.explorers.flash: the model against the closed forms, the view on every state, the live
widget and the static figure."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from gpuperf import attention as at  # noqa: E402
from gpuperf.explorers import core  # noqa: E402
from gpuperf.explorers import flash as fx  # noqa: E402


def test_model_matches_closed_forms():
    c = fx.flash_model(16384, 64, 128, "kv_outer")
    m = 128 * 1024 // 2
    assert (c.block_rows, c.block_cols) == at.flash_block_sizes(m, 64)
    assert c.flash == at.flash_io(16384, 16384, 64, c.block_rows, c.block_cols, "kv_outer")
    assert c.standard == at.standard_io(16384, 16384, 64)
    assert c.kv_passes == 1 and c.qo_passes == -(-16384 // c.block_cols)
    c2 = fx.flash_model(4096, 128, 64, "q_outer", "128x128")
    assert (c2.block_rows, c2.block_cols) == (128, 128) and c2.kv_passes == 32
    assert not c2.fits_on_chip  # 2*128*128*2 + 128*128 + 256 elements > 32 Ki elements


def test_traffic_is_quadratic_and_ratio_saturates():
    small, big = (fx.flash_model(n, 64, 128, "kv_outer") for n in (16384, 65536))
    assert 15 < big.flash.total / small.flash.total < 17  # x4 in N -> x16 in traffic
    assert abs(big.traffic_ratio / small.traffic_ratio - 1) < 0.05


def test_view_on_every_state():
    controls = fx.flash_controls()
    assert core.state_count(controls) <= 60  # the static site renders every state
    seen = set()
    for params in core.states(controls):
        v = fx.flash_view(**params)
        assert v.figure is not None and "HBM traffic" in v.html
        seen.add(v.html)
    assert len(seen) == core.state_count(controls)  # every state's numbers differ


def test_every_control_changes_the_numbers():
    base = core.default_params(fx.flash_controls())
    html0 = fx.flash_view(**base).html
    for control in fx.flash_controls():
        other = [v for v in control.values if v != base[control.name]][0]
        assert fx.flash_view(**{**base, control.name: other}).html != html0, control.name


@pytest.mark.redundant_on_gpu  # pure CPU (matplotlib, ipywidgets): make test covers it; make test-gpu skips it
def test_live_and_static():
    live = fx.flash_explorer(mode="live")
    assert live is not None
    static = fx.flash_explorer(mode="static")
    text = static._repr_html_()
    assert "gx-data" in text and len(text) < core.MAX_BYTES


def test_bad_blocks():
    with pytest.raises(ValueError, match="blocks"):
        fx.flash_model(1024, 64, 64, "kv_outer", "7x7")
