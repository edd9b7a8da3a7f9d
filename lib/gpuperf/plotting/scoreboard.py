"""The kernel scoreboard's figure (book/kernel-scoreboard.ipynb): every case's same-run ratio against its
target, one group per target of issue 15, from :func:`gpuperf.scoreboard.score_all`."""

from __future__ import annotations

import textwrap
from typing import Sequence

from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

from gpuperf.plotting.style import PALETTE, new_figure
from gpuperf.scoreboard import TargetScore

#: Where a group's cases spread around its x position (fraction of the distance between groups).
GROUP_WIDTH = 0.7
_MET, _MISSED = PALETTE[2], PALETTE[1]


def group_label(score: TargetScore, width: int = 16) -> str:
    """The x label of one target: the kernel over its reference, wrapped to ``width`` characters."""
    if not isinstance(score, TargetScore):
        raise ValueError(f"score must be a TargetScore, got {score!r}")
    kernel = textwrap.fill(score.target.kernel, width)
    return f"{kernel}\nvs {textwrap.fill(score.target.reference, width)}"


def plot_scoreboard(scores: Sequence[TargetScore], title: str = ""):
    """Each measured case's ratio to its same-run reference (log scale; circles met, triangles missed) with
    its target as a dashed segment over the group; under each group, how many of its cases have no rows
    in the recorded run; thin vertical lines between the rows of issue 15's table. Returns ``(fig, ax)``."""
    if isinstance(scores, (str, bytes)) or not scores or not all(isinstance(s, TargetScore) for s in scores):
        raise ValueError(f"scores must be a non-empty sequence of TargetScore, got {scores!r}")
    fig, ax = new_figure(width=11.0, height=5.2)
    ratios = [c.ratio for s in scores for c in s.cases if c.measured]
    targets = [s.target.min_ratio for s in scores]
    low = min(ratios + targets) / 1.25
    high = max(ratios + targets) * 1.15
    labelled = set()
    for x, s in enumerate(scores):
        measured = [c for c in s.cases if c.measured]
        step = GROUP_WIDTH / max(len(measured), 1)
        for i, c in enumerate(measured):
            xc = x - GROUP_WIDTH / 2 + step * (i + 0.5)
            kind = "met" if c.met else "missed"
            ax.plot(xc, c.ratio, "o" if c.met else "v", color=_MET if c.met else _MISSED, ms=5,
                    alpha=0.85, label=None if kind in labelled else f"case {kind}", ls="none")
            labelled.add(kind)
        ax.hlines(s.target.min_ratio, x - 0.45, x + 0.45, colors="black", linestyles="--", lw=1.3,
                  label=None if "target" in labelled else "target")
        labelled.add("target")
        if s.n_missing:
            ax.text(x, low * 1.04, f"{s.n_missing} of {len(s.cases)}\nnot measured", ha="center",
                    va="bottom", fontsize=7, color="0.35")
        if x and s.target.issue_row != scores[x - 1].target.issue_row:  # a new row of issue 15's table
            ax.axvline(x - 0.5, color="0.8", lw=0.8)
    ax.set_yscale("log")
    ax.set_ylim(low, high)
    ticks = [t for t in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.5, 2.0, 3.0, 4.0) if low <= t <= high]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_yticklabels([f"{t:g}" for t in ticks])
    ax.set_xticks(range(len(scores)), [group_label(s) for s in scores], fontsize=7.5)
    ax.set_xlim(-0.6, len(scores) - 0.4)
    ax.grid(axis="x", visible=False)
    ax.set_ylabel("kernel rate / same-run reference rate")
    ax.legend(loc="upper right", ncols=3)
    if title:
        ax.set_title(title)
    return fig, ax
