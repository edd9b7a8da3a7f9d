"""Tests for the ledger explorer (gpuperf.explorers.ledger): every state, live and static."""

import pytest

pytest.importorskip("ipywidgets")

from gpuperf import ledger as L  # noqa: E402
from gpuperf.explorers import core  # noqa: E402
from gpuperf.explorers import ledger as ex  # noqa: E402


def test_every_state_renders_and_matches_the_model():
    page = ex.ledger_explorer(mode="static")
    assert isinstance(page, core.StaticExplorer)
    assert page.n_states == 3 * 2 * 2 * 3 * 2 * 2 * 2
    assert "Transformer ledger" in page.html


def test_view_shows_the_ledger_numbers():
    view = ex.ledger_view("Llama-3-8B", "prefill", 1, 2048, "H200 SXM", "bf16", False)
    led = L.ledger("Llama-3-8B", "prefill", 1, 2048, "H200 SXM", "bf16", False)
    assert view.figure is None
    assert f"{led.time_s * 1e6:,.1f} µs" in view.html
    for r in led.rows:
        assert r.op.name in view.html
    unavailable = ex.ledger_view("Llama-3-8B", "prefill", 1, 2048, "A100 80GB SXM", "fp8", False)
    assert "no fp8 matrix unit" in unavailable.html


def test_live_explorer_changes_with_each_control():
    box = ex.ledger_explorer(mode="live")
    first = box.text.value
    assert box.params() == {"model": "Llama-3-8B", "phase": "prefill", "batch": 1, "seq_len": 2048,
                            "device": "H200 SXM", "dtype": "bf16", "fused": False}
    seen = {first}
    for name, control in box.controls.items():
        old = control.value
        control.value = (not old) if isinstance(old, bool) else (old + 1) % len(control.options)
        assert box.text.value not in seen, name
        seen.add(box.text.value)
        control.value = old
    assert box.text.value == first
