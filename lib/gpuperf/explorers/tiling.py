"""The tile-size explorer (chapter 08): pick a tile (t_m, t_n, t_k), a matrix shape and a device, and see the
tiles coloured by wave, the useful fraction of the work, the intensity of one tile against the ridge point,
the shared memory one tile needs against the SM's, and the predicted time (:func:`gpuperf.tiling.tile_choice`).
"""

from __future__ import annotations

import html

from matplotlib.figure import Figure

from gpuperf import tiling
from gpuperf.explorers.core import View, dropdown, explorer, slider
from gpuperf.plotting.style import use_book_style
from gpuperf.plotting.tiling import plot_tile_grid
from gpuperf.roofline import format_duration

#: The shapes offered: (label, (m, n, k)).
SHAPES = (
    ("2304 x 1536 x 4096 (NVIDIA's example)", (2304, 1536, 4096)),
    ("2304 x 1544 x 4096 (8 more columns)", (2304, 1544, 4096)),
    ("16 x 4096 x 4096 (decode, batch 16)", (16, 4096, 4096)),
)
DEVICES = ("A100 80GB SXM", "H200 SXM")
TILE_SIDES = (64, 128, 256)
TILE_KS = (32, 64, 128)
STAGES = 3


def describe(choice: tiling.TileChoice) -> str:
    """The explorer's numbers as an HTML fragment."""
    q = choice.quantization
    fit = ("fits" if choice.fits else "<b>does not fit</b>")
    time = format_duration(q.predicted_time_s) if q.predicted_time_s else "-"
    return (
        f"<b>{html.escape(choice.device)}</b>, {q.m} x {q.n} x {q.k} {choice.dtype}, tile {q.tile_m} x {q.tile_n}"
        f" x {choice.tile_k}: {q.tiles} tiles, {q.sm_count} SMs x {q.blocks_per_sm} block(s) = {q.wave_size} per "
        f"wave, <b>{q.waves} wave(s)</b>; useful work {q.tile_useful_fraction:.1%} of the tiles x "
        f"{q.wave_useful_fraction:.1%} of the wave slots = <b>{q.useful_fraction:.1%}</b>.<br>"
        f"Intensity of one tile {choice.intensity_per_tile_flop_per_byte:.0f} FLOP/byte (ridge "
        f"{choice.ridge_point_flop_per_byte:.0f}); shared memory per tile ({STAGES} stages) "
        f"{choice.shared_memory_bytes / 1024:.0f} KiB of the SM's {choice.shared_memory_per_sm_bytes / 1024:.0f} "
        f"KiB: {fit}. Predicted time at the peak, every wave as long as a full one: <b>{time}</b>."
    )


def tile_view(tile_m: int, tile_n: int, tile_k: int, shape: tuple, device: str) -> View:
    """One state: the tile grid coloured by wave and the numbers."""
    m, n, k = shape
    choice = tiling.tile_choice(device, m, n, k, tile_m, tile_n, tile_k, "bf16", stages=STAGES)
    use_book_style()
    fig = Figure(figsize=(5.6, 3.4))
    fig.subplots_adjust(left=0.14, right=0.97, bottom=0.15, top=0.9)
    ax = fig.add_subplot()
    plot_tile_grid(ax, choice.quantization)
    if m < 64:  # a decode shape: stretch the few rows so that they can be seen
        ax.set_aspect("auto")
    return View(figure=fig, html=describe(choice))


def tile_explorer(device: str = "H200 SXM", mode: str | None = None):
    """The tile-size explorer (live widget in Jupyter, precomputed figure on the site)."""
    controls = [
        slider("tile_m", TILE_SIDES, default=128, label="tile m"),
        slider("tile_n", TILE_SIDES, default=128, label="tile n"),
        slider("tile_k", TILE_KS, default=64, label="tile k"),
        dropdown("shape", SHAPES, default=SHAPES[0][1]),
        dropdown("device", DEVICES, default=device),
    ]
    return explorer(tile_view, controls, title="Tile size, waves and shared memory", mode=mode)
