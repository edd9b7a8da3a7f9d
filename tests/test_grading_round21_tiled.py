"""Round 21 of issue 30 (2026-12-06, thirteenth session): the wrong L5.tiled files the twenty-first attacker got
accepted, and two honest ones it refused (tests/grading_attacks_round21; the attacker's REPORT.md, F2-F4, H1-H2).

- 01 (F2): a two-pass softmax whose keys go through a buffer first "primed" with one element of k. The read
  counter fixed how many distinct elements of k a buffer holds the first time it owned it (1), so every later
  read of a full block counted as one element. Memory written again now holds what the rest of it held plus
  what is written (up to the part of it ever owned).
- 02 (F3): keys outermost, k copied into a buffer primed with one element of v. A copy took the owner of its
  first owned argument (the buffer: "v"); it now takes its source's, and memory holding both k and v is read
  as k.
- 31 (F4): keys outermost, each block of queries plus ``q.sum() * 0``: every block was "rows 0 to N_q - 1".
  A value with no rows of q left (0-d, a statistic of q's rows, one broadcast along the rows) brings no rows
  where a value with rows is there too, and several values with rows bring the rows they share.
- h01, h03 (honest): k scaled before the loops (``k * scale``), or each block of keys scaled before its
  product. An elementwise image of k made without q computes no score: it is read (charged) by the products
  that read it with q, not when it is made. Exercise 1 allows any torch arithmetic (labs/L5)."""

from __future__ import annotations

import pytest

from attack_files import attack_folder, find_attack, load_attack, load_attack_variant


def _grade(key, fn, seed=11, only=None):
    import gpuperf.kernels  # noqa: F401  (the course's kernels, as a learner's notebook has them)
    from gpuperf import grading

    return grading.grade_report(key, fn, seed=seed, stop_at_first_failure=True, only=only)


def _first(label):  # the first case (two blocks of queries, two of keys)
    return "N_q=64 N_k=64 d=16 " in label


def _refused(report, words):
    assert not report.passed
    text = " ".join(r.message for r in report.failures)
    assert words in text, text


@pytest.mark.parametrize("seed", [11, 12])
def test_01_two_pass_through_a_primed_buffer_is_refused(seed):
    key, fn = load_attack(find_attack(21, "01"))
    _refused(_grade(key, fn, seed, only=_first), "read each element of k")


def test_01_two_pass_through_a_buffer_filled_in_place_is_refused():
    """The primed buffer cleared and filled by an in-place add (not a copy) in the first pass."""
    key, fn = load_attack_variant(find_attack(21, "01"),
                                  ("            kb.copy_(k[c0:c0 + block_cols])\n            s = ",
                                   "            kb.zero_()\n            kb.add_(k[c0:c0 + block_cols])\n"
                                   "            s = "))
    _refused(_grade(key, fn, only=_first), "read each element of k")


def test_01_two_pass_through_a_buffer_filled_by_halves_is_refused():
    """Each block copied into the primed buffer in two halves: the buffer holds both."""
    key, fn = load_attack_variant(find_attack(21, "01"),
                                  ("            kb.copy_(k[c0:c0 + block_cols])\n            s = ",
                                   "            h = kb.shape[0] // 2\n"
                                   "            kb[:h].copy_(k[c0:c0 + h])\n"
                                   "            kb[h:].copy_(k[c0 + h:c0 + kb.shape[0]])\n            s = "))
    _refused(_grade(key, fn, only=_first), "read each element of k")


@pytest.mark.parametrize("seed", [11, 12])
def test_02_keys_outermost_through_a_buffer_primed_with_v_is_refused(seed):
    key, fn = load_attack(find_attack(21, "02"))
    _refused(_grade(key, fn, seed, only=_first), "your loop visits the key blocks outermost")


def test_02_keys_outermost_through_a_buffer_primed_with_v_and_added_is_refused():
    """k added (in place) into the buffer primed with v, instead of copied."""
    key, fn = load_attack_variant(find_attack(21, "02"),
                                  ("    kbuf.copy_(k)", "    kbuf.zero_()\n    kbuf.add_(k)"))
    _refused(_grade(key, fn, only=_first), "your loop visits the key blocks outermost")


@pytest.mark.parametrize("seed", [11, 12])
def test_31_keys_outermost_with_a_zero_from_all_of_q_is_refused(seed):
    key, fn = load_attack(find_attack(21, "31"))
    _refused(_grade(key, fn, seed, only=_first), "your loop visits the key blocks outermost")


@pytest.mark.parametrize("q_i", [
    # accepted before the fix: a 0-d statistic made into a block's shape (a repeat, a stack)
    "q[r0:r0 + block_rows] + zero.repeat(q[r0:r0 + block_rows].shape[0], d)",
    "q[r0:r0 + block_rows] + torch.stack([zero] * q[r0:r0 + block_rows].shape[0]).reshape(-1, 1)",
    # refused before the fix too (kept so that it stays so)
    "q[r0:r0 + block_rows] + q.sum(0, keepdim=True) * 0.0",  # a row of sums over q's rows, broadcast
    "q[r0:r0 + block_rows] + (q.sum(1, keepdim=True) * 0.0)[r0:r0 + block_rows]",  # row by row: q's rows
    "q[r0:r0 + block_rows] + q.reshape(q[r0:r0 + block_rows].shape[0], -1).sum(1, keepdim=True) * 0.0",
    # the block built from its elements one by one (0-d values of one row each), plus all of q
    "torch.stack([torch.stack([q[i, j] * 1.0 for j in range(d)]) for i in range(r0, min(r0 + block_rows, n_q))])"
    " + q.reshape(q[r0:r0 + block_rows].shape[0], -1).sum(1, keepdim=True) * 0.0",
])
def test_31_keys_outermost_with_other_values_from_all_of_q_is_refused(q_i):
    key, fn = load_attack_variant(find_attack(21, "31"),
                                  ("q_i = q[r0:r0 + block_rows] + zero", f"q_i = {q_i}"))
    _refused(_grade(key, fn, only=_first), "your loop visits the key blocks outermost")


@pytest.mark.parametrize("tag", ["h01", "h03"])
@pytest.mark.parametrize("seed", [11, 12])
def test_honest_tiled_files_of_round_21_pass(tag, seed):
    key, fn = load_attack(find_attack(21, tag))
    report = _grade(key, fn, seed)
    assert report.passed, report.text()


def test_course_solution_passes():
    from gpuperf import grading

    report = _grade("L5.tiled", grading.solution("L5.tiled"), seed=1)
    assert report.passed, report.text()


def test_every_file_of_round_21_tiled_is_tested():
    tags = {p.name.split("_")[0] for p in attack_folder(21).glob("*_L5tiled_*.py") if "hook" not in p.stem}
    assert tags == {"01", "02", "31", "h01", "h03"}, tags  # (the hook files: test_grading_round21_hooks.py)
