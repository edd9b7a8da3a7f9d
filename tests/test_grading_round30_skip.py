"""Round 30 (finding H2): a causal forward that takes two heads a program with a batched (3-D) tl.dot masks off
its second head where B*H is odd (``hs < HEADS``). Those lanes' addresses lie past the end of k (no key lives
there); the skip check read them as the rows just past the last head, far past the diagonal, and refused an
honest kernel. Masked-off lanes outside the tensor's storage are no block visited now; masked-off lanes inside
it still are, so a walk past the diagonal of a real head is refused as before, masked or not."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

_interpreted = pytest.mark.skipif(
    not __import__("gpuperf.kernels", fromlist=["interpreter_enabled"]).interpreter_enabled(),
    reason="counted under the interpreter (a CPU)")


def _grade(key, fn, seed=1):
    import gpuperf.kernels  # noqa: F401
    from gpuperf import grading

    return grading.grade_report(key, fn, seed=seed, stop_at_first_failure=True)


def test_masked_lanes_outside_the_storage_are_no_rows():
    from gpuperf.grading.exercises import _in_storage

    # one head of 547 keys: a tile of keys 0-31 beside a masked-off second head (rows 547-578)
    covered = ([(0, 31)], [(0, 31), (547, 578)], [(0, 31, 16.0)], [(0, 31, 16.0), (547, 578, 16.0)])
    lanes, kept = _in_storage((0, 578), covered, 547)
    assert lanes == (0, 31)
    assert kept == ([(0, 31)], [(0, 31)], [(0, 31, 16.0)], [(0, 31, 16.0)])
    # a tile wholly outside, every lane masked off: no visit
    assert _in_storage((547, 578), ([], [(547, 578)], [], [(547, 578, 16.0)]), 547)[0] is None
    # a tile at the end of the head, in part past it: its rows inside stay a visit
    lanes, kept = _in_storage((540, 571), ([], [(540, 571)], [], [(540, 571, 16.0)]), 547)
    assert lanes == (540, 546) and kept[1] == [(540, 546)] and kept[3] == [(540, 546, 16.0)]
    # every lane inside: unchanged (masked-off lanes of a real head are visits)
    covered = ([], [(256, 287)], [], [(256, 287, 16.0)])
    assert _in_storage((256, 287), covered, 547) == ((256, 287), covered)


@_interpreted
def test_two_heads_a_program_with_a_missing_head_passes():
    key, fn = load_attack(find_attack(30, "h06"))
    report = _grade(key, fn)
    assert report.passed, report.text()


_NO_SKIP = ("        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)\n", "        end = N_K\n")
_MASKED_WALK = (_NO_SKIP, ("        kv_ok = h_ok[:, None, None] & (keys[None, :, None] < N_K)\n",
                           "        kv_ok = h_ok[:, None, None] & (keys[None, :, None] < N_K) & (keys[None, :, None]"
                           " < (block_m + 1) * BLOCK_M)\n"))


@_interpreted
@pytest.mark.parametrize("edits, words", [
    ((_NO_SKIP,), ("after the last query",)),
    # its blocks past the diagonal hold nothing: refused by the rule on such products before the skip check
    (_MASKED_WALK, ("after the last query", "a block that holds nothing"))],
    ids=["every block", "masked past the diagonal"])
def test_two_heads_a_program_walking_past_the_diagonal_is_refused(edits, words):
    # h06 walking every block of keys of its one real head, loaded or with the lanes past the diagonal masked off
    key, fn = load_attack_variant(find_attack(30, "h06"), *edits)
    report = _grade(key, fn)
    assert not report.passed, report.text()
    text = " ".join(r.message for r in report.failures)
    assert any(w in text for w in words), text
