"""Chapter 04's explorers: occupancy (block size, registers, shared memory) and shared-memory banks
(access pattern, padding, element size). Models: :mod:`gpuperf.memory`."""

from __future__ import annotations

import html

from matplotlib.figure import Figure

from gpuperf.explorers.core import View, dropdown, explorer, slider
from gpuperf.memory import banks as bk
from gpuperf.memory.occupancy import LIMITS, sm_occupancy
from gpuperf.plotting.memory import plot_bank_access
from gpuperf.plotting.style import use_book_style

OCCUPANCY_DEVICES = ("T4", "A100 80GB SXM", "H200 SXM")
_LIMIT_NAMES = {"warps": "resident warps", "blocks": "resident blocks", "registers": "registers",
                "shared_memory": "shared memory"}


def occupancy_view(device: str, threads_per_block: int, registers_per_thread: int,
                   shared_memory_kib: int) -> View:
    """An HTML bar per limit (blocks that limit allows) and the resulting occupancy."""
    try:
        r = sm_occupancy(device, threads_per_block, registers_per_thread, shared_memory_kib * 1024)
    except ValueError as exc:
        return View(html=f"<p><b>Cannot launch</b> on the {html.escape(device)}: {html.escape(str(exc))}</p>")
    cap = max(1, max(min(v, 64) for v in r.blocks_by_limit.values()))
    rows = []
    for name in LIMITS:
        allowed = r.blocks_by_limit[name]
        width = 100 * min(allowed, cap) / cap
        colour = "#D55E00" if name in r.binding else "#0072B2"
        rows.append(
            f"<tr><td style='padding-right:8px'>{_LIMIT_NAMES[name]}</td>"
            f"<td style='width:260px'><div style='background:{colour};width:{width:.0f}%;height:12px'></div></td>"
            f"<td style='padding-left:8px'>{allowed} block{'s' if allowed != 1 else ''}"
            f"{' &larr; binds' if name in r.binding else ''}</td></tr>")
    summary = (f"<p><b>{r.blocks_per_sm}</b> block(s) of {threads_per_block} threads per SM = "
               f"{r.warps_per_sm} of {r.max_warps_per_sm} warps: occupancy <b>{r.occupancy:.0%}</b>. "
               f"Each block is allocated {r.registers_per_block_allocated} registers and "
               f"{r.shared_memory_per_block_allocated_bytes} bytes of shared memory (reservation and "
               f"rounding included).</p>")
    return View(html=summary + "<table>" + "".join(rows) + "</table>")


def occupancy_explorer(device: str = "H200 SXM"):
    """Sliders for block size, registers per thread and shared memory per block."""
    return explorer(occupancy_view, [
        dropdown("device", OCCUPANCY_DEVICES, default=device),
        slider("threads_per_block", [128, 256, 512, 1024], default=256, label="threads per block"),
        slider("registers_per_thread", [32, 64, 96, 128, 255], default=64, label="registers per thread"),
        slider("shared_memory_kib", [0, 16, 48, 100, 200], default=16, label="shared memory per block (KiB)"),
    ], title="Occupancy: which limit binds")


BANK_PATTERNS = {
    "column read (lane l reads row l)": "column",
    "row read (lane l reads element l)": "row",
    "16-byte row chunks (ldmatrix-like)": "chunks",
    "column read, XOR-swizzled rows": "swizzled_column",
}


#: Elements added to each row, in the slider's order. It starts at 0, the unpadded tile the chapter starts
#: from (32-way), so a reader moves right towards the paddings it discusses (1, 2, then the recipe's 8). The
#: short label leaves the slider most of its width (a long one squeezed it to a few pixels).
BANK_PADS = (0, 1, 2, 4, 8, 16)


def bank_access_for(pattern: str, pad: int, element: str) -> bk.BankAccess:
    """The access of one pattern on a 64-column tile of ``element`` ("fp16" or "fp32") padded by ``pad``."""
    eb = {"fp16": 2, "fp32": 4}[element]
    if pattern == "column":
        return bk.column_read(64, pad, eb)
    if pattern == "row":
        return bk.bank_access(bk.tile_offsets([0] * 32, range(32), 64 + pad, eb), eb)
    if pattern == "chunks":
        return bk.row_chunk_read(64, pad, eb)
    if pattern == "swizzled_column":
        if pad:
            raise ValueError(f"pad must be 0 for the swizzled layout (it replaces padding), got {pad}")
        return bk.column_read(64 // (eb // 2), 0, eb, swizzle=True)
    raise ValueError(f"pattern must be one of {sorted(BANK_PATTERNS.values())}, got {pattern!r}")


def bank_view(pattern: str, pad: int, element: str) -> View:
    """Bars of distinct words per bank, and the wavefront count."""
    try:
        access = bank_access_for(pattern, pad, element)
    except ValueError as exc:
        return View(html=f"<p><b>Not a valid layout</b>: {html.escape(str(exc))}</p>")
    use_book_style()
    fig = Figure(figsize=(6.4, 3.0))
    ax = fig.add_subplot()
    cols = 64 if element == "fp16" or pattern != "swizzled_column" else 32
    plot_bank_access(ax, access, title=f"{element} tile [64][{cols}+{pad}]: {access.wavefronts} wavefront(s), "
                                       f"{access.ideal_wavefronts} needed")
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.17, top=0.88)
    degree = access.conflict_degree
    text = ("conflict-free" if access.wavefronts == access.ideal_wavefronts
            else f"{degree}-way conflict: {access.wavefronts / access.ideal_wavefronts:g}x the passes needed")
    return View(figure=fig, html=f"<p>{html.escape(text)}; banks used by lane starts: "
                                 f"{len(set(access.bank_of_lane))} of 32.</p>")


def bank_explorer(pattern: str = "column"):
    """Pick an access pattern, a padding and an element size; see which banks each warp hits."""
    return explorer(bank_view, [
        dropdown("pattern", list(BANK_PATTERNS.items()), default=pattern),
        slider("pad", BANK_PADS, default=0, label="padding"),
        dropdown("element", ["fp16", "fp32"], default="fp16"),
    ], title="Shared-memory banks")
