"""Chapter 05's explorer: the wavefront of a weight-stationary systolic array, cycle by cycle (a frame
slider over the simulator's recorded frames)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from gpuperf.explorers.core import View, explorer, slider
from gpuperf.plotting.style import use_book_style
from gpuperf.plotting.systolic import plot_wavefront
from gpuperf.systolic import simulate

ROWS = COLS = 4
M_ROWS = 6


def _frames():
    a = np.arange(M_ROWS * ROWS).reshape(M_ROWS, ROWS)
    b = np.ones((ROWS, COLS), dtype=int)
    return simulate(a, b, ROWS, COLS, record_frames=True).frames


def wavefront_view(frame: int) -> View:
    frames = _frames()
    if not 0 <= frame < len(frames):
        raise ValueError(f"frame must be in [0, {len(frames)}), got {frame!r}")
    phase, step, grid = frames[frame]
    use_book_style()
    fig = Figure(figsize=(4.2, 3.6))
    ax = fig.add_subplot()
    if phase == "load weights":
        title = f"cycle {frame}: loading weights, {step} of {ROWS} PE rows filled"
        shown = np.full((ROWS, COLS), -1)
    else:
        title = f"cycle {frame}: streaming, {int((grid >= 0).sum())} of {ROWS * COLS} PEs busy"
        shown = grid
    plot_wavefront(ax, shown, M_ROWS, title=title)
    if phase == "load weights":
        ax.axhspan(-0.5, step - 0.5, color="#999999", alpha=0.35)
    fig.subplots_adjust(left=0.16, right=0.98, bottom=0.08, top=0.9)
    return View(figure=fig, html=f"<p>{ROWS}x{COLS} array, A has {M_ROWS} rows: a<i>i</i> marks the PE working "
                                 f"on row <i>i</i> of A this cycle.</p>")


def wavefront_explorer():
    n = len(_frames())
    return explorer(wavefront_view, [slider("frame", list(range(n)), default=ROWS + 3, label="cycle")],
                    title="Systolic wavefront")
