"""Round 14 (2026-12-05), r14bounce's part: findings 1 and 3 of tests/grading_attacks_round14/REPORT.md, and the
attacker's untested note (the README's last row).

- Finding 1 (01, 02, 04): each program stored the block it holds (q, or k) to its own scratch and loaded it back
  in the same launch, so no product took rows of the held tensor; the fallback then paired each walked tile
  with a one-element decoy of the other tensor; O, dK, dQ were written by atomics, which left no store mark. A
  load of what the same program stored now carries the loads the stored value was computed from (the tag
  travels through memory as the sources do); an atomic into an output is a write the stored-rows rule reads;
  the fallback pairs a visit only with rows of the other tensor that reached a product with both tensors (a
  decoy never multiplied is nobody's block).
- Finding 3 (03): the whole-head rule counted no pair for a bounced block of keys (the same tag).
- The note (17, written here): each tile of keys also multiplied with the head's last block of queries, that
  product's result used times 0, O by atomics: the tile looks visible to the product that sees most of it, and
  the stored-rows rule (now reading atomics) judges it against the rows of o the program writes. An atomic
  marks only the addresses no other program of the launch writes (zeros added to another program's rows of o
  after each tile mark nothing).
- 18 (written here): 01 with q handed over by an earlier kernel of the reader's (no copy) and o through
  scratch: no product takes rows of q, and the decoys no longer stand in.

Controls: the same kernels with the walks stopped at each block's diagonal (bounce, decoys and atomics kept) and
round 14's h04 (FlashAttention-2's backward, dQ by atomics) are accepted. Each file is graded on the case that
counts the blocks a causal kernel visits."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 20261205

#: The case of each exercise that counts the blocks a causal kernel visits.
SKIP_CASES = {"L5.causal": "the key blocks it visits",
              "L6.backward": "the blocks of queries and keys the backward visits",
              "L6.autograd": "the blocks they visit"}

#: The walks of 01, 02, 04 stopped at each block's diagonal (the forward and dQ at the block holding their last
#: query, dK/dV from the block holding their first key): the honest kernels, bounce, decoys and atomics kept.
FORWARD = ("        end = tl.minimum(N_K, N_Q)  # no skipping of the blocks past the diagonal\n",
           "        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)\n")
DKDV = ("    for m0 in range(0, N_Q, BLOCK_M):  # every block of queries: no skipping\n",
        "    for m0 in range((block_n * BLOCK_N // BLOCK_M) * BLOCK_M if CAUSAL else 0, N_Q, BLOCK_M):\n")
DQ = ("        end = tl.minimum(N_K, N_Q)  # not the diagonal: every block up to the last query\n",
      "        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)\n")
SKIPPING = {"01": (FORWARD,), "02": (DKDV, DQ), "04": (FORWARD, DKDV, DQ), "17": (FORWARD,)}


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


def _grade(key, fn, seed=SEED):
    if not _interpreted_here():
        pytest.skip("the blocks a kernel visits are counted by the interpreter")
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=seed, only=lambda label: SKIP_CASES[key] in label)
    assert report.results, f"{key}: no case says {SKIP_CASES[key]!r}"
    return report


def _refused(tag, seed=SEED) -> str:
    key, fn = load_attack(find_attack(14, tag))
    report = _grade(key, fn, seed)
    assert not report.passed, f"{tag} accepted by {key} (seed {seed}):\n{report.text()}"
    return report.failures[0].message


@pytest.mark.parametrize("seed", [SEED, 11])
@pytest.mark.parametrize("tag", ["01", "02", "04"])
def test_held_block_bounced_through_scratch_is_refused(tag, seed):
    """01, 02, 04: the held block's products take its rows through the program's own scratch; the tiles past the
    diagonal are judged against it (by the products: "with queries ... and keys ...")."""
    message = _refused(tag, seed)
    assert "Skip them" in message, message
    assert "queries 0-31 and keys 32-63" in message, message


@pytest.mark.parametrize("seed", [SEED, 11])
def test_whole_head_with_bounced_keys_is_refused(seed):
    """03: the program's bounced blocks of keys count their pairs: it multiplies a whole head."""
    message = _refused("03", seed)
    assert "a whole head alone" in message, message


@pytest.mark.parametrize("seed", [SEED, 11])
def test_second_product_with_the_last_queries_and_atomic_output_is_refused(seed):
    """17: a tile multiplied with the head's last queries as well (times 0) is judged, through the atomics that
    write o, against the rows of o its program writes."""
    message = _refused("17", seed)
    assert "Skip them" in message, message
    assert "the rows of o it stored next" in message, message


#: 17's next step: after each tile, every program adds zeros to o's last row (an atomic: no race), so that the
#: row written next after each tile is one that sees it.
ZERO_ADD = ("        m = m_new\n",
            "        m = m_new\n        tl.atomic_add(o_ptr + head * N_Q * HEAD_DIM + (N_Q - 1) * HEAD_DIM + dims,\n"
            "                      tl.zeros((HEAD_DIM,), tl.float32).to(o_ptr.dtype.element_ty))\n")


def test_atomic_zeros_into_another_programs_rows_mark_nothing():
    """17 with zeros added to o's last row after each tile: rows that several programs add to are no program's
    write, so each tile is still judged against the rows of o its program alone writes."""
    key, fn = load_attack_variant(find_attack(14, "17"), ZERO_ADD)
    report = _grade(key, fn)
    assert not report.passed, f"17 (zeros added to the last row) accepted by {key}:\n{report.text()}"
    assert "the rows of o it stored next" in report.failures[0].message, report.failures[0].message


def test_decoys_after_an_untracked_handover_are_no_block():
    """18: no product takes rows of q (an earlier kernel's buffer that is no copy of it); one-element decoys of
    q's last row, never multiplied, no longer pair with the walked tiles: the kernel is refused for the blocks it
    walks past each diagonal."""
    message = _refused("18")
    # Either rule may speak first: the pairing of walked tiles with held queries, or the rows of the product (which
    # sees queries 0-31 of program 0 walk keys 32-63). Both name blocks past the diagonal.
    assert ("no block of keys that a program of your kernel walked while it held a block of queries" in message
            or ("visited key blocks that no query of the program's block can see" in message
                and "program 0 of fwd_kernel with queries 0-31" in message)), message


@pytest.mark.parametrize("tag", sorted(SKIPPING))
def test_bounce_decoys_and_atomics_with_skipping_pass(tag):
    """01, 02, 04, 17 with their walks stopped at each block's diagonal: staging the held block through the
    program's own scratch, unused one-element loads, a second product and outputs by atomics change nothing for a
    walk that skips."""
    key, fn = load_attack_variant(find_attack(14, tag), *SKIPPING[tag])
    report = _grade(key, fn)
    assert report.passed, f"{tag} with skipping refused by {key}:\n{report.text()}"


@pytest.mark.parametrize("seed", [SEED, 11])
def test_fa2_backward_with_atomic_dq_passes_the_visits_case(seed):
    """Round 14's h04: dQ added with tl.atomic_add by every block of keys (atomics into an output are now
    writes the stored-rows rule judges)."""
    key, fn = load_attack(find_attack(14, "h04"))
    report = _grade(key, fn, seed)
    assert report.passed, f"h04 refused by {key} (seed {seed}):\n{report.text()}"
