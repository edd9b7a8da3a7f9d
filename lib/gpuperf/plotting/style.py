"""The book's single figure style.

Figures keep an opaque white background so that they read the same in the site's light and dark
themes (a transparent figure puts black axis labels on a dark page).
"""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt

#: A colour-blind-safe palette (Okabe and Ito, 2008), in the order series are drawn.
PALETTE = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#000000",  # black
    "#F0E442",  # yellow
)

_RC = {
    "figure.figsize": (7.0, 4.2),
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "savefig.transparent": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "lines.linewidth": 2.0,
    "font.size": 10,
    "axes.prop_cycle": mpl.cycler(color=list(PALETTE)),
}


def use_book_style() -> None:
    """Apply the book's matplotlib style (call once, in a notebook's import cell)."""
    mpl.rcParams.update(_RC)


def new_figure(ncols: int = 1, nrows: int = 1, width: float | None = None, height: float | None = None):
    """Return ``(fig, axes)`` in the book style, sized for the page.

    ``width`` and ``height`` are in inches; by default each panel is about 4.6 x 3.6 inches.
    """
    if ncols < 1 or nrows < 1:
        raise ValueError(f"ncols and nrows must be >= 1, got ncols={ncols}, nrows={nrows}")
    use_book_style()
    w = width if width is not None else min(11.0, 4.6 * ncols + 0.4)
    h = height if height is not None else 3.6 * nrows + 0.4
    fig, axes = plt.subplots(nrows, ncols, figsize=(w, h), layout="constrained")
    return fig, axes
