"""The split-KV decoding explorer (chapter 16): every state against the model, live and static."""

from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")

from gpuperf import decoding  # noqa: E402
from gpuperf.explorers import core  # noqa: E402
from gpuperf.explorers import decoding as dx  # noqa: E402


def _controls():
    return [core.slider("batch", dx.BATCHES), core.slider("context", dx.CONTEXTS),
            core.slider("n_splits", dx.SPLITS)]


def test_every_state_matches_the_model():
    for params in core.states(_controls()):
        view = dx.decode_view(**params)
        state = decoding.decode_time_model(params["batch"], dx.KV_HEADS, params["context"], dx.HEAD_DIM,
                                           params["n_splits"], queries_per_kv_head=dx.QUERIES_PER_KV_HEAD,
                                           sm_count=132, hbm_bytes_per_s=4.8e12)
        assert f"<b>{state.time_s * 1e6:.0f} us</b>" in view.html
        assert f"<b>{params['batch'] * 8 * params['n_splits']} programs</b>" in view.html
        assert state.time_s >= dx.cache_floor_s(params["batch"], params["context"]) * (1 - 1e-12)
        view.figure.clear()


@pytest.mark.redundant_on_gpu  # pure CPU (matplotlib, ipywidgets): make test covers it; make test-gpu skips it
def test_live_and_static(every_control_changes_the_text):
    static = dx.decode_explorer(mode="static")
    assert isinstance(static, core.StaticExplorer) and static.n_states == 4 * 3 * 7
    live = dx.decode_explorer(mode="live")
    every_control_changes_the_text(live, ("batch", "context", "n_splits"))
