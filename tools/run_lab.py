"""Run labs top to bottom in this Python process, without Jupyter: for a GPU machine that has torch and triton
but no nbval, ipykernel or IPython.

Usage (from the repository root, with lib/ importable):
    GPUPERF_LAB_SOLUTIONS=1 MPLBACKEND=Agg python tools/run_lab.py            # every labs/L*.ipynb
    GPUPERF_LAB_SOLUTIONS=1 MPLBACKEND=Agg python tools/run_lab.py labs/L2-first-triton-kernels.ipynb

Each lab runs in a fresh namespace, its code cells in order (the install cell skipped), printing what the
cells print. Exit status 1 if a cell raises or, with GPUPERF_LAB_SOLUTIONS=1, if a grader of the lab did not
print SOLUTION OK (its report for the course's solution). The switch is read when gpuperf.grading is
imported: set it before this script starts. Without IPython, a stand-in for ``IPython.display`` prints HTML as text.
"""

from __future__ import annotations

import contextlib
import io
import linecache
import json
import os
import re
import sys
import time
import traceback
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _display_module() -> str:
    """The module the labs' ``from IPython.display import ...`` should read: IPython's own when installed,
    else a stand-in (registered as ``_lab_display``, never as ``IPython``, whose presence matplotlib and tqdm
    take to mean a notebook) that prints HTML as text."""
    try:
        import IPython.display  # noqa: F401

        return "IPython.display"
    except ImportError:
        pass
    stand_in = types.ModuleType("_lab_display")

    class HTML:
        def __init__(self, data: str = ""):
            self.data = data

        def __repr__(self) -> str:
            return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", self.data))[:2000]

    def display(*objs, **_):
        for obj in objs:
            print(repr(obj))

    stand_in.HTML, stand_in.display = HTML, display
    sys.modules["_lab_display"] = stand_in
    return "_lab_display"


DISPLAY = "IPython.display"


class _Tee(io.TextIOBase):
    def __init__(self, *streams):
        self.streams = streams

    def write(self, text):
        for s in self.streams:
            s.write(text)
        return len(text)

    def flush(self):
        for s in self.streams:
            s.flush()


def run(path: Path) -> bool:
    nb = json.loads(path.read_text())
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"][1:]  # the install cell is skipped
    keys = [k for c in cells for k in re.findall(r'grading\.grade\("([^"]+)"', "".join(c["source"]))]
    namespace: dict = {"__name__": "__main__"}
    captured = io.StringIO()
    start = time.perf_counter()
    ok = True
    print(f"==> {path.name}", flush=True)
    with contextlib.redirect_stdout(_Tee(sys.stdout, captured)):
        for i, cell in enumerate(cells, 1):
            source = "".join(cell["source"]).replace("from IPython.display import",
                                                     f"from {DISPLAY} import")
            fname = f"{path.name}[code cell {i}]"
            # A compiled @triton.jit reads its function's source through inspect/linecache (the interpreter
            # does not): register the cell's text under the name the code is compiled with.
            linecache.cache[fname] = (len(source), None, source.splitlines(True), fname)
            try:
                exec(compile(source, fname, "exec"), namespace)
            except Exception:
                traceback.print_exc(file=sys.stdout)
                print(f"FAILED {path.name}: code cell {i} raised")
                ok = False
                break
    try:
        import matplotlib.pyplot as plt

        plt.close("all")
    except ImportError:
        pass
    text = captured.getvalue()
    if ok and os.environ.get("GPUPERF_LAB_SOLUTIONS", "").lower() in ("1", "true", "yes", "on"):
        passed = set(re.findall(r"^SOLUTION OK (\S+) ", text, re.M))  # the course's solution passed
        missing = [k for k in keys if k not in passed]
        if missing:
            print(f"FAILED {path.name}: graders without SOLUTION OK: {missing}")
            ok = False
    print(f"<== {path.name}: {'ok' if ok else 'FAILED'} in {time.perf_counter() - start:.1f} s", flush=True)
    return ok


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT / "lib"))
    os.environ.setdefault("MPLBACKEND", "Agg")
    global DISPLAY
    DISPLAY = _display_module()
    paths = [Path(a) for a in argv] or sorted((ROOT / "labs").glob("L*.ipynb"))
    results = {p.name: run(p) for p in paths}
    print("summary:", ", ".join(f"{name} {'ok' if ok else 'FAILED'}" for name, ok in results.items()))
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
