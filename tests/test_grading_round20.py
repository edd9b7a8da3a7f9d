"""Round 20 of issue 30 (2026-12-06, twelfth session): a fresh attacker (no test read) against the graders at
93ff469. Its files are in tests/grading_attacks_round20 (README.md: each finding and what closed it; REPORT.md:
the attacker's report; excluded/: the wrong files the grader refused and the honest ones it accepted). The
findings are read by the round-20 test files; this one checks that every file is read, and that h04, refused by
a rule the exercise states, stays refused by it."""

from __future__ import annotations

import re
from pathlib import Path

import gpuperf.kernels  # noqa: F401  (the interpreter switch first)
import pytest
from attack_files import attack_folder, find_attack, load_attack


def test_every_file_of_round_20_is_tested():
    """Every file of tests/grading_attacks_round20 (not excluded/) is graded by a test of round 20."""
    tags = {path.name.split("_")[0] for path in attack_folder(20).glob("*.py")}
    text = "\n".join(p.read_text() for p in sorted(Path(__file__).parent.glob("test_grading_round20*.py")))
    named = set(re.findall(r'"(h?\d\d?)"', text))
    assert len(tags) == 5 and tags <= named, sorted(tags - named)


def test_a_persistent_matmul_with_fewer_programs_than_multiprocessors_is_refused():
    """"h04": a persistent L4.matmul of 4 programs on the CPU. The exercise asks for a program per tile of C, or a
    persistent grid of at least one program per multiprocessor; the same kernel with 132 programs is accepted
    (excluded/h17)."""
    import torch

    from gpuperf import grading

    if torch.cuda.is_available():
        pytest.skip("on a GPU the file launches min(tiles, 132) programs, which the exercise accepts")
    key, fn = load_attack(find_attack(20, "h04"))
    report = grading.grade_report(key, fn, seed=11, stop_at_first_failure=True)
    assert not report.passed
    failed = next(r for r in report.results if not r.passed)
    assert "program(s) of your kernel" in failed.message, failed.message


def test_a_c_extensions_bound_method_is_no_readers_hook_and_a_class_of_a_module_without_a_file_is():
    """Found on the H100 (Python 3.12, 2026-12-06): there cProfile (``%prun``) registers bound methods of
    ``_lsprof.Profiler``, a class of a C extension in the standard library's lib-dynload, as its
    ``sys.monitoring`` callbacks, and the grader called them the reader's, so a profiled grade was refused
    (``test_hooks_of_debuggers_and_profilers_are_not_the_readers``). A C extension's class runs no Python; a class
    of a module without a file (a notebook's ``__main__``) is the reader's."""
    import bdb
    import cProfile
    import sys
    import types

    from gpuperf import grading

    assert not grading._readers_hook(cProfile.Profile().enable)
    cell = types.ModuleType("a_notebook_cell_module")  # no __file__, as a notebook's __main__
    exec("import bdb, cProfile\nclass D(bdb.Bdb):\n    pass\nclass P(cProfile.Profile):\n    pass\n", cell.__dict__)
    sys.modules[cell.__name__] = cell
    try:
        assert grading._readers_hook(cell.D().trace_dispatch)
        assert grading._readers_hook(cell.P().enable)
        assert not grading._readers_hook(bdb.Bdb().trace_dispatch)
    finally:
        del sys.modules[cell.__name__]
