"""Round 11 of issue 30 (2026-12-05), r11skip's part: findings 1 and 2 of tests/grading_attacks_round11/REPORT.md.
The causal skip checks compared each visited block with one row per program (the last query it ever loaded, or
its first key), so a walk past the diagonal with every lane masked off went unseen where the program had loaded
other rows before or after: a persistent forward whose loop bound comes from its last block of queries (01), a
fused backward whose dQ loop masks instead of stopping after its dK, dV walk (02). Closed by comparing each
visited block with the block of the other tensor the program worked on then (``_visit_pairs``). The files are
graded on the skip case alone."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 20261205

#: The case of each exercise that counts the blocks a causal kernel visits.
SKIP_CASES = {"L5.causal": "the key blocks it visits",
              "L6.backward": "the blocks of queries and keys the backward visits"}


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


def _grade_on_the_skip_case(key, fn):
    if not _interpreted_here():
        pytest.skip("the blocks a kernel visits are counted by the interpreter")
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=SEED, only=lambda label: SKIP_CASES[key] in label)
    assert report.results, f"{key}: no case says {SKIP_CASES[key]!r}"
    return report


def _refused_for_the_visits(tag):
    key, fn = load_attack(find_attack(11, tag))
    report = _grade_on_the_skip_case(key, fn)
    assert not report.passed, f"{tag} accepted by {key} (seed {SEED}):\n{report.text()}"
    message = report.failures[0].message
    assert "Skip them" in message and "visited" in message and "with every lane masked off" in message, \
        f"{tag} ({key}): {message}"
    return message


def test_r11_skip_persistent_forward_bound_of_its_last_block_is_refused():
    """01: each program takes two blocks of queries and walks, for the first, to the second's diagonal with
    every lane masked off: the masked visits are compared with the first block, and the message says that the
    program worked on two blocks in turn."""
    message = _refused_for_the_visits("01")
    assert "working on queries 0-31" in message and "2 blocks of queries in turn" in message, message


def test_r11_skip_persistent_forward_masked_visits_control_is_refused():
    """01c: one block per program, the same four masked blocks past the diagonal (refused before the fix too)."""
    message = _refused_for_the_visits("01c")
    assert "in turn" not in message, message


def test_r11_skip_persistent_forward_with_each_blocks_own_bound_passes():
    """01 with the bound of each block (the honest persistent forward, two blocks of queries per program)."""
    key, fn = load_attack_variant(
        find_attack(11, "01"),
        ("        walk_end = tl.minimum(N_K, (last_block + 1) * BLOCK_M)\n", "        walk_end = end\n"))
    report = _grade_on_the_skip_case(key, fn)
    assert report.passed, report.text()


def test_r11_skip_fused_backward_dq_loop_that_masks_is_refused():
    """02: the dQ walk of a fused backward runs past its diagonal with every lane masked off; its dK, dV walk
    (all the later queries) no longer hides it."""
    message = _refused_for_the_visits("02")
    assert "of fused_kernel, working on queries" in message and "not only mask" in message, message


def test_r11_skip_unfused_backward_dq_loop_that_masks_control_is_refused():
    """02c: the course's two kernels with 02's dQ loop (refused before the fix too)."""
    message = _refused_for_the_visits("02c")
    assert "of dq_kernel" in message, message


def test_r11_skip_fused_backward_tutorial_layout_passes():
    """h06: the honest fused backward (each program: dK, dV of key block pid from its diagonal, then dQ of
    query block pid up to its diagonal)."""
    key, fn = load_attack(find_attack(11, "h06"))
    report = _grade_on_the_skip_case(key, fn)
    assert report.passed, report.text()


@pytest.mark.parametrize("key", sorted(SKIP_CASES))
def test_r11_skip_course_solution_passes_the_skip_case(key):
    from gpuperf import grading

    report = _grade_on_the_skip_case(key, grading.solution(key))
    assert report.passed, report.text()
