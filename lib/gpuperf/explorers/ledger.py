"""The ledger explorer: pick a model, a phase, a batch, a length, a device, a dtype and fused or not, and
see one layer's time bound split by operator group (a stacked bar) and operator by operator (a table).

The model is :func:`gpuperf.ledger.explorer_state`; the view is HTML only (a bar of coloured blocks and a
table), so the static site holds every state of :data:`gpuperf.ledger.EXPLORER_GRID` cheaply.
"""

from __future__ import annotations

import html

from gpuperf import ledger as L
from gpuperf.explorers.core import View, dropdown, explorer, toggle
from gpuperf.plotting.ledger import GROUP_COLORS, GROUP_LABELS
from gpuperf.plotting.tables import Column, format_table_html

COLUMNS = (
    Column("operator", "operator"),
    Column("kernels", "kernels", 1, 0),
    Column("flop", "GFLOP", 1e9, 2),
    Column("bytes_moved", "MB moved", 1e6, 1),
    Column("intensity_flop_per_byte", "FLOP/byte", 1, 1),
    Column("bound", "bound by"),
    Column("time_us", "time (µs)", 1, 1),
    Column("time_pct", "% of time", 1, 1),
    Column("flop_pct", "% of FLOP", 1, 2),
)


def _bar_html(state: L.ExplorerState) -> str:
    blocks = []
    for group, seconds in state.group_times_s.items():
        share = seconds / state.time_s
        if share <= 0:
            continue
        label = f"{GROUP_LABELS[group]}: {seconds * 1e6:,.1f} µs ({share:.0%})"
        text = f"{share:.0%}" if share >= 0.08 else ""
        blocks.append(
            f'<div title="{html.escape(label)}" style="width:{share * 100:.2f}%;background:{GROUP_COLORS[group]};'
            f'color:white;font-size:0.8em;text-align:center;line-height:1.8em;overflow:hidden">{text}</div>'
        )
    legend = " ".join(
        f'<span style="display:inline-block;width:0.9em;height:0.9em;background:{GROUP_COLORS[g]}"></span> '
        f"{html.escape(GROUP_LABELS[g])}: {state.group_times_s[g] * 1e6:,.1f} µs"
        for g in L.GROUPS
    )
    return (f'<div style="display:flex;width:100%;border:1px solid #888">{"".join(blocks)}</div>'
            f'<p style="font-size:0.85em">{legend}</p>')


def ledger_view(model: str, phase: str, batch: int, seq_len: int, device: str, dtype: str,
                fused: bool) -> View:
    """One state: the title line, the stacked time bar and the operator table (HTML)."""
    state = L.explorer_state(model, phase, batch, seq_len, device, dtype, fused)
    title = f"<p><b>{html.escape(state.title)}</b></p>"
    if not state.available:
        return View(html=title + "<p>Pick bf16, or the H200 SXM, which has FP8 Tensor Cores.</p>")
    rows = [dict(r, time_us=r["time_s"] * 1e6, time_pct=r["time_share"] * 100, flop_pct=r["flop_share"] * 100)
            for r in state.rows]
    summary = (f"<p>Sum of the bounds {state.time_s * 1e6:,.1f} µs per layer; the layer's FLOP over that time "
               f"is {state.fraction_of_matrix_peak:.0%} of the {dtype} matrix peak.</p>")
    return View(html=title + _bar_html(state) + summary + format_table_html(rows, COLUMNS))


def ledger_explorer(model: str = "Llama-3-8B", phase: str = "prefill", *, mode: str | None = None):
    """The ledger explorer over :data:`gpuperf.ledger.EXPLORER_GRID` (live widget or static figure)."""
    grid = L.EXPLORER_GRID
    controls = [
        dropdown("model", grid["model"], default=model),
        dropdown("phase", grid["phase"], default=phase),
        dropdown("batch", grid["batch"], default=1, label="batch (sequences)"),
        dropdown("seq_len", grid["seq_len"], default=2048, label="tokens (prefill) / context (decode)"),
        dropdown("device", grid["device"], default="H200 SXM"),
        dropdown("dtype", grid["dtype"], default="bf16"),
        toggle("fused", default=False, label="fused (FlashAttention, fused norms and epilogues)"),
    ]
    return explorer(ledger_view, controls, title="Transformer ledger: one layer", mode=mode)
