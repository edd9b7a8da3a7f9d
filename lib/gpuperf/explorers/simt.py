"""The divergence explorer (chapter 03): pick a branch pattern, the probability a thread takes the branch
and the warp size, and see the first warps' timelines (lanes x issue slots) and the SIMT efficiency of
``common; if c: then else: orelse`` (:func:`gpuperf.simt.divergence_explorer_state`)."""

from __future__ import annotations

import html

from matplotlib.figure import Figure

from gpuperf import simt
from gpuperf.explorers.core import View, dropdown, explorer, slider
from gpuperf.plotting.simt import plot_warp_timeline
from gpuperf.plotting.style import use_book_style

PATTERNS = ("random", "alternating", "warp_alternating", "sorted", "uniform")
PROBABILITIES = (0.1, 0.5, 0.9)
WARP_SIZES = (8, 32)


def divergence_view(pattern: str, probability: float, warp_size: int) -> View:
    """One state: four warps' timelines and the run's efficiency."""
    state = simt.divergence_explorer_state(pattern, probability, warp_size)
    use_book_style()
    fig = Figure(figsize=(6.4, 3.4))
    fig.subplots_adjust(left=0.13, right=0.78, bottom=0.15, top=0.92)
    ax = fig.add_subplot()
    plot_warp_timeline(ax, state.timeline, warp_size)
    uses_p = pattern in ("random", "sorted")
    text = (
        f"<b>{html.escape(pattern.replace('_', ' '))}</b>"
        + (f", p = {probability:g}" if uses_p else "")
        + f", warps of {warp_size}: {state.divergent_warps} of {state.n_warps} warps diverge; SIMT efficiency "
        f"<b>{state.simt_efficiency:.1%}</b> (2 common + 4 then + 4 else instructions per thread path)."
    )
    if pattern == "random":
        text += (f" Closed form for the branch alone, many warps: "
                 f"{simt.expected_two_way_efficiency(probability, warp_size):.1%}.")
    return View(figure=fig, html=text)


def divergence_explorer(mode: str | None = None):
    """The divergence explorer (live widget in Jupyter, precomputed figure on the site)."""
    controls = [
        dropdown("pattern", PATTERNS, default="random"),
        slider("probability", PROBABILITIES, default=0.5, label="p (taken)"),
        slider("warp_size", WARP_SIZES, default=32, label="warp size"),
    ]
    return explorer(divergence_view, controls, title="Warp divergence", mode=mode)
