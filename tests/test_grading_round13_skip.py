"""Round 13 (2026-12-05), r13skip's part: findings 1, 2 and 6 of tests/grading_attacks_round13/REPORT.md.

- Finding 1 (01, 02, 03): a one-element load of the other tensor before each tl.dot became the block every visited
  tile was judged against. Each load is now judged against the rows of the other tensor whose values reach the
  first tl.dot its own value reaches (``_paired_visits``): a load that reaches no operand (``acc += decoy * 0``)
  is nobody's block, and rows added to an operand from a far block (``q + decoy * 0``) do not hide a visit
  that is hidden from the block the program works on.
- Finding 2 (04, 10): a program that multiplies more than half of a head's (query, key) pairs is refused, not
  only one that multiplies every pair (``_whole_head_program``, counted from the rows that reach each tl.dot).
- Finding 6 (h01, h02): a persistent dK/dV program whose last block of keys has an empty walk (no query sees
  it) no longer has that block judged against the previous walk's queries.

The wrong files are graded on the case that refuses them, the honest files on the cases that refused them."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 20261205

#: The case of each exercise that counts the blocks a causal kernel visits.
SKIP_CASES = {"L5.causal": "the key blocks it visits",
              "L6.backward": "the blocks of queries and keys the backward visits",
              "L6.autograd": "the blocks they visit"}
#: L6.autograd's long full case (N >= 512), where the whole-head rule runs on its backward.
LONG_CASE = "their blocks of keys"


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


def _grade(key, fn, words, seed=SEED):
    if not _interpreted_here():
        pytest.skip("the blocks a kernel visits are counted by the interpreter")
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=seed, only=lambda label: words in label)
    assert report.results, f"{key}: no case says {words!r}"
    return report


def _skip_message(key, fn, tag):
    report = _grade(key, fn, SKIP_CASES[key])
    assert not report.passed, f"{tag} accepted by {key} (seed {SEED}):\n{report.text()}"
    message = report.failures[0].message
    assert "Skip them" in message, f"{tag} ({key}): {message}"
    return message


# ---- finding 1: a decoy row of the other tensor before each tl.dot ---------------------------------------------


@pytest.mark.parametrize("tag", ["01", "02", "03"])
@pytest.mark.parametrize("seed", [SEED, 11])
def test_r13_decoy_row_before_each_dot_is_refused(tag, seed):
    """01 (forward), 02 (backward: a row of k in the dK, dV walk, a row of q in the dQ walk), 03 (both, through
    the Function): refused for the blocks past the diagonal, judged against the block each product took."""
    key, fn = load_attack(find_attack(13, tag))
    report = _grade(key, fn, SKIP_CASES[key], seed)
    assert not report.passed, f"{tag} accepted by {key} (seed {seed}):\n{report.text()}"
    message = report.failures[0].message
    assert "Skip them" in message, message
    assert "queries 0-31 and keys 32-63" in message, message


CAUSAL = "        if CAUSAL:\n"
DECOY = "            decoy = tl.load(q_head + (N_Q - 1) * HEAD_DIM)  # one element of the head's last query row\n"
FOLD = "            acc += decoy * 0.0\n"
DOT = "        s = tl.dot(q, tl.trans(k), input_precision=\"ieee\") * scale\n"
#: what an attacker tries next on 01: the decoy folded into the dot's operand, loaded after the dot, 16 rows
DECOY_VARIANTS = {
    "into the operand": ((FOLD, ""), (DOT, DOT.replace("tl.dot(q,", "tl.dot(q + decoy * 0.0,"))),
    "into q, kept across the walk": ((FOLD, "            q = q + decoy * 0.0\n"),),
    "after the dot": ((CAUSAL + DECOY + FOLD, ""), (DOT, DOT + CAUSAL + DECOY + FOLD)),
    "16 rows into the operand": (
        (DECOY, "            decoy = tl.load(q_head + (N_Q - 16 + tl.arange(0, 16))[:, None] * HEAD_DIM "
                "+ dims[None, :])\n"),
        (FOLD, ""),
        (DOT, DOT.replace("tl.dot(q,", "tl.dot(q + tl.sum(decoy, axis=0)[None, :] * 0.0,"))),
}


@pytest.mark.parametrize("variant", sorted(DECOY_VARIANTS))
def test_r13_decoy_variants_are_refused(variant):
    """01's decoy row reaching the product (a far block added to the operand does not hide a visit hidden from
    the block of queries the program works on), loaded after the product, or 16 rows wide."""
    key, fn = load_attack_variant(find_attack(13, "01"), *DECOY_VARIANTS[variant])
    message = _skip_message(key, fn, f"01 ({variant})")
    assert "queries 0-31 and keys 32-63" in message, message


def test_r13_forward_without_decoy_or_skipping_is_refused():
    """01 without its decoy (the control: refused before the fix too)."""
    key, fn = load_attack_variant(find_attack(13, "01"), (CAUSAL + DECOY + FOLD, ""))
    _skip_message(key, fn, "01 without decoy")


def test_r13_forward_that_skips_with_a_decoy_passes():
    """01 with the decoy kept but the loop stopped at each block's diagonal: a decoy changes nothing for an
    honest walk (the decoy is judged against the keys it was loaded with, and is no hidden block)."""
    key, fn = load_attack_variant(
        find_attack(13, "01"),
        ("        end = tl.minimum(N_K, N_Q)  # no per-block skipping\n",
         "        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)\n"))
    report = _grade(key, fn, SKIP_CASES[key])
    assert report.passed, report.text()


# ---- finding 2: a whole head less one block in one program -----------------------------------------------------


@pytest.mark.parametrize("tag,words", [("04", SKIP_CASES["L6.backward"]), ("10", LONG_CASE)])
def test_r13_head_minus_one_block_is_refused(tag, words):
    """04 (L6.backward, its causal skip case), 10 (L6.autograd, its long full case): program 1 of dkdv_kernel
    does every block of keys but the first."""
    key, fn = load_attack(find_attack(13, tag))
    report = _grade(key, fn, words)
    assert not report.passed, f"{tag} accepted by {key} (seed {SEED}):\n{report.text()}"
    message = report.failures[0].message
    assert "program 1 of your kernel dkdv_kernel" in message and "more than half" in message and \
        "most of a head alone" in message, message


def test_r13_head_minus_one_block_with_decoys_is_refused():
    """04 with a one-element decoy of k's row 0 before each product of its walk: the pairs a program covers are
    read from the rows that reach its products, so a decoy does not shrink them."""
    key, fn = load_attack_variant(
        find_attack(13, "04"),
        ("            delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)\n",
         "            delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)\n"
         "            decoy = tl.load(k_ptr + head * N_K * HEAD_DIM)\n"
         "            dv += decoy * 0.0\n"))
    report = _grade(key, fn, SKIP_CASES[key])
    assert not report.passed, report.text()
    assert "more than half" in report.failures[0].message, report.failures[0].message


def test_r13_persistent_with_three_programs_per_head_passes():
    """h01 with 3 programs per head instead of 4: program 0 takes key blocks 0, 3, 6, under half of the pairs
    the causal mask lets through."""
    key, fn = load_attack_variant(
        find_attack(13, "h01"),
        ("dkdv_kernel[(min(4, triton.cdiv(n_k, block)), heads_total)]",
         "dkdv_kernel[(min(3, triton.cdiv(n_k, block)), heads_total)]"))
    report = _grade(key, fn, SKIP_CASES[key])
    assert report.passed, report.text()


# ---- finding 6: a persistent dK, dV program whose last walk is empty ---------------------------------------------


@pytest.mark.parametrize("tag", ["h01", "h02"])
@pytest.mark.parametrize("seed", [SEED, 11])
def test_r13_persistent_dkdv_with_an_empty_walk_passes(tag, seed):
    """h01 (L6.backward), h02 (L6.autograd): key blocks past N_q are loaded, their walk over the queries empty."""
    key, fn = load_attack(find_attack(13, tag))
    report = _grade(key, fn, SKIP_CASES[key], seed)
    assert report.passed, f"{tag} refused by {key} (seed {seed}):\n{report.text()}"


@pytest.mark.parametrize("tag", ["h02"])
def test_r13_persistent_dkdv_passes_the_long_case(tag):
    """h02 on L6.autograd's long full case, where the whole-head rule runs (4 programs per head)."""
    key, fn = load_attack(find_attack(13, tag))
    report = _grade(key, fn, LONG_CASE)
    assert report.passed, report.text()


