"""The kernel scoreboard's figure (book/kernel-scoreboard.ipynb): every case's same-run ratio against its
target, one row per target, from :func:`gpuperf.results.scoreboard.score_all`."""

from __future__ import annotations

from typing import Sequence

from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

from gpuperf.plotting.style import PALETTE, new_figure
from gpuperf.results.scoreboard import TargetScore

#: How far a row's cases spread around its y position (fraction of the distance between rows).
ROW_HEIGHT = 0.6
_MET, _MISSED = PALETTE[2], PALETTE[1]


def row_label(score: TargetScore) -> str:
    """The y label of one target: the kernel and its reference."""
    if not isinstance(score, TargetScore):
        raise ValueError(f"score must be a TargetScore, got {score!r}")
    return f"{score.target.kernel}\nvs {score.target.reference}"


def plot_scoreboard(scores: Sequence[TargetScore], title: str = "", split_at: int | None = None,
                    split_label: str = ""):
    """One row per target, top to bottom in the order given: each measured case's ratio to its same-run
    reference (log scale; circles met, triangles missed, spread vertically within the row), the target as a
    dashed segment, and at the right how many of the row's cases have no rows in the recorded run; thin
    lines separate targets stated for different kernels or shapes. ``split_at``: the index of the first of a
    later group of targets, drawn below a solid line with ``split_label`` at its left. Returns ``(fig, ax)``."""
    if isinstance(scores, (str, bytes)) or not scores or not all(isinstance(s, TargetScore) for s in scores):
        raise ValueError(f"scores must be a non-empty sequence of TargetScore, got {scores!r}")
    if split_at is not None and (isinstance(split_at, bool) or not isinstance(split_at, int)
                                 or not 0 < split_at < len(scores)):
        raise ValueError(f"split_at must be None or an index inside the scores, got {split_at!r}")
    fig, ax = new_figure(width=8.0, height=0.5 * len(scores) + 1.4)
    ratios = [c.ratio for s in scores for c in s.cases if c.measured]
    targets = [s.target.min_ratio for s in scores]
    low = min(ratios + targets) / 1.2
    high = max(ratios + targets) * 1.35
    labelled = set()
    for y, s in enumerate(scores):
        measured = [c for c in s.cases if c.measured]
        step = ROW_HEIGHT / max(len(measured), 1)
        for i, c in enumerate(measured):
            yc = y - ROW_HEIGHT / 2 + step * (i + 0.5)
            kind = "met" if c.met else "missed"
            ax.plot(c.ratio, yc, "o" if c.met else "v", color=_MET if c.met else _MISSED, ms=4.5,
                    alpha=0.85, ls="none", label=None if kind in labelled else f"case {kind}")
            labelled.add(kind)
        ax.vlines(s.target.min_ratio, y - 0.42, y + 0.42, colors="black", linestyles="--", lw=1.3,
                  label=None if "target" in labelled else "target")
        labelled.add("target")
        if s.n_missing:
            ax.text(high / 1.02, y, f"{s.n_missing} of {len(s.cases)} not measured", ha="right",
                    va="center", fontsize=7.5, color="0.35")
        if y and y == split_at:
            ax.axhline(y - 0.5, color="0.2", lw=1.2)
            if split_label:
                ax.text(low * 1.02, y - 0.53, split_label, ha="left", va="bottom", fontsize=7.5, color="0.2")
        elif y and s.target.issue_row != scores[y - 1].target.issue_row:  # a new kernel or set of shapes
            ax.axhline(y - 0.5, color="0.8", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlim(low, high)
    ticks = [t for t in (0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.5, 2.0, 3.0, 4.0) if low <= t <= high]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticklabels([f"{t:g}" for t in ticks])
    ax.set_yticks(range(len(scores)), [row_label(s) for s in scores], fontsize=8)
    ax.set_ylim(len(scores) - 0.5, -0.5)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("kernel rate / same-run reference rate (log scale)")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=3)
    if title:
        ax.set_title(title, pad=24)
    return fig, ax
