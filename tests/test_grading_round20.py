"""Round 20 of issue 30 (2026-12-06, twelfth session): a fresh attacker (no test read) against the graders at
93ff469. Its files are in tests/grading_attacks_round20 (README.md: each finding and what closed it; REPORT.md:
the attacker's report; excluded/: the wrong files the grader refused and the honest ones it accepted). The
findings are read by the round-20 test files; this one checks that every file is read, and that h04, refused by
a rule the exercise states, stays refused by it."""

from __future__ import annotations

import re
from pathlib import Path

import gpuperf.kernels  # noqa: F401  (the interpreter switch first)
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
    from gpuperf import grading

    key, fn = load_attack(find_attack(20, "h04"))
    report = grading.grade_report(key, fn, seed=11, stop_at_first_failure=True)
    assert not report.passed
    failed = next(r for r in report.results if not r.passed)
    assert "program(s) of your kernel" in failed.message, failed.message
