"""Round 10 of issue 30 (2026-12-05), r10a's part: a fresh attacker found that no CPU case had more work than a
persistent grid has programs (one per multiprocessor, the H200's 132), nor more tile rows of C than a group of 8.
A persistent loop that takes its item from the program id instead of the loop's variable (63-66) and a grouped
order with the first tile row or the last group's height wrong (55, 56) passed. Closed by one case per exercise
with more items than 132 (L4.matmul's also with ten rows of tiles: a group of 8 and a short one). The files, in
tests/grading_attacks_round10 (README.md there says what each does), are graded on that case alone."""

from __future__ import annotations

import pytest

from attack_files import attack_folder, find_attack, load_attack

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

ATTACKS_10 = attack_folder(10)
SEED = 20261205

#: What the label of each exercise's case with more items than programs says.
MANY_ITEMS = "than the GPU has multiprocessors"

PERSISTENT_WRONG = ["63", "64", "65", "66"]
GROUPED_WRONG = ["55", "56"]
PERSISTENT_HONEST = ["h04", "h07", "h37", "h38", "h39"]


def _grade_on_the_many_items_case(tag):
    import torch

    if torch.cuda.is_available():
        pytest.skip("the case with more items than programs is the CPU's: a GPU's ordinary cases are larger")
    key, fn = load_attack(find_attack(10, tag))
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=SEED, only=lambda label: MANY_ITEMS in label)
    assert report.results, f"{tag} ({key}): no case says {MANY_ITEMS!r}"
    return key, report


@pytest.mark.parametrize("tag", PERSISTENT_WRONG)
def test_persistent_loop_that_never_advances_is_refused(tag):
    """Each program of a persistent grid redoes its first item: the items past the 132 programs stay NaN, and the
    message says to take each pass's item from the loop's variable."""
    key, report = _grade_on_the_many_items_case(tag)
    assert not report.passed, f"{tag} accepted by {key} (seed {SEED}):\n{report.text()}"
    message = report.failures[0].message
    assert "loop's variable" in message and "program id" in message, f"{tag} ({key}): {message}"


@pytest.mark.parametrize("tag", GROUPED_WRONG)
def test_grouped_order_wrong_past_the_first_group_is_refused(tag):
    """55 puts the second group's tiles on the wrong rows (two programs store one tile: a race), 56 maps the last,
    short group's programs past M (tiles left unwritten, told to check the group's arithmetic)."""
    key, report = _grade_on_the_many_items_case(tag)
    assert not report.passed, f"{tag} accepted by {key} (seed {SEED}):\n{report.text()}"
    message = report.failures[0].message
    if tag == "56":
        assert "grouped order's arithmetic" in message, message
    else:
        assert "race" in message, message


def test_row_major_matmul_passes_the_grouped_case():
    """22 has no grouping (``pid_m = pid // tiles_n``): the row-major order the lab's graded exercise asks for
    first (the grouped order is its Exercise 4, timed, not graded). Its values are right: accepted."""
    key, report = _grade_on_the_many_items_case("22")
    assert report.passed, report.text()


@pytest.mark.parametrize("tag", PERSISTENT_HONEST)
def test_honest_persistent_file_of_round_10_passes(tag):
    """The attacker's honest persistent kernels (and h07, an exp2 softmax a first version of the L3 case, with
    the usual spread of values over 139 rows, refused by a few ulps near fp32's smallest normal)."""
    key, report = _grade_on_the_many_items_case(tag)
    assert report.passed, f"{tag} refused by {key} (seed {SEED}):\n{report.text()}"


def test_each_persistent_exercise_has_more_items_than_programs():
    """The case exists on the CPU for each exercise a persistent kernel can solve, sizes from the seed."""
    import re

    import torch

    from gpuperf import grading

    for key in ("L2.add", "L3.softmax", "L3.online", "L4.matmul", "L5.forward"):
        for seed in (1, SEED):
            cases = grading.EXERCISES[key].cases(torch.Generator().manual_seed(seed), "cpu")
            labels = [case.label for case in cases if MANY_ITEMS in case.label]
            assert len(labels) == 1, (key, seed, labels)
            if key == "L4.matmul":
                m, n = map(int, re.match(r"A (\d+)x\d+ @ B \d+x(\d+)", labels[0]).groups())
                assert -(-m // 32) > 8 and -(-m // 32) % 8 and -(-m // 32) * -(-n // 32) > 132, labels[0]
