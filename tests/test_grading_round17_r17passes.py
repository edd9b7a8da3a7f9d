"""Round 17 (2026-12-06), r17passes's part: the causal pass count and the launch-loop rules of round 16 beaten.

- 01 (L5.causal), 02 (L6.autograd's forward): a two-pass causal forward whose first block of keys is loaded
  before q. ``_causal_passes`` skipped every program with keys loaded before its first q. Keys loaded before
  any q now belong to the walk whose products they reach: a program's blocks of queries are the rows of q that
  reach each walk's tl.dot (tenth session, ``_query_walks``), whatever the order of its loads, so two blocks
  loaded together (h01's pairs) are two walks, a far row of q only read is no block, and each block's keys may
  be loaded once.
- 03-06 (L3.softmax, L5.forward, L4.matmul, L6.backward): a Python loop of one-program launches beside ONE wide
  launch of placeholders. The launch-loop rules took the widest launch; they now count the launches with few
  programs, counting every write or only the writes the output keeps (a placeholder overwritten later is no
  work), and refuse 3 or more of them, whatever the widest.

Each wrong file is graded on the case that refuses it, the honest files on the same cases."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 20261206

CAUSAL_CASES = {"L5.causal": "the key blocks it visits", "L6.autograd": "the blocks they visit"}
LOOP_CASES = {"L6.backward": "the blocks of queries and keys the backward visits",
              "L5.forward": "N_k=256 d=16 fp32 full, your kernel run by",
              "L3.softmax": "called twice on the same x",
              "L4.matmul": "A 64x64 @ B 64x64 fp32"}


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


def _grade(key, fn, words, seed=SEED):
    if not _interpreted_here():
        pytest.skip("passes and launches are counted by the interpreter")
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=seed, only=lambda label: words in label)
    assert report.results, f"{key}: no case says {words!r}"
    return report


# ---- 01, 02: keys loaded before q ----------------------------------------------------------------------------


@pytest.mark.parametrize("tag", ["01", "02"])
@pytest.mark.parametrize("seed", [SEED, 11])
def test_r17_two_pass_causal_forward_with_keys_before_q_is_refused(tag, seed):
    key, fn = load_attack(find_attack(17, tag))
    report = _grade(key, fn, CAUSAL_CASES[key], seed)
    assert not report.passed, f"{tag} accepted by {key} (seed {seed}):\n{report.text()}"
    message = report.failures[0].message
    assert "causal mask" in message and "reads K twice" in message, message


def test_r17_two_pass_with_q_loaded_after_both_walks_is_refused():
    """01 with q loaded once more after the sum pass (a block held again is one block: no extra walk)."""
    store = "    o = acc / l[:, None]\n"
    again = ("    q = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, "
             "other=0.0)  # again\n")
    key, fn = load_attack_variant(find_attack(17, "01"), (store, again + store))
    report = _grade(key, fn, CAUSAL_CASES[key])
    assert not report.passed, f"01 with q reloaded accepted by {key}:\n{report.text()}"
    assert "reads K twice" in report.failures[0].message, report.failures[0].message


def test_r17_two_pass_with_a_far_row_of_q_loaded_between_the_walks_is_refused():
    """01 with one row of q, up to 127 rows past its block, loaded between the walks and never written: a
    walk's block of queries is the rows of q its products take, not a far row the program only reads."""
    pass_2 = "    # pass 2: the sum and P V (a running max, which never moves where pass 1 found it)\n"
    far = ("    far = tl.minimum(block_m * BLOCK_M + 127, N_Q - 1)\n"
           "    qd = tl.load(q_head + far * HEAD_DIM + dims)  # a far row, read, never written\n"
           "    m = m + 0.0 * tl.sum(qd.to(tl.float32), axis=0)\n")
    key, fn = load_attack_variant(find_attack(17, "01"), (pass_2, pass_2 + far))
    report = _grade(key, fn, CAUSAL_CASES[key])
    assert not report.passed, f"01 with a far row of q accepted by {key}:\n{report.text()}"
    message = report.failures[0].message
    assert "reads K twice" in message and "program 1 " in message, message


@pytest.mark.parametrize("rnd,tag", [(17, "h02"), (14, "h05"), (15, "h01"), (15, "h06"), (16, "h04"),
                                     (16, "h13"), (16, "h14"), (13, "h02"), (16, "h03")])
def test_r17_honest_causal_forwards_still_pass(rnd, tag):
    """One walk to the diagonal for each block of queries a program holds (h02: two blocks a program, in turn)."""
    key, fn = load_attack(find_attack(rnd, tag))
    report = _grade(key, fn, CAUSAL_CASES[key])
    assert report.passed, f"round {rnd} {tag} refused by {key}:\n{report.text()}"


# ---- 03-06: one wide launch beside a loop of one-program launches --------------------------------------------


@pytest.mark.parametrize("tag,words", [("03", "runs the rows one after another"),
                                       ("04", "blocks of queries of a head one after another"),
                                       ("05", "runs the tiles one after another"),
                                       ("06", "blocks of a head one after another")])
def test_r17_wide_first_launch_beside_a_loop_is_refused(tag, words):
    key, fn = load_attack(find_attack(17, tag))
    report = _grade(key, fn, LOOP_CASES[key])
    assert not report.passed, f"{tag} accepted by {key}:\n{report.text()}"
    message = report.failures[0].message
    assert "Python loop" in message and words in message and "Launch the kernel once" in message, message
    assert "values kept" in message, message


#: every launch of the loop wide, its programs past 0 writing placeholders over the rows (blocks) still to come
SHRINKING = {"03": ("        grid = (n_rows,) if row == 0 else (1,)", "        grid = (n_rows - row,)"),
             "04": ("        wide = triton.cdiv(n_q, 32) if block_m == 0 else 1",
                    "        wide = triton.cdiv(n_q, 32) - block_m")}


@pytest.mark.parametrize("tag", sorted(SHRINKING))
def test_r17_every_launch_wide_with_placeholders_is_refused(tag):
    """03 and 04 with every launch wide (a program per row or block still to come, all but program 0 writing
    placeholders): one program a launch computes a value that is kept."""
    key, fn = load_attack_variant(find_attack(17, tag), SHRINKING[tag])
    report = _grade(key, fn, LOOP_CASES[key])
    assert not report.passed, f"{tag} with shrinking wide launches accepted by {key}:\n{report.text()}"
    assert "Python loop" in report.failures[0].message, report.failures[0].message


@pytest.mark.parametrize("rnd,tag", [(13, "h01"), (14, "h06"), (15, "h04"), (16, "h07"), (16, "h10"),
                                     (15, "h07"), (16, "h08"), (15, "h03"), (15, "h08"), (16, "h11")])
def test_r17_honest_launches_still_pass(rnd, tag):
    """Honest kernels of rounds 13-16 (persistent grids, split-K with atomics, several kernels a call)."""
    key, fn = load_attack(find_attack(rnd, tag))
    report = _grade(key, fn, LOOP_CASES.get(key, "their blocks of keys"))
    assert report.passed, f"round {rnd} {tag} refused by {key}:\n{report.text()}"
