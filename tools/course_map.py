"""Draw the course map on the landing page (book/images/course-map.svg): parts, chapters, labs, and the
`gpuperf` modules each one uses and builds. The map follows the course plan (COURSE.md, beside the
repository); a module that is not in lib/gpuperf yet is drawn in italics and marked "planned".

    .venv/bin/python tools/course_map.py          # rewrites book/images/course-map.svg
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))
from gpuperf.plotting.style import PALETTE, use_book_style  # noqa: E402

OUT = ROOT / "book" / "images" / "course-map.svg"

#: (part, colour, [(number, title, modules, explorer)])
PARTS = [
    ("I  Why GPUs", PALETTE[0], [
        ("01", "The end of free speed", ["scaling"], ""),
        ("02", "Latency and throughput", ["littles_law"], "bytes in flight"),
        ("03", "SIMT", ["simt"], "divergence"),
    ]),
    ("II  Inside the chip", PALETTE[2], [
        ("04", "The memory hierarchy", ["memory"], "occupancy, banks"),
        ("05", "TPUs and systolic arrays", ["systolic"], "wavefront"),
    ]),
    ("III  Performance models", PALETTE[1], [
        ("06", "Roofline", ["roofline", "hardware"], "roofline"),
        ("07", "Compute, memory, overhead", ["overhead"], ""),
        ("08", "Tiling and shapes", ["tiling", "kernels.matmul"], "tile size"),
        ("09", "Fusion and recomputation", ["kernels.elementwise", "kernels.norm", "recompute"], ""),
        ("10", "The Transformer ledger", ["ledger"], "ledger"),
        ("11", "Number formats", ["formats", "mx", "accumulation"], "bits"),
    ]),
    ("IV  FlashAttention", PALETTE[3], [
        ("12", "Why attention is slow", ["attention"], ""),
        ("13", "Online softmax", ["attention", "kernels.softmax"], ""),
        ("14", "The forward pass", ["kernels.flash_attention"], "blocks vs SRAM"),
        ("15", "Backward pass, IO complexity", ["kernels.flash_attention_bwd"], ""),
        ("16", "In practice", ["decoding"], ""),
    ]),
    ("Labs", PALETTE[4], [
        ("L1", "Measure your roofline", ["measure"], ""),
        ("L2", "First Triton kernels", ["kernels.elementwise"], ""),
        ("L3", "Softmax three ways", ["kernels.softmax"], ""),
        ("L4", "Tiled matmul", ["kernels.matmul"], ""),
        ("L5", "FlashAttention forward", ["kernels.flash_attention"], ""),
        ("L6", "FlashAttention backward", ["kernels.flash_attention_bwd"], ""),
    ]),
]


def module_exists(name: str) -> bool:
    base = ROOT / "lib" / "gpuperf" / Path(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def draw() -> Figure:
    import textwrap

    use_book_style()
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: small and crisp
    matplotlib.rcParams["svg.hashsalt"] = "course-map"  # stable ids: the file changes only with the map
    width, row_h, left = 11.0, 1.32, 1.38
    fig = Figure(figsize=(width, row_h * len(PARTS) + 0.15))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(row_h * len(PARTS) + 0.15, 0)
    ax.axis("off")
    box_w = (width - left - 0.05) / 6
    for r, (part, colour, chapters) in enumerate(PARTS):
        y = 0.08 + r * row_h
        numeral, _, name = part.partition("  ")
        label = numeral if not name else f"{numeral}\n" + "\n".join(textwrap.wrap(name, 12, break_long_words=False))
        ax.text(0.1, y + row_h / 2 - 0.05, label, ha="left", va="center", fontsize=10, fontweight="bold",
                color=colour, linespacing=1.2)
        for c, (number, title, modules, explorer) in enumerate(chapters):
            x = left + c * box_w
            ax.add_patch(FancyBboxPatch((x + 0.04, y + 0.04), box_w - 0.08, row_h - 0.14,
                                        boxstyle="round,pad=0,rounding_size=0.08", linewidth=1.4,
                                        edgecolor=colour, facecolor="white"))
            ax.text(x + 0.12, y + 0.12, number, fontsize=9.6, fontweight="bold", va="top", color=colour)
            ax.text(x + 0.42, y + 0.12, "\n".join(textwrap.wrap(title, 15)), fontsize=8.6, fontweight="bold",
                    va="top", color="black", linespacing=1.1)
            planned = [m for m in modules if not module_exists(m)]
            names = [m.replace("kernels.", "kernels.\n  ") if len(m) > 20 else m for m in modules]
            ax.text(x + 0.12, y + 0.58, "\n".join(names) + ("\n(planned)" if planned else ""),
                    fontsize=7.0, family="monospace", va="top", color="#333333", linespacing=1.1,
                    style="italic" if planned else "normal")
            if explorer:
                ax.text(x + box_w - 0.12, y + row_h - 0.16, f"explorer: {explorer}", fontsize=6.8, ha="right",
                        va="bottom", color=colour)
    return fig


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    draw().savefig(OUT, format="svg", metadata={"Date": None, "Creator": None})
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
