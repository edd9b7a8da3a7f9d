"""Figures of Part IV (chapters 12-14): attention's traffic, online softmax, FlashAttention's blocks, and the
recorded softmax and attention benchmarks. Every function draws on an ``ax`` it is given (or a new figure)
from data computed by :mod:`gpuperf.attention` or read from a recorded run; none computes a model itself.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from gpuperf.plotting.style import PALETTE, use_book_style

#: Colours and markers of the attention kernels in benchmark figures (one per kernel, everywhere).
KERNEL_STYLE = {
    "triton-tma": (PALETTE[1], "o", "Triton (this course, TMA)"),
    "triton": (PALETTE[4], "s", "Triton (this course)"),
    "sdpa-flash": (PALETTE[0], "D", "SDPA flash (FlashAttention-2)"),
    "sdpa-cudnn": (PALETTE[2], "^", "SDPA cuDNN"),
    "naive": (PALETTE[6], "x", "eager: matmul, scale, fp32 softmax, matmul"),
}


def plot_ledger(ax, labels: Sequence[str], reads: Sequence[float], writes: Sequence[float], unit: str = "MB"):
    """Stacked horizontal bars of reads and writes per step (already in ``unit``)."""
    y = np.arange(len(labels))[::-1]
    ax.barh(y, reads, color=PALETTE[0], label="read from HBM")
    ax.barh(y, writes, left=reads, color=PALETTE[1], label="written to HBM")
    ax.set_yticks(y, labels)
    ax.set_xlabel(f"HBM traffic ({unit})")
    ax.legend(loc="lower right")
    ax.grid(axis="y", visible=False)
    return ax


def plot_traffic_vs_n(ax, n_values: Sequence[int], series: Mapping[str, Sequence[float]], ylabel: str,
                      marker_n: int | None = None):
    """Log-log lines of traffic (or memory) against sequence length, one per named series, with
    reference slopes N and N^2 drawn through the first series' first point."""
    n = np.asarray(n_values, dtype=float)
    for idx, (name, values) in enumerate(series.items()):
        ax.plot(n, values, marker="os^Dv"[idx % 5], color=PALETTE[idx % 7], label=name)
    first = np.asarray(next(iter(series.values())), dtype=float)
    for power, style in ((1, ":"), (2, "--")):
        ax.plot(n, first[0] * (n / n[0]) ** power, style, color="0.5", linewidth=1.0)
        ax.annotate(f"∝ N{'²' if power == 2 else ''}", (n[-1], first[0] * (n[-1] / n[0]) ** power),
                    fontsize=8, color="0.4", xytext=(3, 0), textcoords="offset points", va="center")
    if marker_n is not None:
        ax.axvline(marker_n, color="0.6", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length N")
    ax.set_ylabel(ylabel)
    ax.legend()
    return ax


def plot_online_trace(ax, x: np.ndarray, trace, block: int):
    """The values of a row (bars, one colour per block) and the running max m after each block (steps)."""
    x = np.asarray(x)
    colors = [PALETTE[(i // block) % 6] for i in range(x.size)]
    ax.bar(np.arange(x.size), x, color=colors, alpha=0.6)
    ends = [min((s.block + 1) * block, x.size) - 0.5 for s in trace]
    starts = [s.block * block - 0.5 for s in trace]
    for s, a, b in zip(trace, starts, ends):
        ax.hlines(s.row_max, a, b, color=PALETTE[6], linewidth=2)
    ax.plot([], [], color=PALETTE[6], label="running max m after the block")
    ax.set_xlabel("position in the row")
    ax.set_ylabel("score")
    ax.legend(loc="upper left")
    return ax


def plot_blockwise_wrong(ax, x: np.ndarray, correct: np.ndarray, wrong: np.ndarray, block: int):
    """Correct softmax against 'softmax each block and concatenate'."""
    pos = np.arange(np.asarray(x).size)
    ax.plot(pos, correct, "o-", color=PALETTE[0], label=f"softmax of the row (sums to {correct.sum():.0f})")
    ax.plot(pos, wrong, "s--", color=PALETTE[1], label=f"softmax per block of {block} (sums to {wrong.sum():.0f})")
    for edge in range(block, pos.size, block):
        ax.axvline(edge - 0.5, color="0.7", linewidth=0.8)
    ax.set_xlabel("position in the row")
    ax.set_ylabel("probability")
    ax.legend()
    return ax


def plot_block_grid(ax, visited: np.ndarray, order: Sequence[tuple[int, int]] | None = None, title: str = ""):
    """The T_r x T_c grid of (query block, key block) pairs: visited blocks filled, skipped ones blank,
    numbered in the order the loops visit them."""
    t_r, t_c = visited.shape
    for i in range(t_r):
        for j in range(t_c):
            ax.add_patch(Rectangle((j, i), 1, 1, facecolor=PALETTE[5] if visited[i, j] else "white",
                                   edgecolor="0.3", linewidth=0.8))
    if order is not None:
        for step, (i, j) in enumerate(order):
            ax.text(j + 0.5, i + 0.5, str(step + 1), ha="center", va="center", fontsize=8)
    ax.set_xlim(0, t_c)
    ax.set_ylim(t_r, 0)
    ax.set_aspect("equal")
    ax.set_xticks(np.arange(t_c) + 0.5, [str(j) for j in range(t_c)])
    ax.set_yticks(np.arange(t_r) + 0.5, [str(i) for i in range(t_r)])
    ax.set_xlabel("key block j")
    ax.set_ylabel("query block i")
    ax.grid(False)
    ax.set_title(title)
    return ax


def plot_attention_bench(ax, rows: Sequence[Mapping], head_dim: int, mask: str,
                         kernels: Sequence[str] = ("triton-tma", "triton", "sdpa-flash", "sdpa-cudnn", "naive"),
                         dtype: str | None = None):
    """TFLOP/s against N for each kernel of a recorded attention run, one head dim and mask (and one dtype,
    when ``dtype`` names it: runs that hold fp16 and bf16 rows)."""
    for kernel in kernels:
        sel = sorted((r for r in rows if r.get("kernel") == kernel and r.get("head_dim") == head_dim
                      and r.get("mask") == mask and (dtype is None or r.get("dtype") == dtype)),
                     key=lambda r: r["n_seq"])
        if not sel:
            continue
        color, marker, label = KERNEL_STYLE.get(kernel, ("0.5", "o", kernel))
        ax.plot([r["n_seq"] for r in sel], [r["flop_per_s"] / 1e12 for r in sel], marker=marker, color=color,
                label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("sequence length N")
    ax.set_ylabel("TFLOP/s (4 N² d per head, half causal)")
    ax.set_title(f"d = {head_dim}, {mask}")
    ax.set_ylim(bottom=0)
    return ax


def plot_softmax_bench(ax, rows: Sequence[Mapping], dtype: str, methods=("auto", "online", "three_pass"),
                       torch_label: str = "torch.softmax"):
    """Effective TB/s (2 n b counted) per shape for the copy, torch.softmax and the Triton methods."""
    shapes = sorted({(r["rows"], r["n"]) for r in rows if r.get("dtype") == dtype}, key=lambda s: s[1])
    names = ["copy", torch_label] + [f"triton {m}" for m in methods]
    width = 0.8 / len(names)
    for idx, name in enumerate(names):
        vals = []
        for rws, n in shapes:
            label = f"{name} {dtype} {rws}x{n}"
            match = [r for r in rows if r["label"] == label]
            vals.append(match[0]["bytes_per_s"] / 1e12 if match else np.nan)
        ax.bar(np.arange(len(shapes)) + (idx - (len(names) - 1) / 2) * width, vals, width,
               color=PALETTE[idx % 7], label=name.replace("triton ", "Triton "))
    ax.set_xticks(np.arange(len(shapes)), [f"{r}×{n}" for r, n in shapes])
    ax.set_xlabel("rows × row length")
    ax.set_ylabel("TB/s (read + write once)")
    ax.set_title(dtype)
    ax.set_ylim(0, 1.35 * max(r["bytes_per_s"] for r in rows) / 1e12)  # room for the legend
    ax.legend(fontsize=8, ncol=3, loc="upper center")
    return ax


#: Names of the softmax kernels in benchmark figures (label prefix in a recorded run -> legend text).
SOFTMAX_LABELS = {
    "torch.softmax": "torch.softmax",
    "triton fused": "fused (1 read)",
    "triton three_pass": "three-pass (3 reads)",
    "triton online": "online (2 reads)",
    "triton split b8192 w8": "split (1 read)",
}


def plot_softmax_fractions(ax, rows: Sequence[Mapping], dtype: str,
                           kernels: Sequence[str] = tuple(SOFTMAX_LABELS)):
    """Each softmax kernel's rate as a fraction of the same-run copy against the row length (log2 axis),
    for one dtype of a recorded run, with the bounds of kernels whose extra reads all go to HBM: 2/3 for
    two reads and a write, 1/2 for three (each credited with one read and one write)."""
    for idx, kernel in enumerate(kernels):
        pts = sorted((r["n"], r["ratio_to_reference"]) for r in rows
                     if r.get("dtype") == dtype and r.get("ratio_to_reference") is not None
                     and r["label"] == f"{kernel} {dtype} {r['rows']}x{r['n']}")
        if pts:
            ax.plot([n for n, _ in pts], [v for _, v in pts], marker="osD^v"[idx % 5],
                    color=PALETTE[idx % 7], label=SOFTMAX_LABELS.get(kernel, kernel))
    for bound, text in ((2 / 3, "2/3: two reads from HBM"), (1 / 2, "1/2: three reads from HBM")):
        ax.axhline(bound, color="0.5", linestyle=":", linewidth=1)
        ax.annotate(text, (0.0, bound), xycoords=("axes fraction", "data"), xytext=(4, 3),
                    textcoords="offset points", ha="left", fontsize=8, color="0.4")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("row length n (values)")
    ax.set_ylabel("rate / same-run copy")
    ax.set_ylim(0, 1.05)
    ax.set_title(dtype)
    return ax


def traffic_figure(comparison, n_values: Sequence[int], curves: Mapping[str, Sequence[float]]) -> Figure:
    """The explorer's bare figure: standard and FlashAttention traffic against N (log-log), the current N
    marked. ``curves`` maps a label to the traffic in MB at each of ``n_values``."""
    use_book_style()
    fig = Figure(figsize=(5.2, 3.1))
    ax = fig.add_subplot(1, 1, 1)
    fig.subplots_adjust(left=0.14, right=0.93, bottom=0.16, top=0.89)
    plot_traffic_vs_n(ax, n_values, curves, "HBM traffic per head (MB)", marker_n=comparison.n_seq)
    ax.minorticks_off()  # half the rendering time of a state on the static site
    ax.set_title(f"d = {comparison.head_dim}, B_r = {comparison.block_rows}, B_c = {comparison.block_cols}, "
                 f"{comparison.loop_order}", fontsize=10)
    return fig


__all__ = [
    "KERNEL_STYLE", "plot_attention_bench", "plot_block_grid", "plot_blockwise_wrong", "plot_ledger",
    "SOFTMAX_LABELS", "plot_online_trace", "plot_softmax_bench", "plot_softmax_fractions",
    "plot_traffic_vs_n", "traffic_figure",
]