def test_r13_persistent_dkdv_in_descending_order_passes():
    """h01 with each program taking its key blocks last to first: the empty walks come first, before a walk
    with products; each empty walk is judged against nothing."""
    key, fn = load_attack_variant(
        find_attack(13, "h01"),
        ("    for block_n in range(tl.program_id(0), tl.cdiv(N_K, BLOCK_N), tl.num_programs(0)):\n",
         "    n_blocks = tl.cdiv(N_K, BLOCK_N)\n"
         "    mine = tl.cdiv(n_blocks - tl.program_id(0), tl.num_programs(0))\n"
         "    for i in range(0, mine):\n"
         "        block_n = tl.program_id(0) + (mine - 1 - i) * tl.num_programs(0)\n"))
    report = _grade(key, fn, SKIP_CASES[key])
    assert report.passed, report.text()


def test_r13_persistent_dkdv_that_walks_past_the_diagonal_is_refused():
    """h01 with each walk starting at query block 0 (no lower bound): refused, judged walk by walk."""
    key, fn = load_attack_variant(
        find_attack(13, "h01"),
        ("            start = (block_n * BLOCK_N // BLOCK_M) * BLOCK_M\n", "            start = 0\n"))
    message = _skip_message(key, fn, "h01 from query 0")
    assert "dkdv_kernel" in message, message


