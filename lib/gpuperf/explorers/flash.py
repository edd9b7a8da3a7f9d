"""The FlashAttention explorer: sequence length N, head dimension d, on-chip memory M, block sizes and loop
order -> HBM traffic of standard attention and of FlashAttention (one head, 16-bit values), the on-chip
footprint of one step, the passes over K/V and over Q/O, and what each keeps in HBM for the backward pass.

Model: :func:`gpuperf.attention.compare_traffic` (exact element counts, equal to the counters of the numpy
FlashAttention in :mod:`gpuperf.attention`; Dao et al. 2022, Algorithm 1 and Theorem 2). Built on
:mod:`gpuperf.explorers.core`: live widget in Jupyter and Colab, precomputed states on the static site.
"""

from __future__ import annotations

import html

from gpuperf import attention as at
from gpuperf import hardware
from gpuperf.explorers.core import View, dropdown, explorer, slider
from gpuperf.plotting.attention import traffic_figure

N_VALUES = (1024, 8192, 65536)
HEAD_DIMS = (64, 128)
#: On-chip memory M offered, in KiB: the most shared memory one thread block may use on a T4 and on an
#: H200 (gpuperf.hardware): the tiles of one program must fit there, so the course's M is per block.
SRAM_KIB = tuple(int(hardware.get_sm_limits(name).max_shared_memory_per_block_bytes) // 1024
                 for name in ("T4", "H200 SXM"))
BLOCKS = (("from M (Algorithm 1)", "auto"), ("128 × 128", "128x128"))  # 48 states in all
BYTES_PER_ELEMENT = 2
CURVE_N = (1024, 2048, 4096, 8192, 16384, 32768, 65536)


def _blocks(blocks: str):
    if blocks == "auto":
        return None, None
    if blocks not in {b for _, b in BLOCKS}:
        raise ValueError(f"blocks must be one of {[b for _, b in BLOCKS]}, got {blocks!r}")
    r, c = blocks.split("x")
    return int(r), int(c)


def flash_model(n_seq: int, head_dim: int, sram_kib: int, loop_order: str, blocks: str = "auto"):
    """The :class:`gpuperf.attention.TrafficComparison` of one explorer state (M = sram_kib KiB of
    16-bit elements)."""
    br, bc = _blocks(blocks)
    return at.compare_traffic(n_seq, head_dim, sram_kib * 1024 // BYTES_PER_ELEMENT, loop_order, br, bc)


def describe(c: at.TrafficComparison, sram_kib: int) -> str:
    """The explorer's table of numbers (HTML)."""
    b = BYTES_PER_ELEMENT
    mb = lambda elements: f"{elements * b / 1e6:,.1f} MB"  # noqa: E731
    fit = "fits" if c.fits_on_chip else "<b>does not fit</b>"
    rows = [
        ("block sizes B<sub>r</sub> × B<sub>c</sub>", f"{c.block_rows} × {c.block_cols}"),
        ("HBM traffic, standard (S and P written and read)", mb(c.standard.total)),
        ("HBM traffic, FlashAttention", mb(c.flash.total)),
        ("standard / Flash", f"{c.traffic_ratio:.1f}×"),
        ("passes over K and V", str(c.kv_passes)),
        ("passes over Q and O", str(c.qo_passes)),
        ("on-chip footprint of one step",
         f"{c.on_chip_elements * b / 1024:,.0f} KiB of {sram_kib} KiB: {fit}"),
        ("kept in HBM for the backward pass: standard (P)", mb(c.standard_stored_elements // 2)),
        ("kept in HBM for the backward pass: Flash (row statistics)",
         f"{c.flash_stored_elements * 4 / 1e3:,.1f} kB"),
    ]
    body = "".join(f"<tr><td>{k}</td><td style='text-align:right'>{v}</td></tr>" for k, v in rows)
    return (f"<p>N = {c.n_seq:,}, d = {c.head_dim}, M = {sram_kib} KiB, {html.escape(c.loop_order)}, "
            f"one head, 16-bit values</p><table>{body}</table>")


def flash_view(n_seq: int, head_dim: int, sram_kib: int, loop_order: str, blocks: str) -> View:
    """One state: the traffic-vs-N figure and the table of numbers."""
    c = flash_model(n_seq, head_dim, sram_kib, loop_order, blocks)
    curves = {"standard": [], "FlashAttention": []}
    for n in CURVE_N:
        cn = flash_model(n, head_dim, sram_kib, loop_order, blocks)
        curves["standard"].append(cn.standard.total * BYTES_PER_ELEMENT / 1e6)
        curves["FlashAttention"].append(cn.flash.total * BYTES_PER_ELEMENT / 1e6)
    return View(figure=traffic_figure(c, CURVE_N, curves), html=describe(c, sram_kib))


def flash_controls():
    return [
        slider("n_seq", N_VALUES, default=8192, label="N"),
        dropdown("head_dim", HEAD_DIMS, default=64, label="d"),
        slider("sram_kib", SRAM_KIB, default=SRAM_KIB[-1], label="M (KiB)"),
        dropdown("blocks", BLOCKS, default="auto", label="blocks"),
        dropdown("loop_order", [("K/V outer (FA1)", "kv_outer"), ("Q outer (FA2)", "q_outer")],
                 default="kv_outer", label="loop order"),
    ]


def flash_explorer(mode: str | None = None):
    """The FlashAttention explorer (see :mod:`gpuperf.explorers.core`)."""
    return explorer(flash_view, flash_controls(), title="FlashAttention explorer", mode=mode,
                    alt="HBM traffic of standard attention and FlashAttention against N")


__all__ = ["BLOCKS", "HEAD_DIMS", "N_VALUES", "SRAM_KIB", "describe", "flash_controls", "flash_explorer",
           "flash_model", "flash_view"]
