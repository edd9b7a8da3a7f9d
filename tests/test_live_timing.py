"""No notebook asserts a live timing (CONTRIBUTING.md, "Live measurements"): a reader's busy laptop, a loaded
CI machine or a GPU of another kind must never fail a cell. tests/live_timing.py follows which names of a
notebook hold a value computed from a timing (the package's measurement helpers, the clocks) and reports
every assert reading one, with a GPU and without.

To silence a finding that is truly load-independent (a count or a result computed next to a timing), end the
assert's line with ``# load-independent: <why>``; a timing itself is never load-independent.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

import live_timing as lt

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*ROOT.glob("book/*.ipynb"), *ROOT.glob("labs/*.ipynb")])


def _find(*cells: str) -> list[lt.Finding]:
    return lt.find_live_asserts([textwrap.dedent(c) for c in cells])


@pytest.mark.parametrize("cells", [
    # the two that failed in the wild: a doubling test on a CPU timing, a CPU fusion speed-up
    ["small = oh.doubling_ratio(lambda n: oh.python_call_time_s(lambda: f(n), 2000, 3, 'min'), 64)",
     "assert oh.regime_from_doubling(small) == 'overhead'"],
    ["""
     def best_time_s(fn):
         t0 = time.perf_counter(); fn(); return time.perf_counter() - t0
     speedup = {k: best_time_s(a) / best_time_s(b) for k, (a, b) in pairs.items()}
     speed_mem = speedup['mem']
     """, "assert speed_mem > 1.3"],
    # through a container, a loop, a measurement's rate, a lab helper, a %timeit
    ["rates = {}\nfor n in (1, 2):\n    rates[n] = measure.measure_copy_bytes_per_s(n_bytes=n).value",
     "assert rates[2] > rates[1]"],
    ["ts = []\nfor n in sizes:\n    ts.append(labs.median_time_s(f, env.on_gpu))\nworst = max(ts)", "assert worst < 1"],
    ["t = %timeit -o f()", "assert t.best < 1e-3"],
    # a live GPU run asserted outside the `if not live` guard
    ["""
     live = recorded.live_gpu_available()
     if live:
         run = {"results": run_cases("attention", cases(quick=True))}
     else:
         run = recorded.load_run("attention_h200")
     rows = run["results"]
     """, "assert rows[0]['time_s'] < 1e-3"],
])
def test_the_checker_finds_live_asserts(cells):
    found = _find(*cells)
    assert found and found[0].cell == len(cells) - 1, found


@pytest.mark.parametrize("cells", [
    # recorded data, read only where no GPU ran the benchmark live
    ["""
     live = recorded.live_gpu_available()
     if live:
         run = {"results": run_cases("attention", cases(quick=True))}
     else:
         run = recorded.load_run("attention_h200")
     rows = run["results"]
     """, "if not live:\n    assert round(rows[0]['time_s'] * 1e3, 1) == 39.6"],
    # a guard the world does not decide (a bf16-capable GPU): live only where it holds
    ["""
     mm_live = recorded.cuda_available() and dtype == "bf16"
     if mm_live:
         rows = run_cases("matmul", cases())
     else:
         rows = recorded.load_run("matmul_h200")["results"]
     """, "if not mm_live:\n    assert rows[0]['flop_per_s'] > 7e14"],
    # load-independent facts about a measurement, a name rebound from recorded data, an explicit marker
    ["m = measure.measure_copy_bytes_per_s(n_bytes=2**20, repeats=7)",
     "assert m.work == 2**21 and len(m.samples) == 7 and m.unit == 'bytes/s'"],
    ["t = python_call_time_s(f)\nprint(t)\nt = recorded.load_run('overhead_h200')['results'][0]['time_s']",
     "assert round(t * 1e6, 1) == 9.4"],
    ["run = {'provenance': recorded.provenance('live'), 'results': run_cases('x', cs)}",
     "assert run['provenance']['device']"],
    ["out, t = timed(f)\nt = python_call_time_s(f)", "assert t > 0  # load-independent: positive by construction"],
])
def test_the_checker_leaves_recorded_and_load_independent_asserts_alone(cells):
    assert _find(*cells) == []


def test_every_timing_helper_of_the_package_is_a_source():
    """A new measurement helper in lib/gpuperf is a source of live values: list it in live_timing.HELPERS."""
    missing = {name: where for name, where in lt.library_timing_functions(ROOT / "lib").items()
               if name not in lt.HELPERS | lt.RECORDED_UNLESS_LIVE}
    assert not missing, f"timing functions missing from tests/live_timing.py HELPERS: {missing}"


def _where(path: Path, finding: lt.Finding) -> str:
    cells = json.loads(path.read_text())["cells"]
    code = [i for i, c in enumerate(cells) if c["cell_type"] == "code"]
    return (f"code cell {code.index(finding.cell)} as nbval counts (id {cells[finding.cell].get('id')}), "
            f"line {finding.line}, {finding.world}: {finding.source}  [live: {', '.join(finding.names)}]")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT)) for p in NOTEBOOKS])
def test_no_notebook_asserts_a_live_timing(path):
    """Show a live measurement and compare it with the recorded run in words; assert recorded data or
    load-independent properties (counts, bytes, results) instead (CONTRIBUTING.md)."""
    found = lt.find_live_asserts(lt.notebook_cells(path))
    assert not found, (f"{path.name}: asserts on a live timing (a busy machine fails them):\n  "
                       + "\n  ".join(_where(path, f) for f in found))