@pytest.mark.parametrize("key", sorted(SKIP_CASES))
def test_r13_course_solution_passes_the_skip_case(key):
    from gpuperf import grading

    report = _grade(key, grading.solution(key), SKIP_CASES[key])
    assert report.passed, report.text()


# ---- the next attack: the hidden tiles multiplied with another block, loaded for them ---------------------------

#: 01 with the decoy replaced: for the key blocks past its diagonal the program multiplies the head's last block
#: of queries (loaded for them) instead of its own, so the rows its products take are never hidden
SUBSTITUTE_Q = (
    ("            acc += decoy * 0.0\n",
     "            acc += decoy * 0.0\n"
     "            if start > block_m * BLOCK_M + BLOCK_M - 1:\n"
     "                qq = tl.load(q_head + (N_Q - BLOCK_M + tl.arange(0, BLOCK_M))[:, None] * HEAD_DIM "
     "+ dims[None, :])\n"
     "            else:\n"
     "                qq = q\n"
     "        else:\n"
     "            qq = q\n"),
    (DOT, DOT.replace("tl.dot(q,", "tl.dot(qq,")))
#: h01's dK, dV walk from query block 0 (no lower bound), multiplying the head's first block of keys (loaded for
#: them) instead of its own for the blocks of queries before its diagonal
SUBSTITUTE_K = (
    ("            start = (block_n * BLOCK_N // BLOCK_M) * BLOCK_M\n", "            start = 0\n"),
    ("            delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)\n"
     "            s = tl.dot(q, tl.trans(k),",
     "            delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)\n"
     "            kk = k\n"
     "            if CAUSAL:\n"
     "                if m0 + BLOCK_M - 1 < block_n * BLOCK_N:\n"
     "                    kk = tl.load(k_ptr + head * N_K * HEAD_DIM + tl.arange(0, BLOCK_N)[:, None] * HEAD_DIM "
     "+ dims[None, :])\n"
     "            s = tl.dot(q, tl.trans(kk),"))


def test_r13_forward_multiplying_hidden_tiles_with_another_block_is_refused():
    """The tiles past the diagonal multiplied with the last block of queries: judged against the rows of o the
    program stores (its block of queries), they are hidden."""
    key, fn = load_attack_variant(find_attack(13, "01"), *SUBSTITUTE_Q)
    message = _skip_message(key, fn, "01 (substituted q)")
    assert "working on queries 0-31 (the rows of o it stored next), visited keys 32-63" in message, message


def test_r13_autograd_forward_multiplying_hidden_tiles_with_another_block_is_refused():
    """The same forward in 03 (L6.autograd): refused in the Function's forward."""
    key, fn = load_attack_variant(find_attack(13, "03"), *SUBSTITUTE_Q)
    message = _skip_message(key, fn, "03 (substituted q)")
    assert "forward" in message and "the rows of o it stored next" in message, message


@pytest.mark.parametrize("tag", ["h01", "h02"])
def test_r13_backward_multiplying_hidden_tiles_with_another_block_is_refused(tag):
    """h01 (L6.backward), h02 (L6.autograd) with a dK, dV walk from query 0 that multiplies the blocks of queries
    before its diagonal with key block 0: judged against the rows of dK the program stores next (or, for a block
    of keys no query sees, never multiplied, against the queries the program walks after loading it)."""
    key, fn = load_attack_variant(find_attack(13, tag), *SUBSTITUTE_K)
    message = _skip_message(key, fn, f"{tag} (substituted k)")
    assert "dkdv_kernel" in message, message
    if tag == "h02":  # N_q = 128: the blocks of keys 0-127 are multiplied with key block 0 past their diagonal
        # (since round 14's r14rows, the block of keys 128-151 no query sees, loaded between the same two tl.dot as
        # key block 0, is a block of its own, no longer the span 0-151: found first, against queries 0-31)
        assert "keys 128-" in message and "queries 0-31" in message, message

