"""Figures of chapters 15 and 16: backward-pass traffic (standard vs FlashAttention), memory saved for the
backward pass, measured H200 runs, the special-function roof, split-KV decoding and where attention matters.

Every function takes plain data (from :mod:`gpuperf.attention_backward`, :mod:`gpuperf.decoding` or a
recorded run's rows), draws on a new figure in the book style and returns ``(fig, ax)`` (``axes`` for
several panels).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from gpuperf.plotting.style import PALETTE, new_figure

_IMPL_COLORS = {"standard": PALETTE[1], "standard-fp16": PALETTE[4], "sdpa-flash": PALETTE[0],
                "sdpa-cudnn": PALETTE[2], "triton": PALETTE[3]}
_IMPL_NAMES = {"standard": "eager, fp32 softmax", "standard-fp16": "eager, fp16",
               "sdpa-flash": "SDPA flash (FlashAttention-2)", "sdpa-cudnn": "SDPA cuDNN",
               "triton": "ours (Triton)"}


#: Arrays of the counted algorithms, grouped for :func:`plot_traffic_by_array` (name -> legend entry).
ARRAY_GROUPS = {"P": "P (N x N)", "dP": "dP (N x N)", "dS": "dS (N x N)", "S": "S (N x N)",
                "Q": "Q, K, V", "K": "Q, K, V", "V": "Q, K, V", "O": "O, dO", "dO": "O, dO",
                "dQ": "dQ", "dK": "dK, dV", "dV": "dK, dV", "m": "m, l", "l": "m, l"}


def plot_traffic_by_array(standard_reads: Mapping[str, int], standard_writes: Mapping[str, int],
                          flash_reads: Mapping[str, int], flash_writes: Mapping[str, int], title: str = ""):
    """Two stacked horizontal bars (standard, FlashAttention): slow-memory elements moved, by group of arrays
    (:data:`ARRAY_GROUPS`; an array not listed there keeps its own name)."""
    fig, ax = new_figure(width=8.0, height=3.4)
    bars = []
    for reads, writes in ((standard_reads, standard_writes), (flash_reads, flash_writes)):
        totals: dict[str, int] = {}
        for counter in (reads, writes):
            for name, count in counter.items():
                group = ARRAY_GROUPS.get(name, name)
                totals[group] = totals.get(group, 0) + count
        bars.append(totals)
    groups = list(dict.fromkeys([g for g in ARRAY_GROUPS.values() if any(g in b for b in bars)]
                                + [g for b in bars for g in b]))
    palette = list(PALETTE[:7]) + ["#999999", "#666666"]
    colors = {g: palette[i % len(palette)] for i, g in enumerate(groups)}
    for row, totals in enumerate(bars):
        left = 0.0
        for g in groups:
            width = totals.get(g, 0)
            if width:
                ax.barh(row, width / 1e6, left=left / 1e6, color=colors[g], edgecolor="white", label=g)
                left += width
    ax.set_yticks([0, 1], ["standard\n(Algorithm 3)", "FlashAttention\n(Algorithm 4)"])
    ax.invert_yaxis()
    ax.set_xlabel("HBM traffic of the backward pass (million elements, reads + writes)")
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    ax.legend(unique.values(), unique.keys(), ncols=min(4, len(unique)), loc="upper center",
              bbox_to_anchor=(0.5, -0.28))
    ax.grid(axis="y", visible=False)
    if title:
        ax.set_title(title)
    return fig, ax


def _n_ticks(ax, n_values) -> None:
    values = sorted(set(int(n) for n in n_values))
    ax.set_xticks(values, [f"{n // 1024}K" if n >= 1024 and n % 1024 == 0 else str(n) for n in values])
    ax.minorticks_off()


def plot_traffic_vs_n(n_seqs: Sequence[int], standard: Mapping[int, Sequence[float]],
                      flash: Mapping[int, Sequence[float]], what: str = "forward + backward"):
    """Elements moved vs N (log-log): standard (one curve per d) and FlashAttention (one per d)."""
    fig, ax = new_figure(width=7.0, height=4.2)
    for i, d in enumerate(sorted(flash)):
        color = PALETTE[i]
        ax.plot(n_seqs, standard[d], "--", color=color, label=f"standard, d = {d}")
        ax.plot(n_seqs, flash[d], "-o", color=color, ms=4, label=f"FlashAttention, d = {d}")
    n = np.asarray(n_seqs, dtype=float)
    first = min(flash)
    ref = flash[first][0] * (n / n[0]) ** 2
    ax.plot(n, ref, ":", color="gray", lw=1, label=r"$\propto N^2$")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length N")
    ax.set_ylabel(f"HBM elements moved, {what} (one head)")
    ax.legend(ncols=2)
    return fig, ax


def plot_ratio_vs_sram(sram_kib: Sequence[float], ratios: Mapping[int, Sequence[float]],
                       marks: Mapping[str, float] | None = None, n_seq: int | None = None):
    """Standard over FlashAttention traffic vs on-chip memory M (KiB of 16-bit elements), one curve per d."""
    fig, ax = new_figure(width=7.0, height=4.0)
    for i, d in enumerate(sorted(ratios)):
        ax.plot(sram_kib, ratios[d], "-o", ms=3, color=PALETTE[i], label=f"d = {d}")
    ax.axhline(1.0, color="gray", lw=1)
    for j, (label, kib) in enumerate((marks or {}).items()):
        ax.axvline(kib, color=PALETTE[4 + j % 2], lw=1, ls="--")
        ax.text(kib, ax.get_ylim()[1] * 0.97, f" {label}", rotation=90, va="top", fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("on-chip memory M per block (KiB of 16-bit elements)")
    ax.set_ylabel("traffic ratio, standard / FlashAttention")
    ax.set_title("forward + backward" + (f", N = {n_seq}" if n_seq else ""))
    ax.legend()
    return fig, ax


def plot_saved_memory(n_seqs: Sequence[int], standard_bytes: Sequence[float], flash_bytes: Sequence[float],
                      capacity_bytes: float | None = None, capacity_label: str = ""):
    """Bytes one layer keeps for its backward pass beyond Q, K, V, O: P (standard) vs L (FlashAttention)."""
    fig, ax = new_figure(width=7.0, height=4.0)
    ax.plot(n_seqs, np.asarray(standard_bytes) / 1e9, "-o", ms=4, color=PALETTE[1],
            label=r"standard: $P$, $N^2$ per head")
    ax.plot(n_seqs, np.asarray(flash_bytes) / 1e9, "-o", ms=4, color=PALETTE[0],
            label=r"FlashAttention: $L$, $N$ per head")
    if capacity_bytes:
        ax.axhline(capacity_bytes / 1e9, color="gray", ls="--", lw=1)
        ax.text(n_seqs[0], capacity_bytes / 1e9 * 1.3, capacity_label, fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length N")
    ax.set_ylabel("saved for the backward pass (GB, one layer)")
    ax.legend()
    return fig, ax


def plot_measured(rows: Sequence[Mapping], pass_name: str = "bwd", dtype: str = "fp16",
                  peak_flop_per_s: float | None = None):
    """TFLOP/s vs N from the ``attention_backward`` family: panels d x mask, one line per implementation."""
    head_dims = sorted({r["head_dim"] for r in rows})
    masks = ["full", "causal"]
    fig, axes = new_figure(ncols=2, nrows=len(head_dims), width=10.0, height=3.2 * len(head_dims) + 0.6)
    axes = np.atleast_2d(axes)
    for i, d in enumerate(head_dims):
        for j, mask in enumerate(masks):
            ax = axes[i, j]
            for impl in ("sdpa-flash", "sdpa-cudnn", "triton"):
                pts = sorted((r["n_seq"], r["flop_per_s"]) for r in rows
                             if r["head_dim"] == d and r["mask"] == mask and r["impl"] == impl
                             and r["pass"] == pass_name and r["dtype"] == dtype)
                if pts:
                    n, f = zip(*pts)
                    ax.plot(n, np.asarray(f) / 1e12, "-o", ms=4, color=_IMPL_COLORS[impl],
                            label=_IMPL_NAMES[impl])
            if peak_flop_per_s:
                ax.axhline(peak_flop_per_s / 1e12, color="gray", ls="--", lw=1)
            ax.set_xscale("log", base=2)
            _n_ticks(ax, [r["n_seq"] for r in rows])
            ax.set_ylim(bottom=0)
            ax.set_title(f"{pass_name}, d = {d}, {mask}", fontsize=10)
            ax.set_xlabel("sequence length N")
            ax.set_ylabel("TFLOP/s")
    axes[0, 0].legend(fontsize=8)
    return fig, axes


def plot_ratio_to_reference(rows: Sequence[Mapping], pass_name: str = "bwd", dtype: str = "fp16",
                            impl: str = "triton", reference: str = "sdpa-cudnn", target: float | None = None):
    """Speed of ``impl`` over ``reference`` (time ratio, same work) vs N from the ``attention_backward``
    family: one line per (d, mask), and the target as a dashed line."""
    fig, ax = new_figure(width=7.0, height=3.6)
    shapes = sorted({(r["head_dim"], r["mask"]) for r in rows if r["dtype"] == dtype},
                    key=lambda k: (k[0], k[1] != "full"))
    for i, (d, mask) in enumerate(shapes):
        rate = {(r["impl"], r["n_seq"]): r["flop_per_s"] for r in rows
                if (r["head_dim"], r["mask"], r["pass"], r["dtype"]) == (d, mask, pass_name, dtype)}
        n = sorted(ns for (name, ns) in rate if name == impl and (reference, ns) in rate)
        ratio = [rate[impl, ns] / rate[reference, ns] for ns in n]
        ax.plot(n, ratio, "-o" if mask == "full" else "--s", ms=4, color=PALETTE[i % len(PALETTE)],
                label=f"d = {d}, {mask}")
    if target is not None:
        ax.axhline(target, color="gray", ls=":", lw=1.2, label=f"target {target:g}")
    ax.set_xscale("log", base=2)
    _n_ticks(ax, [r["n_seq"] for r in rows])
    ax.set_xlabel("sequence length N")
    ax.set_ylabel(f"{_IMPL_NAMES.get(impl, impl)} / {_IMPL_NAMES.get(reference, reference)}", fontsize=9)
    ax.set_title(f"{pass_name}, {dtype}: speed relative to {_IMPL_NAMES.get(reference, reference)}",
                 fontsize=10)
    ax.legend(fontsize=8)
    return fig, ax


def plot_measured_bars(rows: Sequence[Mapping], dtype: str = "fp16"):
    """Grouped bars of TFLOP/s, one group per (pass, d, mask), one bar per implementation, for a run with
    one sequence length (the quick run of the ``attention_backward`` family)."""
    keys = sorted({(r["pass"], r["head_dim"], r["mask"]) for r in rows if r["dtype"] == dtype},
                  key=lambda k: (k[0] != "bwd", k[1], k[2] != "full"))
    impls = ("sdpa-flash", "sdpa-cudnn", "triton")
    fig, ax = new_figure(width=10.0, height=4.0)
    x = np.arange(len(keys))
    for j, impl in enumerate(impls):
        values = []
        for key in keys:
            match = [r["flop_per_s"] for r in rows if r["dtype"] == dtype and r["impl"] == impl
                     and (r["pass"], r["head_dim"], r["mask"]) == key]
            values.append(match[0] / 1e12 if match else np.nan)
        ax.bar(x + (j - 1) * 0.27, values, width=0.27, color=_IMPL_COLORS[impl], label=_IMPL_NAMES[impl])
    ax.set_xticks(x, [f"{p}\nd = {d}, {m}" for p, d, m in keys], fontsize=9)
    ax.set_ylabel("TFLOP/s")
    ns = sorted({r["n_seq"] for r in rows})
    ax.set_title(f"{dtype}, N = {', '.join(str(n) for n in ns)}")
    ax.legend(fontsize=8, ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    ax.grid(axis="x", visible=False)
    return fig, ax


def plot_memory_run(rows: Sequence[Mapping]):
    """Two panels from the ``attention_memory`` run: peak extra memory and time of a training step vs N."""
    fig, axes = new_figure(ncols=2, width=10.0, height=3.8)
    for impl in ("standard", "standard-fp16", "triton", "sdpa-flash"):
        pts = sorted((r["n_seq"], r["peak_bytes"], r["time_s"]) for r in rows if r["impl"] == impl)
        if not pts:
            continue
        n, mem, t = zip(*pts)
        axes[0].plot(n, np.asarray(mem) / 1e9, "-o", ms=4, color=_IMPL_COLORS[impl], label=_IMPL_NAMES[impl])
        axes[1].plot(n, np.asarray(t) * 1e3, "-o", ms=4, color=_IMPL_COLORS[impl], label=_IMPL_NAMES[impl])
    for ax, label in zip(axes, ("extra peak memory of the step (GB)", "time of the step (ms)")):
        ax.set_xscale("log", base=2)
        _n_ticks(ax, [r["n_seq"] for r in rows])
        ax.set_yscale("log")
        ax.set_xlabel("sequence length N")
        ax.set_ylabel(label)
    axes[0].legend(fontsize=8)
    return fig, axes


def plot_bars(labels: Sequence[str], values: Sequence[float], ylabel: str, title: str = "",
              colors: Sequence[str] | None = None, annotate: str = "{:.1f}"):
    """A plain bar chart with each value written above its bar (cited results, ratios)."""
    fig, ax = new_figure(width=7.0, height=3.8)
    colors = colors or [PALETTE[i % 6] for i in range(len(labels))]
    bars = ax.bar(range(len(labels)), values, color=colors)
    for bar, value in zip(bars, values):
        ax.text(bar.get_x() + bar.get_width() / 2, bar.get_height(), annotate.format(value), ha="center",
                va="bottom", fontsize=9)
    ax.set_xticks(range(len(labels)), labels, fontsize=9)
    ax.set_ylabel(ylabel)
    ax.grid(axis="x", visible=False)
    if title:
        ax.set_title(title)
    return fig, ax


def plot_score_costs(head_dims: Sequence[int], matmul_s: Sequence[float], exp_s: Sequence[float],
                     device: str, pass_name: str = "forward"):
    """Time per attention score on the matrix unit (4 d FLOP) vs the special-function units (one exp)."""
    fig, ax = new_figure(width=7.0, height=3.8)
    x = np.arange(len(head_dims))
    ax.bar(x - 0.2, np.asarray(matmul_s) * 1e15, width=0.4, color=PALETTE[0], label="matmuls on Tensor Cores")
    ax.bar(x + 0.2, np.asarray(exp_s) * 1e15, width=0.4, color=PALETTE[1], label="one exp on the SFUs")
    ax.set_xticks(x, [f"d = {d}" for d in head_dims])
    ax.set_ylabel("time per score at the peak (fs)")
    ax.set_title(f"{device}, {pass_name} pass: the special-function roof")
    ax.legend()
    ax.grid(axis="x", visible=False)
    return fig, ax


def plot_decode_splits(n_splits: Sequence[int], times_s: Mapping[str, Sequence[float]],
                       floors_s: Mapping[str, float]):
    """Modelled decode attention time vs number of KV splits, one line per configuration, each with its
    floor (its KV cache bytes over the HBM bandwidth) dotted in the same colour."""
    fig, ax = new_figure(width=7.0, height=3.8)
    for i, (label, t) in enumerate(times_s.items()):
        ax.plot(n_splits, np.asarray(t) * 1e6, "-o", ms=4, color=PALETTE[i], label=label)
        if label in floors_s:
            ax.axhline(floors_s[label] * 1e6, color=PALETTE[i], ls=":", lw=1)
    ax.plot([], [], ":", color="gray", lw=1, label="cache bytes / HBM bandwidth")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("KV splits per (sequence, KV head)")
    ax.set_ylabel("attention time per decode step (us)")
    ax.legend(fontsize=8)
    return fig, ax


def plot_attention_share(n_seqs: Sequence[int], shares: Mapping[int, Sequence[float]]):
    """Fraction of a layer's FLOP spent in attention scores (Q K^T, P V) vs N, one line per model width."""
    fig, ax = new_figure(width=7.0, height=3.8)
    for i, (width, s) in enumerate(sorted(shares.items())):
        ax.plot(n_seqs, s, "-o", ms=4, color=PALETTE[i], label=f"d_model = {width}")
    ax.axhline(0.5, color="gray", lw=1, ls=":")
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1)
    ax.set_xlabel("sequence length N")
    ax.set_ylabel("share of the layer's FLOP in attention")
    ax.legend()
    return fig, ax


