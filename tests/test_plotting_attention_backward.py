"""Smoke tests of gpuperf.plotting.attention_backward: each figure draws the data it is given."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from gpuperf import attention_backward as ab  # noqa: E402
from gpuperf.plotting import attention_backward as figs  # noqa: E402


def test_traffic_by_array_groups_arrays():
    rng = np.random.default_rng(0)
    q, k, v, do = (rng.standard_normal((40, 4)) for _ in range(4))
    s = ab.standard_forward(q, k, v)
    g = ab.standard_backward(q, k, v, s.p, do)
    f = ab.flash_forward(q, k, v, block_rows=4, block_cols=8)
    h = ab.flash_backward(q, k, v, f.o, do, f.row_max, f.row_sum, block_rows=4, block_cols=8)
    fig, ax = figs.plot_traffic_by_array(g.memory.reads, g.memory.writes, h.memory.reads, h.memory.writes)
    widths = [p.get_width() for p in ax.patches]
    assert abs(sum(widths) * 1e6 - g.io.elements_moved - h.io.elements_moved) < 1e-3
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "P (N x N)" in labels and len(labels) == len(set(labels))
    plt.close(fig)


def test_other_figures_draw():
    n = [1024, 2048]
    fig, _ = figs.plot_traffic_vs_n(n, {64: [4.0, 16.0]}, {64: [1.0, 4.0]})
    plt.close(fig)
    fig, _ = figs.plot_ratio_vs_sram([4, 8], {64: [0.5, 1.0]}, marks={"H200": 227})
    plt.close(fig)
    fig, _ = figs.plot_saved_memory(n, [1e9, 4e9], [1e6, 2e6], 141e9, "H200")
    plt.close(fig)
    rows = [{"head_dim": 64, "mask": m, "impl": i, "pass": "bwd", "dtype": "fp16", "n_seq": s,
             "flop_per_s": 1e14} for m in ("full", "causal") for i in ("triton", "sdpa-flash") for s in n]
    fig, axes = figs.plot_measured(rows)
    assert len(axes[0, 0].lines) == 2
    plt.close(fig)
    fig, ax = figs.plot_measured_bars([r for r in rows if r["n_seq"] == 1024])
    assert len(ax.patches) == 3 * 2  # three implementations x (d, mask) groups; cuDNN bars are NaN
    plt.close(fig)
    mem = [{"impl": i, "n_seq": s, "peak_bytes": 1e9, "time_s": 1e-3} for i in ("standard", "triton")
           for s in n]
    fig, axes = figs.plot_memory_run(mem)
    assert len(axes[0].lines) == 2
    plt.close(fig)
    for fig, _ in (figs.plot_bars(["a", "b"], [1.0, 2.0], "y"),
                   figs.plot_score_costs([64, 128], [1e-13, 2e-13], [2e-13, 2e-13], "H200"),
                   figs.plot_decode_splits([1, 2], {"b": [2e-3, 1e-3]}, {"b": 1e-4}),
                   figs.plot_attention_share(n, {1024: [0.2, 0.4]})):
        plt.close(fig)


def test_ratio_to_reference_draws_one_line_per_shape():
    rows = [{"head_dim": d, "mask": m, "impl": i, "pass": "bwd", "dtype": "fp16", "n_seq": s,
             "flop_per_s": (2e14 if i == "triton" else 4e14)}
            for d in (64, 128) for m in ("full", "causal") for i in ("triton", "sdpa-cudnn")
            for s in (1024, 2048)]
    fig, ax = figs.plot_ratio_to_reference(rows, target=0.85)
    lines = [ln for ln in ax.lines if not ln.get_label().startswith("target")]
    assert len(lines) == 4 and all(np.allclose(ln.get_ydata(), 0.5) for ln in lines)
    plt.close(fig)


def test_plot_schedule_draws_every_event():
    from gpuperf.kernels.gluon_attention_bwd import schedule_events
    from gpuperf.plotting.attention_backward import plot_schedule

    events = schedule_events(4, 2)
    fig, ax = plot_schedule(events, "t")
    assert len(ax.patches) == len(events)
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "K V (TMA)", "slot 0 (TMA)", "slot 1 (TMA)", "consumers: tensor cores", "consumers: other units"]
    plt.close(fig)
