"""Figures of chapter 08: tiles coloured by the wave that runs them, intensity against tile size, and the
recorded Triton-vs-cuBLAS sweep with the tile-and-wave model drawn over it."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from matplotlib.colors import ListedColormap

from gpuperf.plotting.style import PALETTE
from gpuperf.tiling import WaveQuantization


def plot_tile_grid(ax, wq: WaveQuantization, max_waves_shown: int = 6):
    """The output matrix as its grid of tiles (each tile outlined in white, the true m x n in thick black),
    each tile coloured by the wave it runs in when tiles are handed to SMs in row-major order; the unused part
    of edge tiles hatched."""
    tiles_m = -(-wq.m // wq.tile_m)
    tiles_n = -(-wq.n // wq.tile_n)
    wave = (np.arange(tiles_m * tiles_n) // wq.wave_size).reshape(tiles_m, tiles_n)
    colours = ListedColormap([PALETTE[i % 6] for i in range(max_waves_shown)])
    ax.imshow(np.minimum(wave, max_waves_shown - 1), cmap=colours, vmin=-0.5, vmax=max_waves_shown - 0.5,
              extent=(0, tiles_n * wq.tile_n, tiles_m * wq.tile_m, 0), alpha=0.75, interpolation="nearest")
    # Every tile's outline, so that a change of tile size shows even when all tiles run in one wave.
    width, height = tiles_n * wq.tile_n, tiles_m * wq.tile_m
    line_width = 0.8 if max(tiles_m, tiles_n) <= 40 else 0.4
    ax.vlines(np.arange(tiles_n + 1) * wq.tile_n, 0, height, colors="white", lw=line_width)
    ax.hlines(np.arange(tiles_m + 1) * wq.tile_m, 0, width, colors="white", lw=line_width)
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.add_patch(_rect(0, 0, wq.n, wq.m, fill=False, lw=2.0, ec="black"))
    if wq.n % wq.tile_n:
        ax.add_patch(_rect(wq.n, 0, tiles_n * wq.tile_n - wq.n, tiles_m * wq.tile_m, fill=False, hatch="//",
                           lw=0, ec="0.3"))
    if wq.m % wq.tile_m:
        ax.add_patch(_rect(0, wq.m, tiles_n * wq.tile_n, tiles_m * wq.tile_m - wq.m, fill=False, hatch="//",
                           lw=0, ec="0.3"))
    ax.set_xlabel("n (columns of C)")
    ax.set_ylabel("m (rows of C)")
    ax.grid(False)
    ax.set_title(f"{wq.tiles} tiles of {wq.tile_m}x{wq.tile_n}, {wq.wave_size} per wave: {wq.waves} wave"
                 f"{'s' if wq.waves != 1 else ''}, {wq.useful_fraction:.0%} useful"
                 + (f"\n(waves {max_waves_shown} and later share one colour)" if wq.waves > max_waves_shown else ""),
                 fontsize=10)
    return ax


def _rect(x, y, w, h, **kw):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), w, h, **kw)


def plot_intensity_vs_tile(ax, tiles: Sequence[int], intensities: Mapping[str, Sequence[float]],
                           ridge_flop_per_byte: float | None = None, ridge_label: str = "ridge point"):
    """Intensity (FLOP/byte) against square tile size t, one line per label; the device's ridge dashed."""
    for label, values in intensities.items():
        ax.plot(tiles, values, marker="o", label=label)
    if ridge_flop_per_byte is not None:
        ax.axhline(ridge_flop_per_byte, color="black", ls="--", lw=1.2, label=ridge_label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("square tile size t (elements per side)")
    ax.set_ylabel("intensity (FLOP/byte of HBM traffic)")
    ax.legend()
    return ax


def plot_matmul_sweep(ax, rows: Sequence[Mapping], x_key: str, *, dtype: str, group: str,
                      model: Mapping[str, Sequence[float]] | None = None, x_label: str = ""):
    """Recorded TFLOP/s of cuBLAS and Triton over one group of shapes (x = ``x_key``), and optional model
    lines ``{label: [TFLOP/s per x]}`` at the same x values."""
    sel = [r for r in rows if r.get("group") == group and r.get("dtype") == dtype]
    for kernel, marker in (("cublas", "s"), ("triton", "o")):
        pts = sorted((r[x_key], r["flop_per_s"] / 1e12) for r in sel if str(r["kernel"]).startswith(kernel))
        if pts:
            xs, ys = zip(*pts)
            ax.plot(xs, ys, marker=marker, ms=4, label=f"{kernel} (measured)")
    if model:
        xs = sorted({r[x_key] for r in sel})
        for label, ys in model.items():
            ax.plot(xs, ys, ls="--", lw=1.3, label=label)
    ax.set_xlabel(x_label or x_key)
    ax.set_ylabel(f"{dtype} TFLOP/s")
    ax.legend()
    return ax


def plot_wave_footprint(ax, tiles_m: int, tiles_n: int, concurrent: int, order: str = "row-major",
                        group_m: int = 8):
    """The grid of output tiles with the first wave of ``concurrent`` blocks (in ``order``) filled, and the
    rows of A and columns of B that wave must load marked along the edges."""
    from gpuperf.tiling import block_order

    wave = block_order(tiles_m, tiles_n, order, group_m)[:concurrent]
    grid = np.zeros((tiles_m, tiles_n))
    for i, j in wave:
        grid[i, j] = 1
    ax.imshow(grid, cmap=ListedColormap(["white", PALETTE[0]]), vmin=0, vmax=1, interpolation="nearest",
              extent=(0, tiles_n, tiles_m, 0))
    rows = sorted({i for i, _ in wave})
    cols = sorted({j for _, j in wave})
    for i in rows:
        ax.add_patch(_rect(-0.9, i, 0.6, 1, color=PALETTE[1], clip_on=False))
    for j in cols:
        ax.add_patch(_rect(j, -0.9, 1, 0.6, color=PALETTE[2], clip_on=False))
    ax.set_xlim(-1, tiles_n)
    ax.set_ylim(tiles_m, -1)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    ax.set_title(f"{order}: {len(rows)} A row panels + {len(cols)} B column panels", fontsize=10)
    return ax


def plot_interleaved_rounds(ax, rows: Sequence[Mapping], label: str):
    """One interleaved comparison (rows timed in rounds by the benchmark harness): the TFLOP/s of the row
    ``label`` and of its reference in each round (solid markers), with the SM clock during each timing on a
    second axis (hollow markers). Returns the clock axis."""
    by_label = {r["label"]: r for r in rows}
    row = by_label[label]
    pair = [by_label[row["reference"]], row]
    clock_ax = ax.twinx()
    for i, r in enumerate(pair):
        rounds = np.arange(1, len(r["time_s_rounds"]) + 1)
        colour = PALETTE[i]
        ax.plot(rounds, [r["flop"] / t / 1e12 for t in r["time_s_rounds"]], "o-", color=colour,
                label=r["kernel"])
        clocks = [np.nan if c is None else c for c in r["sm_clock_mhz_rounds"]]
        clock_ax.plot(rounds, clocks, "s--", color=colour, mfc="none", alpha=0.7, label=f"{r['kernel']} SM clock")
    ax.set_xlabel("round")
    ax.set_ylabel("TFLOP/s")
    clock_ax.set_ylabel("SM clock (MHz)")
    ax.set_xticks(np.arange(1, len(row["time_s_rounds"]) + 1))
    return clock_ax
