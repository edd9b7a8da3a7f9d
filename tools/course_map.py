"""Draw the course map on the landing page (book/images/course-map.svg): parts, chapters, labs, and the
`gpuperf` modules each one uses and builds. The map follows the course plan (COURSE.md, beside the
repository); a module that is not in lib/gpuperf yet is drawn in italics and marked "planned".

    .venv/bin/python tools/course_map.py          # rewrites book/images/course-map.svg
    .venv/bin/python tools/course_map.py --words  # words of prose per chapter, against its budget

The word count is the course's one measure of a page's length (STYLE.md, "A chapter a newcomer finishes"):
words of letters (a run of letters with inner apostrophes or hyphens) in the Markdown cells, code, math
and numbers included as they stand. ``tests/test_repository.py`` holds each page to its budget.
"""

from __future__ import annotations

import json
import re
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


_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")

#: Words of prose a page may hold: every chapter 4,500; chapters 12 and 16 4,000; the scoreboard 1,500;
#: and per part, chapters 01-11 38,000 and chapters 12-16 21,000 (the 2026-12-04 issues).
WORD_BUDGETS = {"12": 4000, "16": 4000, "kernel-scoreboard": 1500, "appendix-case-studies": 6000}
CHAPTER_BUDGET = 4500
PART_BUDGETS = {("01", "11"): 38000, ("12", "16"): 21000}
#: A Markdown cell longer than this becomes a list, a table, or two cells.
CELL_BUDGET = 250


def cell_words(text: str) -> int:
    """Words of letters in one Markdown cell's text."""
    return len(_WORD.findall(text))


def prose_words(path: Path) -> list[int]:
    """Words of each Markdown cell of the notebook at `path`, in order."""
    cells = json.loads(Path(path).read_text())["cells"]
    return [cell_words("".join(c["source"])) for c in cells if c["cell_type"] == "markdown"]


def budget(path: Path) -> int | None:
    """The most words of prose the page at `path` may hold (None: no budget)."""
    stem = Path(path).stem
    for key, words in WORD_BUDGETS.items():
        if stem == key or stem.startswith(key + "-"):
            return words
    return CHAPTER_BUDGET if re.match(r"^\d\d-", stem) else None


def word_report(root: Path = ROOT) -> list[dict]:
    """One row per page of book/ and labs/: words, budget, longest cell and cells over CELL_BUDGET."""
    rows = []
    for path in sorted([*root.glob("book/*.ipynb"), *root.glob("labs/*.ipynb")]):
        cells = prose_words(path)
        rows.append({"page": str(path.relative_to(root)), "words": sum(cells), "budget": budget(path),
                     "longest_cell": max(cells, default=0),
                     "cells_over": sum(n > CELL_BUDGET for n in cells)})
    return rows


def part_words(rows: list[dict]) -> dict[tuple[str, str], int]:
    """Words of prose of each part in PART_BUDGETS (chapters first..last by number)."""
    out = {}
    for first, last in PART_BUDGETS:
        out[(first, last)] = sum(r["words"] for r in rows if (m := re.match(r"book/(\d\d)-", r["page"]))
                                 and first <= m[1] <= last)
    return out


def print_words() -> None:
    rows = word_report()
    print(f"{'page':48} {'words':>6} {'budget':>6} {'longest cell':>12} {'cells > 250':>11}")
    for r in rows:
        over = " OVER" if r["budget"] and r["words"] > r["budget"] else ""
        print(f"{r['page']:48} {r['words']:6d} {r['budget'] or '':>6} {r['longest_cell']:12d} "
              f"{r['cells_over']:11d}{over}")
    for (first, last), words in part_words(rows).items():
        print(f"chapters {first}-{last}: {words} words (budget {PART_BUDGETS[(first, last)]})")


def main() -> None:
    if "--words" in sys.argv[1:]:
        print_words()
        return
    OUT.parent.mkdir(parents=True, exist_ok=True)
    draw().savefig(OUT, format="svg", metadata={"Date": None, "Creator": None})
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
