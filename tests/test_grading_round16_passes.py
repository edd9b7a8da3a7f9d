"""Round 16 (2026-12-06), r16passes's part: findings 9 and 10 of tests/grading_attacks_round16/REPORT.md.

- Finding 9 (18, 19): a causal forward that walks its keys twice (a first pass for the max, a second for the sum
  and P V, both stopping at the diagonal) passed: the pass limit came from N_k, while a block of queries sees
  only the keys up to its diagonal, and L6.autograd never pass-checked its causal forward (N_k < 512 there). The
  limit of a causal program now comes from the keys its queries see (``_causal_passes``), and L6.autograd's
  causal forward is pass-checked whatever N_k is.
- Finding 10 (20-23): a Python loop launching a kernel once per block, row or tile, each time on a grid of one
  program (per head), ran the work one after another unseen, the programs being counted launch by launch. The
  launches of one kernel are now added up over the call (``_spread_check`` for L2-L4, ``_launch_loop_check``
  for a head's rows in L5 and L6).

Each wrong file is graded on the case that refuses it, the honest files of rounds 13-16 on the same cases."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 20261206

#: The case of each exercise where the rule of the finding runs (words of its label).
CAUSAL_CASES = {"L5.causal": "the key blocks it visits", "L6.autograd": "the blocks they visit"}
LOOP_CASES = {"L6.backward": "the blocks of queries and keys the backward visits",
              "L6.autograd": "their blocks of keys",
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


# ---- finding 9: two passes over K in a causal forward ---------------------------------------------------------


@pytest.mark.parametrize("tag", ["18", "19"])
@pytest.mark.parametrize("seed", [SEED, 11])
def test_r16_two_pass_causal_forward_is_refused(tag, seed):
    """18 (L5.causal) and 19 (L6.autograd's forward): a max pass then a sum pass, each to the diagonal."""
    key, fn = load_attack(find_attack(16, tag))
    report = _grade(key, fn, CAUSAL_CASES[key], seed)
    assert not report.passed, f"{tag} accepted by {key} (seed {seed}):\n{report.text()}"
    message = report.failures[0].message
    assert "causal mask" in message and "reads K twice" in message, message
    if key == "L6.autograd":
        assert message.startswith("in your Function's forward"), message


PASS_2 = "    # pass 2: the sum and P V (a running max, which never moves where pass 1 found it)\n"
RELOAD = ("    q = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, "
          "other=0.0)  # again\n")


def test_r16_two_pass_causal_forward_reloading_its_queries_is_refused():
    """18 with q loaded again before the second walk: the same block of queries held twice is one block."""
    key, fn = load_attack_variant(find_attack(16, "18"), (PASS_2, PASS_2 + RELOAD))
    report = _grade(key, fn, CAUSAL_CASES[key])
    assert not report.passed, f"18 with q reloaded accepted by {key}:\n{report.text()}"
    assert "reads K twice" in report.failures[0].message, report.failures[0].message


@pytest.mark.parametrize("rnd,tag", [(14, "h05"), (15, "h01"), (15, "h06"), (16, "h04"), (16, "h13"),
                                     (16, "h14"), (13, "h02"), (16, "h03")])
def test_r16_honest_causal_forwards_still_pass(rnd, tag):
    """One pass to the diagonal, however the queries are held (rows modulo N, descriptors, the tutorial's two
    stages, persistent dK/dV through the Function)."""
    key, fn = load_attack(find_attack(rnd, tag))
    report = _grade(key, fn, CAUSAL_CASES[key])
    assert report.passed, f"round {rnd} {tag} refused by {key}:\n{report.text()}"


# ---- finding 10: a Python loop of one-program launches --------------------------------------------------------


@pytest.mark.parametrize("tag,words", [("20", "blocks of a head one after another"),
                                       ("21", "blocks of queries of a head one after another"),
                                       ("22", "runs the rows one after another"),
                                       ("23", "runs the tiles one after another")])
def test_r16_launch_per_block_loop_is_refused(tag, words):
    """20 (dK/dV), 21 (L5.forward), 22 (L3.softmax), 23 (L4.matmul): a launch per block, row or tile."""
    key, fn = load_attack(find_attack(16, tag))
    report = _grade(key, fn, LOOP_CASES[key])
    assert not report.passed, f"{tag} accepted by {key}:\n{report.text()}"
    message = report.failures[0].message
    assert "Python loop" in message and words in message and "Launch the kernel once" in message, message


@pytest.mark.parametrize("rnd,tag", [(13, "h01"), (13, "h03"), (13, "h04"), (14, "h01"), (14, "h04"), (14, "h06"),
                                     (15, "h02"), (15, "h04"), (15, "h05"), (16, "h01"), (16, "h02"), (16, "h05"),
                                     (16, "h06"), (16, "h07"), (16, "h10"), (13, "h02"), (16, "h03"), (15, "h07"),
                                     (16, "h08"), (15, "h03"), (15, "h08"), (16, "h11")])
def test_r16_honest_launches_still_pass(rnd, tag):
    """Honest kernels of rounds 13-16 (several kernels a call, persistent grids, split-K with atomics, fp32
    copies): one launch per kernel, or few launches of many programs."""
    key, fn = load_attack(find_attack(rnd, tag))
    report = _grade(key, fn, LOOP_CASES[key])
    assert report.passed, f"round {rnd} {tag} refused by {key}:\n{report.text()}"
