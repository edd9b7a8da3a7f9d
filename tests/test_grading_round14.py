"""Round 14 of issue 30 (2026-12-05, sixth session): a fresh attacker, against the graders with round 13 closed.
Its honest files are tests here; its 16 wrong files, accepted when it stopped, are kept in
tests/grading_attacks_round14 (README: each finding) and are not graded by any test yet.

- h01: the course's backward kernels with the blocks of Triton's tutorial, 128 (a block of 128 on a head of
  256 makes 3/4 of the causal pairs with every query: the "more than half of a head" rule refused it; a program
  whose pairs fit in one block's strip is now judged only if it covers the whole head).
- h02, h03: round 13's h04 and h03 unchanged (the learner's own gather kernels): graded by
  tests/test_grading_round13_copies.py, not again here.
- h04: FlashAttention-2's one-kernel backward, dQ by atomic adds into fp32, then a cast."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 20261205

#: L6.backward's case that traces the blocks each program visits (where h01 was refused).
VISITS = "the blocks of queries and keys the backward visits"


def _on_the_cpu() -> bool:
    import torch

    return not torch.cuda.is_available()


@pytest.mark.parametrize("seed", [11, SEED])
def test_tutorial_blocks_of_128_pass_the_visits_case(seed):
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("the interpreter's case")
    key, fn = load_attack(find_attack(14, "h01"))
    report = grading.grade_report(key, fn, seed=seed, only=lambda label: VISITS in label)
    assert report.results and report.passed, f"h01 refused by {key} (seed {seed}):\n{report.text()}"


@pytest.mark.parametrize("tag", ["h01", "h04"])
def test_honest_file_of_round_14_passes(tag):
    from gpuperf import grading

    key, fn = load_attack(find_attack(14, tag))
    report = grading.grade_report(key, fn, seed=SEED)
    assert report.passed, f"{tag} refused by {key} (seed {SEED}):\n{report.text()}"


#: Closed: 07 and 08 (finding 6, masks) are refused since r14mask (tests/test_grading_round14_masks.py); a
#: view of x (or of C) in another dtype passed first and never read took x's lanes (09, 10) or C's stores (16);
#: lanes are now booked to the grader's tensor they lie in, counted in its elements, and the launches that wrote
#: C are found by address (tests/test_grading_round14_alias.py: 11, 12, 14, 15 and variants).
CLOSED_ALIAS = {"09": ("loaded", "2 times each"), "10": ("loaded", "3 times each"),
                "16": ("1 program(s) of your kernel matmul_kernel wrote", "elements of C")}


@pytest.mark.parametrize("tag", sorted(CLOSED_ALIAS))
def test_wrong_file_of_round_14_with_an_alias_is_refused(tag):
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("round 14 was run under the interpreter")
    key, fn = load_attack(find_attack(14, tag))
    report = grading.grade_report(key, fn, seed=11)
    assert not report.passed, f"{tag} accepted by {key} (seed 11)"
    message = report.failures[0].message
    assert all(w in message for w in CLOSED_ALIAS[tag]), f"{tag}: {message}"



#: Round 14's honest files that are round 13's, unchanged: graded in tests/test_grading_round13_copies.py.
AS_ROUND_13 = {"h02": "h04", "h03": "h03"}


def test_every_file_of_round_14_is_tested():
    """Every file of tests/grading_attacks_round14 is graded by a test of round 14 (this file, or the _alias,
    _bounce, _masks and _rows files that closed its finding), or is a file of round 13 graded there."""
    import re
    from pathlib import Path

    from attack_files import attack_folder

    tags = {path.name.split("_")[0] for path in attack_folder(14).glob("*.py")}
    text = "\n".join(p.read_text() for p in sorted(Path(__file__).parent.glob("test_grading_round14*.py")))
    named = set(re.findall(r'"((?:h)?\d\d)"', text))
    assert len(tags) == 24 and tags <= named, sorted(tags - named)
    for tag, r13 in AS_ROUND_13.items():
        body = find_attack(14, tag).read_text()
        assert find_attack(13, r13).name.split("_", 1)[1].split(".")[0] in body or "round 13" in body, tag
