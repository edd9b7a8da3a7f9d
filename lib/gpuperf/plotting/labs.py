"""Figures of the labs: the reader's results on their device's roofline beside a recorded H200 run."""

from __future__ import annotations

from typing import Sequence

from gpuperf.plotting.roofline import plot_roofline
from gpuperf.plotting.style import new_figure


def plot_yours_and_recorded(yours_accelerator, yours_dtype: str, yours_points: Sequence[tuple[str, float, float]],
                            yours_label: str, recorded_points: Sequence[tuple[str, float, float]],
                            recorded_label: str, recorded_dtype: str = "fp16", recorded_unit: str = "matrix",
                            intensity_range: tuple[float, float] = (1e-2, 1e4), yours_unit: str = "matrix"):
    """Two rooflines side by side: the reader's device with their points (left) and the H200 with the
    recorded points (right). Points are ``(label, intensity_flop_per_byte, flop_per_s)``; each panel's
    title names the device and versions. Returns the figure."""
    if not yours_label or not recorded_label:
        raise ValueError(f"both panels need a label, got {yours_label!r} and {recorded_label!r}")
    fig, (left, right) = new_figure(ncols=2, width=11.0, height=4.4)
    plot_roofline(left, yours_accelerator, yours_dtype, yours_unit, points=list(yours_points),
                  intensity_range=intensity_range, label=f"roof ({yours_dtype} {yours_unit})")
    left.set_title(f"yours: {yours_label}", fontsize=9)
    plot_roofline(right, "H200", recorded_dtype, recorded_unit, points=list(recorded_points),
                  intensity_range=intensity_range, label=f"H200 roof ({recorded_dtype} {recorded_unit})")
    right.set_title(f"recorded: {recorded_label}", fontsize=9)
    return fig
