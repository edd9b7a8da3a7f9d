"""Round 14, after r14rows' note (seventh session): an honest kernel whose tiles past the end of the sequence wrap
to the head's first rows (``rows % N``, as Triton's matmul tutorial does) or are clamped to row 0, loaded unmasked
with their scores masked, is the tile it walks: the width rules read a load's rows the shorter way round the head
(:func:`_rows_spanned`), and the skip checks leave out the rows it wrapped to (:func:`_unwrapped`). Files h05 and
h06 of tests/grading_attacks_round14 were refused before ("a block of 346 queries", "covers all 278 keys")."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)


def _on_the_cpu() -> bool:
    import torch

    return not torch.cuda.is_available() or gpuperf.kernels.interpreter_enabled()


@pytest.mark.parametrize("seed", [11, 20261205])
@pytest.mark.parametrize("tag", ["h05", "h06"])
def test_honest_rows_taken_modulo_n_are_accepted(tag, seed):
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("the skip cases run under the interpreter")
    key, fn = load_attack(find_attack(14, tag))
    report = grading.grade_report(key, fn, seed=seed, only=lambda label: "visits" in label)
    assert report.results and report.passed, f"{tag} refused by {key} (seed {seed}):\n{report.text()}"


def test_rows_spanned_goes_the_short_way_round_a_head_only_for_a_wrap():
    from gpuperf.grading.exercises import _rows_spanned

    n = 346
    assert _rows_spanned([(320, 345), (0, 5)], n) == 32  # rows % N: the tile, not the head
    assert _rows_spanned([(0, 0), (330, 345)], n) == 17  # clamped to row 0
    assert _rows_spanned([(0, 127)], n) == 128
    assert _rows_spanned([(r, r) for r in range(0, n, 2)], n) == n - 1  # every other row: the whole head
    assert _rows_spanned([(0, 127), (n - 128, n - 1)], n) == 256  # never fewer than the rows covered
    assert _rows_spanned([(n - 16, n + 15)], n) == 32  # across two heads: first to last
    assert _rows_spanned([(n + 330, n + 345), (n, n + 5)], n) == 22  # the second head's own wrap


def test_unwrapped_leaves_out_only_the_rows_wrapped_to():
    from gpuperf.grading.exercises import _unwrapped

    n = 90
    assert _unwrapped([(0, 5), (64, 89)], n) == [(64, 89)]
    assert _unwrapped([(0, 0), (64, 89)], n) == [(64, 89)]
    assert _unwrapped([(90, 95), (154, 179)], n) == [(154, 179)]
    assert _unwrapped([(0, 30), (40, 40)], n) == [(0, 30), (40, 40)]  # a far lane that ends no head: kept
    assert _unwrapped([(32, 63), (89, 89)], n) == [(32, 63), (89, 89)]  # no block at the head's start: kept
    assert _unwrapped([(0, 31)], n) == [(0, 31)]
    # round 15's 21: lanes at the head's first and last rows beside a real block are no wrap
    assert _unwrapped([(0, 0), (32, 63), (89, 89)], n) == [(0, 0), (32, 63), (89, 89)]
