"""Round 21 (thirteenth session): 23 wrong files set a trace or profile function of their own before the grade,
disguised so that ``_readers_hook`` took it for a debugger's or a profiler's (a method-wrapper ``f.__call__``, a
``functools.partial``, an ``lru_cache`` or ``torch.no_grad()`` wrapper, callbacks put on a ``bdb.Bdb`` or
``profile.Profile`` instance), and the hook copied the expected output over the reader's when the comparison
started. Now ``_readers_hook`` follows ``__wrapped__``, a method's object and that object's own callbacks, and a
grade runs with every trace and profile function off (``_trace_and_profile_off``), so a hook it still misses
cannot run inside the grader."""
from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

import gpuperf.kernels  # noqa: F401, I001  (the interpreter switch first, before triton is imported)

from attack_files import load_attack

FOLDER = Path(__file__).resolve().parent / "grading_attacks_round21"
HOOK_FILES = sorted(p for p in FOLDER.glob("[0-9]*.py") if "hook" in p.stem or p.stem[:2] in ("04", "05"))


@pytest.fixture
def hooks_put_back():
    saved = (sys.gettrace(), sys.getprofile(), threading.gettrace(), threading.getprofile())
    yield
    sys.settrace(saved[0])
    sys.setprofile(saved[1])
    threading.settrace(saved[2])
    threading.setprofile(saved[3])


def test_every_hook_file_is_here():
    assert len(HOOK_FILES) == 23, [p.name for p in HOOK_FILES]


@pytest.mark.parametrize("path", HOOK_FILES, ids=lambda p: p.stem)
def test_a_disguised_hook_of_the_readers_is_refused_before_any_case(path, hooks_put_back):
    from gpuperf import grading

    key, fn = load_attack(path)
    report = grading.grade_report(key, fn, seed=11, stop_at_first_failure=True)
    assert not report.passed, report.text()
    assert report.results[0].case == "before any case", report.text()
    assert "a trace or profile function is set" in report.results[0].message, report.text()


def test_debuggers_and_profilers_of_the_standard_library_are_not_the_readers():
    import bdb
    import cProfile
    import pdb
    import profile

    from gpuperf import grading

    for hook in (pdb.Pdb().trace_dispatch, bdb.Bdb().trace_dispatch, profile.Profile().dispatcher,
                 cProfile.Profile()):
        assert not grading._readers_hook(hook), hook


def test_the_readers_callbacks_on_a_debuggers_instance_are_the_readers():
    import bdb
    import functools
    import profile

    from gpuperf import grading

    def mine(*args):
        return None

    debugger = bdb.Bdb()
    debugger.dispatch_line = mine
    profiler = profile.Profile()
    profiler.dispatch = {"call": mine}
    for hook in (mine.__call__, functools.partial(mine.__call__), functools.lru_cache(maxsize=0)(mine),
                 debugger.trace_dispatch, profiler.dispatcher):
        assert grading._readers_hook(hook), hook


def test_a_grade_runs_with_trace_and_profile_functions_off(hooks_put_back):
    from gpuperf import grading

    def tracer(frame, event, arg):
        return None

    sys.setprofile(tracer)
    with grading._trace_and_profile_off():
        assert sys.gettrace() is None and sys.getprofile() is None
        assert threading.gettrace() is None and threading.getprofile() is None
    assert sys.getprofile() is tracer
