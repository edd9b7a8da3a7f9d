"""Round 17 of issue 30 (2026-12-06, ninth session): a fresh attacker against the graders with round 16 closed.
Its files are in tests/grading_attacks_round17 (README.md: each finding, REPORT.md: the attacker's report). The
files its findings were closed with are read by the _r17passes, _r17copies and _r17misc test files; this one
reads the rest: 16 (one query row more in the first of two passes), the tracer's crash on a fill over every
kernel write (excluded/08a), and the honest h01 (paired query blocks loaded first), h02 and h03."""

from __future__ import annotations

import pytest

from attack_files import attack_folder, find_attack, load_attack

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)


def _on_the_cpu() -> bool:
    import torch

    return not torch.cuda.is_available() or gpuperf.kernels.interpreter_enabled()


def test_two_passes_with_an_extra_query_row_are_two_passes():
    """16 (L5.causal): the first pass holds one query row more than the second, so that the two walks look like
    walks of two blocks of queries."""
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("round 17 was run under the interpreter")
    key, fn = load_attack(find_attack(17, "16"))
    report = grading.grade_report(key, fn, seed=11, stop_at_first_failure=True)
    assert report.results and not report.passed, "16 accepted by L5.causal (seed 11)"
    assert "reads K twice" in report.failures[0].message, report.failures[0].message


def test_a_fill_over_every_kernel_write_is_no_crash():
    """excluded/08a (L5.forward): a fill drops every write the tracer recorded; the next launch must not crash
    (it raised IndexError, blamed on the learner), and the two passes are refused for what they are."""
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("round 17 was run under the interpreter")
    path = next((attack_folder(17) / "excluded").glob("08a_*.py"))
    key, fn = load_attack(path)
    report = grading.grade_report(key, fn, seed=11, stop_at_first_failure=True)
    assert report.results and not report.passed
    message = report.failures[0].message
    assert "IndexError" not in message and "loads of k" in message, message


@pytest.mark.parametrize("tag", ["h01", "h02", "h03"])
def test_honest_files_of_round_17_pass(tag):
    """h01, h02 (L5.causal: each program takes query blocks i and n-1-i, loaded both first or in turn) and h03
    (L3.softmax with exp2): every case, seed 11."""
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("round 17 was run under the interpreter")
    key, fn = load_attack(find_attack(17, tag))
    report = grading.grade_report(key, fn, seed=11)
    assert report.passed, f"{tag} refused by {key}:\n{report.text()}"


def test_every_file_of_round_17_is_tested():
    """Every file of tests/grading_attacks_round17 is graded by a test of round 17 (this file, or the
    _r17passes, _r17copies and _r17misc files that closed its findings)."""
    import re
    from pathlib import Path

    tags = {path.name.split("_")[0] for path in attack_folder(17).glob("*.py")}
    text = "\n".join(p.read_text() for p in sorted(Path(__file__).parent.glob("test_grading_round17*.py")))
    named = set(re.findall(r'"((?:h)?\d\d)"', text))
    assert len(tags) == 19 and tags <= named, sorted(tags - named)
