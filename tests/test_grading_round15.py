"""Round 15 of issue 30 (2026-12-05, seventh session): a fresh attacker against the graders with round 14 closed.
Its files are in tests/grading_attacks_round15 (README.md: each finding). Closed so far: 21 (lanes at a head's
first and last rows beside a real block read as a wrapped tile) and the honest files of rows wrapped modulo N;
the quick open files (L2, L3) are strict expected failures, so that the fix that closes one shows here."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)


def _on_the_cpu() -> bool:
    import torch

    return not torch.cuda.is_available() or gpuperf.kernels.interpreter_enabled()


def _visits(key, fn, seed):
    from gpuperf import grading

    return grading.grade_report(key, fn, seed=seed, only=lambda label: "visits" in label)


@pytest.mark.parametrize("seed", [11, 12])
def test_lanes_at_both_ends_of_a_head_are_no_wrap(seed):
    if not _on_the_cpu():
        pytest.skip("the skip cases run under the interpreter")
    key, fn = load_attack(find_attack(15, "21"))
    report = _visits(key, fn, seed)
    assert report.results and not report.passed, f"21 accepted by {key} (seed {seed})"
    message = report.failures[0].message
    # the blocks past the diagonal, or (a load of q whose lanes at the head's first and last rows make three blocks,
    # no wrap) the block of queries it holds
    assert "no query of the program's block can see" in message or "a block of 256 queries" in message, message


@pytest.mark.parametrize("tag", ["h01", "h04", "h05"])
def test_honest_rows_wrapped_or_clamped_are_accepted(tag):
    if not _on_the_cpu():
        pytest.skip("the skip cases run under the interpreter")
    key, fn = load_attack(find_attack(15, tag))
    report = _visits(key, fn, 11)
    assert report.results and report.passed, f"{tag} refused by {key}:\n{report.text()}"


@pytest.mark.parametrize("tag", ["03", "05", "06"])
@pytest.mark.xfail(strict=True, reason="round 15: a wrong solution the grader still accepts (open)")
def test_open_wrong_file_of_round_15_is_refused(tag):
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("round 15 was run under the interpreter")
    key, fn = load_attack(find_attack(15, tag))
    report = grading.grade_report(key, fn, seed=11)
    assert not report.passed, f"{tag} accepted by {key} (seed 11)"
