"""Smoke tests of the Part IV figures: each draws what it is given, on the axes it is given."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402

from gpuperf import attention as at  # noqa: E402
from gpuperf.plotting import attention as pa  # noqa: E402
from gpuperf.plotting.style import new_figure  # noqa: E402


def test_ledger_and_traffic():
    fig, ax = new_figure()
    ledger = at.standard_ledger(64, 64, 8)
    pa.plot_ledger(ax, [s for s, _, _ in ledger], [r for _, r, _ in ledger], [w for _, _, w in ledger])
    assert len(ax.patches) == 6
    fig, ax = new_figure()
    pa.plot_traffic_vs_n(ax, [1, 2, 4], {"a": [1, 4, 16], "b": [1, 2, 4]}, "y", marker_n=2)
    assert ax.get_xscale() == "log" and len(ax.get_lines()) >= 4


def test_trace_grid_and_wrong():
    x = np.array([1.0, 3.0, 2.0, 5.0])
    r = at.online_softmax(x, 2)
    fig, ax = new_figure()
    pa.plot_online_trace(ax, x, r.trace, 2)
    fig, ax = new_figure()
    pa.plot_blockwise_wrong(ax, x, at.safe_softmax(x).output, at.blockwise_softmax_wrong(x, 2), 2)
    fig, ax = new_figure()
    pa.plot_block_grid(ax, np.tril(np.ones((3, 3), bool)), [(0, 0), (1, 0)], "t")
    assert len(ax.patches) == 9 and len(ax.texts) == 2


def test_bench_plots():
    rows = [{"kernel": k, "head_dim": 64, "mask": "full", "n_seq": n, "flop_per_s": f * 1e12}
            for k, f in (("triton", 400), ("naive", 30)) for n in (1024, 2048)]
    fig, ax = new_figure()
    pa.plot_attention_bench(ax, rows, 64, "full")
    assert len(ax.get_lines()) == 2
    srows = [{"label": f"{k} fp16 4x8", "dtype": "fp16", "rows": 4, "n": 8, "bytes_per_s": 1e12}
             for k in ("copy", "torch.softmax", "triton auto", "triton online", "triton three_pass")]
    fig, ax = new_figure()
    pa.plot_softmax_bench(ax, srows, "fp16")
    assert len(ax.patches) == 5


def test_softmax_fractions_plot():
    srows = [{"label": f"{k} fp16 {r}x{n}", "dtype": "fp16", "rows": r, "n": n, "ratio_to_reference": v}
             for k, v in (("torch.softmax", 0.3), ("triton fused", 0.97), ("triton online", 0.6))
             for r, n in ((64, 4096), (16, 16384))]
    srows.append({"label": "copy fp16 64x4096", "dtype": "fp16", "rows": 64, "n": 4096,
                  "ratio_to_reference": None})
    fig, ax = new_figure()
    pa.plot_softmax_fractions(ax, srows, "fp16")
    names = [ln.get_label() for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    assert names == ["torch.softmax", "fused (1 read)", "online (2 reads)"]
    labels = [t.get_text() for t in ax.texts]
    assert any("2/3" in t for t in labels) and any("1/2" in t for t in labels)


def test_traffic_figure():
    c = at.compare_traffic(1024, 64, 4096)
    fig = pa.traffic_figure(c, [512, 1024], {"standard": [1, 4], "FlashAttention": [0.5, 2]})
    assert len(fig.axes) == 1
