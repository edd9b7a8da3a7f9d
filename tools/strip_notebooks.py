"""Clear outputs, execution counts and saved widget state from notebooks, in place.

Usage: python tools/strip_notebooks.py [NOTEBOOK ...]   (default: every book/*.ipynb and labs/*.ipynb)
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]


def strip(path: Path) -> bool:
    """Strip one notebook; return True if it changed."""
    before = path.read_text()
    nb = nbformat.reads(before, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)
    after = nbformat.writes(nb) + "\n"
    if after != before:
        path.write_text(after)
        return True
    return False


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted([*ROOT.glob("book/*.ipynb"), *ROOT.glob("labs/*.ipynb")])
    for path in paths:
        if strip(path):
            print(f"stripped {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
