"""The bytes-in-flight (chapter 02) and divergence (chapter 03) explorers: every state, live and static."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from gpuperf import littles_law, simt  # noqa: E402
from gpuperf.explorers import core  # noqa: E402
from gpuperf.explorers import littles_law as lx  # noqa: E402
from gpuperf.explorers import simt as sx  # noqa: E402


def test_in_flight_view_matches_the_model():
    latency = lx.measured_hbm_latency_s()
    assert 200e-9 < latency < 800e-9
    for params in core.states([core.slider("warps_per_sm", lx.WARPS), core.slider("loads_per_thread", lx.LOADS),
                               core.dropdown("device", lx.DEVICES)]):
        view = lx.in_flight_view(**params)
        req = littles_law.in_flight_requirement(params["device"], latency)
        per_sm = params["warps_per_sm"] * 32 * params["loads_per_thread"] * 16
        bw = min(req.hbm_bytes_per_s, per_sm * req.sm_count / latency)
        assert f"<b>{bw / 1e12:.2f} TB/s</b>" in view.html
        assert f"<b>{per_sm / 1024:.1f} KiB</b>" in view.html


def test_divergence_view_matches_the_simulator():
    for pattern in sx.PATTERNS:
        for p in sx.PROBABILITIES:
            for w in sx.WARP_SIZES:
                view = sx.divergence_view(pattern, p, w)
                state = simt.divergence_explorer_state(pattern, p, w)
                assert f"<b>{state.simt_efficiency:.1%}</b>" in view.html
    assert "<b>60.0%</b>" in sx.divergence_view("alternating", 0.5, 32).html  # (2 + 4) x 32 / (32 x 10)


@pytest.mark.redundant_on_gpu  # pure CPU (matplotlib, ipywidgets): make test covers it; make test-gpu skips it
@pytest.mark.parametrize("make, names, n_states", [
    (lx.bytes_in_flight_explorer, ("warps_per_sm", "loads_per_thread", "device"), 40),
    (sx.divergence_explorer, ("pattern", "probability", "warp_size"), 30),
])
def test_live_and_static(make, names, n_states, every_control_changes_the_text):
    static = make(mode="static")
    assert isinstance(static, core.StaticExplorer) and static.n_states == n_states
    live = make(mode="live")
    every_control_changes_the_text(live, names)  # every control changes the numbers from the default state
