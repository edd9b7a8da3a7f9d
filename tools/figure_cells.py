"""List the figures of a notebook that lack a caption or alt text.

Every figure on the site carries a caption that says what to see in it and alt text that says what it shows
(a screen reader otherwise reads the image's file name aloud). MyST-NB takes both from the code cell's
metadata::

    "metadata": {"mystnb": {"figure": {"caption": "What to see: ...", "name": "fig-ch06-roofline"},
                            "image": {"alt": "A log-log roofline of the H200 with ..."}}}

(``figure.name`` is optional: a label to refer to the figure.) This tool executes each notebook given (in
its own folder, as the site does) and prints every code cell whose outputs hold an image but whose metadata
lacks either. ``tests/browser/test_site.py`` checks the same on the built site.

    .venv/bin/python tools/figure_cells.py book/06-roofline.ipynb [...]
"""

from __future__ import annotations

import sys
from pathlib import Path

IMAGE_TYPES = ("image/png", "image/jpeg", "image/svg+xml")


def figure_metadata_problems(metadata: dict) -> list[str]:
    """What the cell metadata lacks for a figure: a non-empty caption and alt text."""
    mystnb = metadata.get("mystnb", {})
    problems = []
    if not str(mystnb.get("figure", {}).get("caption", "")).strip():
        problems.append("no mystnb.figure.caption")
    alt = str(mystnb.get("image", {}).get("alt", "")).strip()
    if not alt:
        problems.append("no mystnb.image.alt")
    elif alt.lower().endswith((".png", ".svg", ".jpg")):
        problems.append("alt text is a file name")
    return problems


def cells_missing_figure_text(path: Path, timeout_s: int = 600) -> list[tuple[int, str, list[str]]]:
    """(cell index, cell id, problems) of every code cell of the executed notebook with an image output."""
    import os

    import nbformat
    from nbclient import NotebookClient

    # Under MPLBACKEND=Agg (as make test sets it) a kernel draws no inline figures and nothing would be found.
    os.environ.pop("MPLBACKEND", None)
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout_s, resources={"metadata": {"path": str(path.parent)}}).execute()
    out = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if any(t in o.get("data", {}) for o in cell.get("outputs", []) for t in IMAGE_TYPES):
            problems = figure_metadata_problems(cell.metadata)
            if problems:
                out.append((i, cell.get("id", ""), problems))
    return out


def main(argv: list[str]) -> int:
    bad = 0
    for name in argv:
        for i, cell_id, problems in cells_missing_figure_text(Path(name)):
            print(f"{name}: cell {i} (id {cell_id}): {', '.join(problems)}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
