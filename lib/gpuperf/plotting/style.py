"""The book's single figure style.

Dark mode: figures keep an opaque white background, and the site shows them in dark mode inverted with
their hues kept (``filter: invert(0.88) hue-rotate(180deg)``, from ``tools/sphinxext/gpuperf_site.py``):
a dark panel with light axes and text, the Okabe-Ito colours still told apart. One PNG thus reads well
in the site's light and dark themes, and in Jupyter and Colab (where a white figure reads in either
theme). A transparent figure would put black axis labels on a dark page, and a figure drawn for one
theme would be wrong in the other. Check ``_build/screenshots/*-dark.jpg`` after ``make test``.
"""

from __future__ import annotations

import math
import numbers

import matplotlib as mpl
import matplotlib.pyplot as plt

#: A colour-blind-safe palette, in the order series are drawn: M. Okabe and K. Ito, "Color Universal Design
#: (CUD): how to make figures and presentations that are friendly to colorblind people", J*Fly, 2008.
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

    ``width`` and ``height`` are in inches; by default each panel is about 4.6 x 3.6 inches (the width is
    capped at 11 inches). Raises ``ValueError`` naming a bad argument.
    """
    for name, value in (("ncols", ncols), ("nrows", nrows)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    for name, value in (("width", width), ("height", height)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)
                                  or not math.isfinite(value) or value <= 0):
            raise ValueError(f"{name} must be a positive number of inches or None, got {value!r}")
    use_book_style()
    w = width if width is not None else min(11.0, 4.6 * ncols + 0.4)
    h = height if height is not None else 3.6 * nrows + 0.4
    fig, axes = plt.subplots(nrows, ncols, figsize=(w, h), layout="constrained")
    return fig, axes