def plot_schedule(events: Sequence[tuple], title: str = ""):
    """The warp-specialised backward's schedule: one row per lane of
    :func:`gpuperf.kernels.gluon_attention_bwd.schedule_events` (the K_j and V_j load, ring slots filled by the producer's TMA
    loads, the consumers' tensor-core products, the consumers' other work), one bar per event, coloured by
    query block and labelled with its step."""
    lanes = []
    for lane, *_ in events:
        if lane not in lanes:
            lanes.append(lane)
    lanes = [lane for lane in ("K V",) if lane in lanes] + [
        lane for lane in lanes if lane.startswith("slot")] + [
        lane for lane in ("tensor cores", "other units") if lane in lanes]
    fig, ax = new_figure(width=9.0, height=0.55 * len(lanes) + 1.3)
    row = {lane: len(lanes) - 1 - k for k, lane in enumerate(lanes)}
    for lane, label, block, start, end in events:
        color = "0.45" if block < 0 else PALETTE[block % len(PALETTE)]  # K_j, V_j: grey
        ax.barh(row[lane], end - start, left=start, height=0.6, color=color, alpha=0.85,
                edgecolor="white")
        ax.text((start + end) / 2, row[lane], label, ha="center", va="center", fontsize=7, color="white")
    ax.set_yticks([row[lane] for lane in lanes])
    ax.set_yticklabels([f"{lane} (TMA)" if lane.startswith(("slot", "K V")) else f"consumers: {lane}"
                        for lane in lanes])
    ax.set_xlabel("time (illustrative units)")
    ax.set_xlim(0, max(end for *_, end in events) * 1.01)
    ax.grid(False)
    if title:
        ax.set_title(title)
    return fig, ax


__all__ = ["plot_attention_share", "plot_bars", "plot_decode_splits", "plot_measured", "plot_measured_bars",
           "plot_memory_run", "plot_ratio_to_reference",
           "plot_ratio_vs_sram", "plot_saved_memory", "plot_schedule", "plot_score_costs",
           "plot_traffic_by_array",
           "plot_traffic_vs_n"]
