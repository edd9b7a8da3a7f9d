"""Round 18 of issue 30 (2026-12-06, tenth session): a fresh attacker (no test read) against the graders with
round 17 closed but for its causal passes. Its files are in tests/grading_attacks_round18 (README.md: each
finding; REPORT.md: the attacker's report). The review's files (hr1, hr2) and the findings closed are read by the
_review, _axes, _clone and _rows test files; this one reads the rest: 05 (closed by r19skip), 13, the honest h02, h04, h05, and
the coverage of the folder."""

from __future__ import annotations

import pytest

from attack_files import attack_folder, find_attack, load_attack

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)


def _on_the_cpu() -> bool:
    import torch

    return not torch.cuda.is_available() or gpuperf.kernels.interpreter_enabled()


def test_a_copy_of_k_scaled_by_a_data_factor_is_a_copy():
    """05 (L5.causal): no block skipped; the tiles past the diagonal read from K times (1 + 2^-20 + 0 * sum(k)).
    Closed by r19skip: memory a kernel filled with values computed lane by lane from K's rows is K for the causal
    skip checks (``exercises._derived_images``; its variants in ``test_grading_round19_skip.py``)."""
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("round 18 was run under the interpreter")
    key, fn = load_attack(find_attack(18, "05"))
    report = grading.grade_report(key, fn, seed=11, only=lambda label: "the key blocks it visits" in label)
    assert report.results and not report.passed, f"05 accepted by {key}:\n{report.text()}"
    message = report.failures[0].message
    assert "visited key blocks that no query of the program's block can see" in message, message


def test_one_program_copied_into_out_is_one_program():
    """13 (L2.add): one program loops over the whole vector into a buffer; ``out.copy_(buf)`` hands it over (closed
    with r18clone's copies: the programs that count are those that wrote the buffer torch copied)."""
    from gpuperf import grading

    key, fn = load_attack(find_attack(18, "13"))
    report = grading.grade_report(key, fn, seed=11, stop_at_first_failure=True)
    assert report.results and not report.passed, f"13 accepted by {key}:\n{report.text()}"
    message = report.failures[0].message
    # the interpreter's count of the programs that wrote out, or (compiled on a GPU) the grid's
    assert "program(s) of your kernel" in message or "your kernel ran 1 program(s)" in message, message


@pytest.mark.parametrize("tag", ["h02", "h04", "h05"])
def test_honest_files_of_round_18_pass(tag):
    """h02 (L5.causal: a persistent grid, heaviest blocks first), h04 (L3.online spread over a row's blocks, the
    row's statistics in a buffer of their own), h05 (L5.causal: own strides, exp2, a two-stage walk): every case,
    seed 11."""
    from gpuperf import grading

    key, fn = load_attack(find_attack(18, tag))
    report = grading.grade_report(key, fn, seed=11)
    assert report.passed, f"{tag} refused by {key}:\n{report.text()}"


def test_every_file_of_round_18_is_tested():
    """Every file of tests/grading_attacks_round18 is graded by a test of round 18 (this file, or the files
    that closed its findings)."""
    import re
    from pathlib import Path

    tags = {path.name.split("_")[0] for path in attack_folder(18).glob("*.py")}
    text = "\n".join(p.read_text() for p in sorted(Path(__file__).parent.glob("test_grading_round18*.py")))
    named = set(re.findall(r'"((?:hr?)?\d\d?)"', text))
    assert len(tags) == 17 and tags <= named, sorted(tags - named)
