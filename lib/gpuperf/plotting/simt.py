"""Figures of chapter 03: warp timelines, SIMT efficiency against branch probability, loop imbalance,
and the simulator against Nsight Compute."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from gpuperf.plotting.style import PALETTE
from gpuperf.simt import Segment


def timeline_image(timeline: Sequence[Segment], warp_size: int) -> tuple[np.ndarray, list[str]]:
    """Rasterise a timeline: rows are lanes of each warp (a blank row between warps), columns issue slots;
    0 = lane idle, k = lane active in a segment whose label is ``labels[k - 1]``."""
    labels: list[str] = []
    for seg in timeline:
        if seg.label not in labels:
            labels.append(seg.label)
    warps = sorted({seg.warp for seg in timeline})
    n_slots = max((seg.start_slot + seg.length for seg in timeline), default=1)
    image = np.zeros((len(warps) * (warp_size + 1), n_slots), dtype=int)
    row0 = {w: i * (warp_size + 1) for i, w in enumerate(warps)}
    for seg in timeline:
        lanes = np.flatnonzero(seg.mask)
        image[row0[seg.warp] + lanes, seg.start_slot:seg.start_slot + seg.length] = labels.index(seg.label) + 1
    return image, labels


def plot_warp_timeline(ax, timeline: Sequence[Segment], warp_size: int, title: str | None = None) -> None:
    """Each warp as a band of lanes (rows) over issue slots (columns); a coloured cell is a lane doing
    useful work in that slot, a white cell a lane masked off while its warp issues for other lanes."""
    image, labels = timeline_image(timeline, warp_size)
    cmap = ListedColormap(["#f2f2f2"] + [PALETTE[i % len(PALETTE)] for i in range(len(labels))])
    ax.imshow(image, aspect="auto", interpolation="nearest", cmap=cmap, vmin=0, vmax=len(labels))
    warps = sorted({seg.warp for seg in timeline})
    ax.set_yticks([i * (warp_size + 1) + warp_size / 2 for i in range(len(warps))],
                  [f"warp {w}" for w in warps])
    ax.set_xlabel("issue slot (one warp instruction each)")
    ax.set_ylabel("lanes (one row per thread)")
    ax.grid(False)
    handles = [Patch(color=cmap(i + 1), label=lab) for i, lab in enumerate(labels)]
    handles.append(Patch(color="#f2f2f2", label="masked off"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    if title:
        ax.set_title(title)


def plot_efficiency_vs_probability(ax, probabilities, simulated: Mapping[int, Sequence[float]],
                                   closed_form: Mapping[int, Sequence[float]]) -> None:
    """SIMT efficiency of a two-way branch taken with probability p: simulated points, closed-form lines,
    one colour per warp size."""
    for i, (w, eff) in enumerate(sorted(simulated.items())):
        color = PALETTE[i % len(PALETTE)]
        ax.plot(probabilities, closed_form[w], color=color, lw=1.5, label=f"warp of {w}: closed form")
        ax.plot(probabilities, eff, ls="none", marker="o", ms=4, color=color, label=f"warp of {w}: simulated")
    ax.set_xlabel("probability a thread takes the branch")
    ax.set_ylabel("SIMT efficiency")
    ax.set_ylim(0.45, 1.02)
    ax.legend(fontsize=8, loc="upper center", ncols=2)


def plot_loop_imbalance(ax, trips: np.ndarray, warp_size: int) -> None:
    """Per-warp longest trip count (what the warp pays) against mean trip count (the useful work), for
    threads in arrival order and sorted by trip count, over all full warps."""
    trips = np.asarray(trips)
    n = (trips.size // warp_size) * warp_size
    for i, (name, t) in enumerate((("arrival order", trips[:n]), ("sorted", np.sort(trips[:n])))):
        w = t.reshape(-1, warp_size)
        x = np.arange(w.shape[0])
        color = PALETTE[i]
        ax.plot(x, w.max(axis=1), color=color, lw=0.8, label=f"{name}: longest trip in the warp")
        ax.plot(x, w.mean(axis=1), color=color, lw=1.2, ls="--", label=f"{name}: mean trip")
    ax.set_yscale("log")
    ax.set_xlabel("warp")
    ax.set_ylabel("loop trips")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncols=2)


def plot_prediction_vs_measurement(ax, names: Sequence[str], predicted: Sequence[float],
                                   measured: Sequence[float], ylabel: str, warp_size: int = 32) -> None:
    """Grouped bars: the simulator's prediction and the GPU's counter for each case."""
    x = np.arange(len(names))
    ax.bar(x - 0.2, predicted, width=0.4, color=PALETTE[0], label="simulator (gpuperf.simt)")
    ax.bar(x + 0.2, measured, width=0.4, color=PALETTE[1], label="H200, Nsight Compute")
    ax.set_xticks(x, names, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.axhline(warp_size, color="0.5", lw=0.8, ls=":")
    ax.set_ylim(0, warp_size * 1.3)
    ax.legend(fontsize=8, loc="upper right", ncols=2)
