"""Round 19's F2, F3 and F5 (2026-12-06, eleventh session, "r19guard"; tests/grading_attacks_round19/REPORT.md).

- 48 (F2, L5.forward): the cell rebinds ``gpuperf.kernels.labs.l5.attention_forward`` to its own wrapper of
  the course's function before grading. Each solution module records its functions as its import ends
  (``gpuperf.labs._PINNED``), so the wrapper is not the solution, and a rebinding is reported as tampering
  whether the module was imported before the grader or after it (``watch._solutions_rebound``).
- 52 (F3, L2.add): ``sys.setprofile(hook)`` before grading; the hook rewrote the output when the grader's
  ``compare`` started. A grade now refuses to run while a trace or profile function (``sys``, ``threading``) or
  a ``sys.monitoring`` tool is set, checked when it starts and after each case.
- 56 (F5, L5.forward): 128 x 256 tiles for every head size and dtype; see the tests at the end.

The two tampering files run in a subprocess: each leaves the process patched (a rebound module, a profile hook).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import gpuperf.kernels  # noqa: F401, I001  (the interpreter switch first, before triton is imported)
import pytest

from attack_files import find_attack

ROOT = Path(__file__).resolve().parents[1]
SEED = 11

_GRADE_IN_A_FRESH_PROCESS = '''
import sys
import gpuperf.kernels  # noqa: F401
from attack_files import find_attack, load_attack
from gpuperf import grading
key, fn = load_attack(find_attack(19, sys.argv[1]))
report = grading.grade_report(key, fn, seed=11, stop_at_first_failure=True)
hooked = sys.getprofile() is not None
sys.setprofile(None)
print("PASSED" if report.passed else "REFUSED", "hooked" if hooked else "clean")
print(report.text())
'''


def _grade_in_subprocess(tag: str) -> str:
    path = os.pathsep.join(p for p in (str(ROOT / "lib"), str(ROOT / "tests"), os.environ.get("PYTHONPATH", ""))
                           if p)
    out = subprocess.run([sys.executable, "-c", _GRADE_IN_A_FRESH_PROCESS, tag], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": path}, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_no_trace_or_profile_function_is_set_in_the_test_run():
    """The test run itself (pytest, xdist's workers) sets no hook: otherwise every grade here would be refused."""
    from gpuperf import grading

    assert grading._hooks_set() == "", grading._hooks_set()


def test_48_a_solution_rebound_in_its_module_is_tampering():
    out = _grade_in_subprocess("48")
    assert out.startswith("REFUSED"), out
    assert "gpuperf.kernels.labs.l5.attention_forward" in out and "changed after gpuperf.grading" in out, out


def test_a_rebound_solution_is_not_the_solution(monkeypatch):
    """By identity with the function bound when the grader was imported: the wrapper is the reader's, and the
    course's solution stays what ``grading.solution`` hands the lab's later cells."""
    import gpuperf.kernels.labs.l5 as course
    from gpuperf import grading
    from gpuperf.grading import watch

    original = course.attention_forward

    def attention_forward(q, k, v, causal=False):
        return original(q, k, v, causal)

    monkeypatch.setattr(course, "attention_forward", attention_forward)
    ex = grading.EXERCISES["L5.forward"]
    assert not grading._is_solution(ex, attention_forward)
    assert grading._is_solution(ex, original)
    assert grading.solution("L5.forward") is original
    assert "gpuperf.kernels.labs.l5.attention_forward" in watch.changed_since_import()
    monkeypatch.undo()
    assert "gpuperf.kernels.labs.l5.attention_forward" not in watch.changed_since_import()


def test_a_solution_module_imported_after_the_grader_is_pinned_too(monkeypatch):
    """Importing ``gpuperf.grading`` imports no solution module (it stays light), so a lab may import the
    course's module after it: the module pins its own functions as its import ends, and a rebinding made
    afterwards is still seen."""
    import importlib

    from gpuperf import grading, labs
    from gpuperf.grading import watch

    course = importlib.import_module("gpuperf.kernels.labs.l4")
    ex = grading.EXERCISES["L4.matmul"]
    module, _, name = ex.solution.partition(":")
    assert module == course.__name__ and labs._PINNED[ex.solution] is getattr(course, name)

    def mine(*args, **kwargs):
        return None

    monkeypatch.setattr(course, name, mine)
    assert not grading._is_solution(ex, mine)
    assert f"{module}.{name}" in watch._solutions_rebound([])
    monkeypatch.undo()
    assert watch._solutions_rebound([]) == []


def test_52_a_profile_hook_set_before_grading_is_refused():
    out = _grade_in_subprocess("52")
    assert out.startswith("REFUSED hooked"), out
    assert "a trace or profile function is set (sys.setprofile)" in out, out


def _add_zeros(x, y, out):  # never launched: the grade is refused before any case
    return out


@pytest.mark.parametrize("how", ["sys.settrace", "sys.setprofile", "threading.settrace", "threading.setprofile"])
def test_a_trace_or_profile_function_refuses_the_grade(how):
    from gpuperf import grading

    def hook(*args):
        return None

    module, name = how.split(".")
    setter = getattr(sys if module == "sys" else threading, name)
    if module == "threading" and not hasattr(threading, "gettrace"):  # pragma: no cover - Python < 3.10
        pytest.skip("threading.gettrace/getprofile: Python 3.10+")
    try:
        setter(hook)
        report = grading.grade_report("L2.add", _add_zeros, seed=SEED, stop_at_first_failure=True)
        plain = grading.grade_report("L1.time", lambda *a, **k: 0.0, seed=SEED)
    finally:
        setter(None)
    for r in (report, plain):
        assert not r.passed
        assert f"a trace or profile function is set ({how})" in r.results[0].message, r.text()
    assert grading._hooks_set() == ""


def test_a_monitoring_tool_refuses_the_grade():
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        pytest.skip("sys.monitoring: Python 3.12+")
    from gpuperf import grading

    def on_start(code, offset):
        return None

    tool = next(t for t in range(6) if monitoring.get_tool(t) is None)
    monitoring.use_tool_id(tool, "a cell's tool")
    try:
        assert grading._hooks_set() == ""  # a tool with no callback runs nothing
        monitoring.register_callback(tool, monitoring.events.PY_START, on_start)
        report = grading.grade_report("L2.add", _add_zeros, seed=SEED, stop_at_first_failure=True)
    finally:
        monitoring.register_callback(tool, monitoring.events.PY_START, None)
        monitoring.free_tool_id(tool)
    assert not report.passed and "sys.monitoring tool" in report.results[0].message, report.text()


def test_hooks_of_debuggers_and_profilers_are_not_the_readers():
    """A debugger the notebook's host runs (debugpy is an installed package), cProfile (``%prun``) and pdb's
    own trace function are left alone; a hook of the reader's code is refused however it is wrapped: a
    ``functools.partial``, a callable object, a subclass of ``bdb.Bdb`` whose methods run inside."""
    import bdb
    import cProfile
    import functools
    import logging

    from gpuperf import grading

    def mine(*args):
        return None

    class Callable:
        def __call__(self, *args):
            return None

    class MyDebugger(bdb.Bdb):
        def user_line(self, frame):
            return None

    assert not grading._readers_hook(bdb.Bdb().trace_dispatch)
    assert grading._readers_hook(MyDebugger().trace_dispatch)
    assert grading._readers_hook(functools.partial(mine))
    assert grading._readers_hook(Callable())
    assert grading._readers_hook(logging.getLogger("a cell").info)  # stdlib code that calls handlers of a cell
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        found = grading._hooks_set()
    finally:
        profiler.disable()
    assert found == "", found


# ------------------------------------------------------------------------------------------------------------
# 56 (F5): tiles no GPU holds. Graded on the d = 128 fp32 case only (the one that refuses it; seconds each).
# ------------------------------------------------------------------------------------------------------------

def _d128(label: str) -> bool:
    return "d=128" in label


def test_56_tiles_that_need_more_shared_memory_than_any_gpu_are_refused():
    from attack_files import load_attack
    from gpuperf import grading

    key, fn = load_attack(find_attack(19, "56"))
    report = grading.grade_report(key, fn, seed=SEED, only=_d128, stop_at_first_failure=True)
    assert not report.passed, report.text()
    message = report.results[-1].message
    if "out of resource: shared memory" in message:  # on a GPU, Triton refuses to launch it first
        return
    assert "327,680 bytes" in message and "232,448 B" in message, report.text()
    assert "k_ptr 256 x 128 x 4 B = 131,072 B" in message, report.text()


def test_56_with_64_keys_a_block_fits_and_passes():
    """The same kernel with BLOCK_N = 64: 128 x 128 x 4 + 2 x 64 x 128 x 4 = 131,072 B, under the limit (the
    bound is what the products take, not the block sizes the rules allow)."""
    from attack_files import load_attack_variant
    from gpuperf import grading

    key, fn = load_attack_variant(find_attack(19, "56"), ("BM=128, BN=256", "BM=128, BN=64"))
    report = grading.grade_report(key, fn, seed=SEED, only=_d128)
    assert report.passed, report.text()


def test_the_course_solution_stays_under_the_shared_memory_bound():
    from gpuperf import grading

    for key in ("L4.matmul", "L5.forward"):
        report = grading.grade_report(key, grading.solution(key), seed=SEED,
                                      only=_d128 if key.startswith("L5") else None)
        assert report.passed, report.text()
