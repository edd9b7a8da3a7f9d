"""Tests for gpuperf.plotting.ledger: each figure draws what it is given and refuses bad input."""

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from gpuperf import ledger as L  # noqa: E402
from gpuperf import records as recorded  # noqa: E402
from gpuperf.plotting import ledger as P  # noqa: E402


@pytest.fixture
def ax():
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def test_shares_draw_one_block_per_group_and_bar(ax):
    led = L.ledger("Llama-3-8B", "prefill", 1, 2048)
    P.plot_shares(ax, led)
    assert len(ax.patches) == 2 * len(L.GROUPS)
    widths = [p.get_width() for p in ax.patches]
    assert sum(widths[: len(L.GROUPS)]) == pytest.approx(1) and sum(widths[len(L.GROUPS):]) == pytest.approx(1)
    with pytest.raises(ValueError, match="led"):
        P.plot_shares(ax, "ledger")


def test_group_times_stack_to_the_ledger_time(ax):
    leds = {"unfused": L.ledger("GPT-2 medium", "prefill", 8, 1024),
            "fused": L.ledger("GPT-2 medium", "prefill", 8, 1024, fused=True)}
    P.plot_group_times(ax, leds)
    n = len(L.GROUPS)
    for i, led in enumerate(leds.values()):
        assert sum(p.get_width() for p in ax.patches[i * n:(i + 1) * n]) == pytest.approx(led.time_s * 1e6)
    with pytest.raises(ValueError, match="ledgers"):
        P.plot_group_times(ax, {})


def test_profile_plot_from_the_recorded_run(ax):
    run = recorded.load_run("ledger_profile_h200")
    cfg = json.loads(run["provenance"]["config"])
    rows = L.compare_profile(run["results"][0], cfg)
    P.plot_profile(ax, rows)
    assert len(ax.patches) == 2 * len(rows)
    comps = {r["variant"]: L.compare_groups(r, cfg) for r in run["results"] if r["phase"] == "prefill"}
    fig, ax2 = plt.subplots()
    P.plot_group_comparison(ax2, comps)
    # each variant's two bars are labelled with the variant's name, not a legend entry's
    names = [t.get_text() for t in ax2.get_yticklabels()]
    assert names == [f"{v}: {kind}" for v in comps for kind in ("measured", "ledger")]
    plt.close(fig)
    with pytest.raises(ValueError, match="rows"):
        P.plot_profile(ax, [])


def test_decode_share_lines(ax):
    P.plot_decode_attention_share(ax, [1, 2, 4], {"a": [0.1, 0.2, 0.3]})
    assert len(ax.lines) == 1
    with pytest.raises(ValueError, match="shares"):
        P.plot_decode_attention_share(ax, [1, 2], {"a": [0.1]})


def test_series_lines(ax):
    P.plot_series(ax, [512, 1024], {"a": [1.0, 2.0], "b": [1.0, 1.5]}, xlabel="N", ylabel="speed-up")
    assert len(ax.lines) == 2 and ax.get_xlabel() == "N"
    with pytest.raises(ValueError, match="series"):
        P.plot_series(ax, [1, 2], {"a": [1.0]}, xlabel="x", ylabel="y")
