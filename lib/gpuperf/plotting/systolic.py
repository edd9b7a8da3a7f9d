"""Figures of chapter 05: the systolic array's wavefront and its utilisation."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from matplotlib.colors import ListedColormap

from gpuperf.plotting.style import PALETTE


def plot_wavefront(ax, frame: np.ndarray, m: int, *, title: str = ""):
    """One cycle of the array: each PE coloured by the row of A it works on (white: idle), labelled."""
    frame = np.asarray(frame)
    rows, cols = frame.shape
    colours = ["#ffffff"] + [PALETTE[i % 6] for i in range(m)]
    cmap = ListedColormap(colours)
    ax.imshow(frame + 1, cmap=cmap, vmin=-0.5, vmax=m + 0.5, aspect="equal")
    for r in range(rows):
        for c in range(cols):
            if frame[r, c] >= 0:
                ax.text(c, r, f"a{frame[r, c]}", ha="center", va="center", fontsize=8, color="white")
    ax.set_xticks(range(cols), [f"col {c}" for c in range(cols)], fontsize=8)
    ax.set_yticks(range(rows), [f"row {r}" for r in range(rows)], fontsize=8)
    ax.set_xticks(np.arange(-0.5, cols), minor=True)
    ax.set_yticks(np.arange(-0.5, rows), minor=True)
    ax.grid(which="minor", color="#999999", linewidth=0.8)
    ax.grid(which="major", visible=False)
    ax.tick_params(which="minor", length=0)
    ax.set_title(title, fontsize=10)
    return ax


def plot_utilization(ax, m_values: Sequence[int], utilizations: Sequence[float], label: str, color_index: int = 0):
    """PE utilisation against the streamed dimension m (log x)."""
    ax.plot(m_values, utilizations, "o-", color=PALETTE[color_index % len(PALETTE)], markersize=4, label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("rows of A streamed through one weight tile (m)")
    ax.set_ylabel("PE utilisation")
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower right")
    return ax


def plot_busy_cells(ax, frames: Sequence, cells: int):
    """Busy cells per cycle of a recorded run (``SystolicRun.frames``): weight load, fill, steady, drain."""
    busy = [0 if phase == "load weights" else int((np.asarray(grid) >= 0).sum()) for phase, _, grid in frames]
    load = sum(1 for phase, _, _ in frames if phase == "load weights")
    cycles = np.arange(len(busy))
    ax.bar(cycles[:load], [cells] * load, color="#bbbbbb", label="loading weights (no products)")
    ax.bar(cycles[load:], busy[load:], color=PALETTE[0], label="cells multiplying")
    ax.axhline(cells, color=PALETTE[6], linewidth=1, linestyle=":")
    ax.set_xlabel("cycle")
    ax.set_ylabel("cells busy")
    ax.set_ylim(0, cells * 1.25)
    ax.legend(loc="upper right")
    return ax


def plot_collective_times(ax, sizes_bytes: Sequence[float], series: dict, crossover_bytes: float | None = None):
    """Time of a collective against its buffer size (log-log), one line per ``{label: times_s}``; a dotted
    vertical line where the fixed cost equals the bandwidth term, if given."""
    for i, (label, times) in enumerate(series.items()):
        ax.plot(sizes_bytes, np.asarray(times) * 1e6, "-", color=PALETTE[i % len(PALETTE)], label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    if crossover_bytes is not None:
        ax.axvline(crossover_bytes, color="#777777", linestyle=":", linewidth=1)
        low, high = ax.get_ylim()
        ax.text(crossover_bytes * 1.3, (low * high) ** 0.5, "fixed cost = bandwidth term", fontsize=8,
                color="#555555")
    ax.set_xlabel("buffer size S (bytes)")
    ax.set_ylabel("time per call (µs)")
    ax.legend(loc="upper left", fontsize=8)
    return ax
