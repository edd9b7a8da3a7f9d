"""Round 14 (2026-12-05), r14rows's part: finding 2 of tests/grading_attacks_round14/REPORT.md (05, 06, 13).

A tile past the causal diagonal held 31 rows and, in one more lane, a row the held block sees (key 0; or, as a
query, the held block's first key), masked out of P. The skip checks read a visit as the span of its lanes (first
row, last row), so every such tile looked visible. A visit is now read as the blocks of rows its active lanes
cover (``Launch.visit_runs``, ``_visit_rows``), and judged by the block the held block sees least
(``_judged_block``): a visit any block of which is hidden is hidden. The block of the other tensor a product took
is read the same way. A head's first row alone, in a visit that reaches a head's last row, is left out: the lanes
of a tile past the sequence's end clamped to row 0 (``tl.where(rows < N, rows, 0)``), loaded unmasked.

Each wrong file is graded on the case that counts the blocks it visits (``only=``); the controls are the same
files with the decoy lane taken out (still refused: they skip nothing) or with the walks skipping as the lab asks
(accepted, with the decoy lanes left in the tiles they visit), and honest kernels whose last tile runs past N,
masked."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 20261205

#: The case of each exercise that counts the blocks a causal kernel visits.
SKIP_CASES = {"L5.causal": "the key blocks it visits",
              "L6.backward": "the blocks of queries and keys the backward visits",
              "L6.autograd": "the blocks they visit"}


def _grade(key, fn, seed=SEED):
    import torch

    from gpuperf import grading

    if torch.cuda.is_available() and not grading.INTERPRET_ON_GPU:
        pytest.skip("the blocks a kernel visits are counted by the interpreter")
    report = grading.grade_report(key, fn, seed=seed, only=lambda label: SKIP_CASES[key] in label)
    assert report.results, f"{key}: no case says {SKIP_CASES[key]!r}"
    return report


def _refused(key, fn, tag, seed=SEED) -> str:
    report = _grade(key, fn, seed)
    assert not report.passed, f"{tag} accepted by {key} (seed {seed}):\n{report.text()}"
    message = report.failures[0].message
    assert "Skip them" in message, f"{tag} ({key}): {message}"
    return message


def _accepted(key, fn, tag, seed=SEED) -> None:
    report = _grade(key, fn, seed)
    assert report.passed, f"{tag} refused by {key} (seed {seed}):\n{report.text()}"


# ---- the edits: 05's forward (also 13's), 06's backward (also 13's) ---------------------------------------------

FWD_DECOY = ("            phys = tl.where(lanes == BLOCK_N - 1, 0, keys)  # lane 31 loads key 0\n",
             "            phys = keys\n")
FWD_SKIPS = ("        end = tl.minimum(N_K, N_Q)  # no skipping of the blocks past the diagonal\n",
             "        end = tl.minimum(N_K, block_m * BLOCK_M + BLOCK_M)  # the diagonal\n")
DKDV_DECOY = ("        decoy = (lanes == BLOCK_M - 1) & (lanes * 0 + m0 + STEP - 1 < first_key)  # only in a tile the keys "
              "cannot see\n", "        decoy = lanes < 0\n")
DQ_DECOY = ("        decoy = (lanes == BLOCK_N - 1) & (lanes * 0 + n0 > block_m * BLOCK_M + BLOCK_M - 1)  # only in a "
            "hidden tile\n", "        decoy = lanes < 0\n")
#: key 0 in every tile the dQ walk visits (a row every query sees, in tiles the held block sees; the dK, dV walk
#: keeps its decoy for the tiles it no longer visits: a query far from its tile in every tile would make one load
#: cover all N queries, which _backward_blocks_check refuses by itself)
DQ_DECOY_EVERYWHERE = (DQ_DECOY[0], "        decoy = lanes == BLOCK_N - 1\n")
DKDV_SKIPS = ("    for t in range(0, n_tiles):  # every block of queries (last to first): no skipping\n",
              "    for t in range(0, n_tiles - first_key // STEP):  # down to the block of queries holding first_key\n")
DQ_SKIPS = ("        end = tl.minimum(N_K, N_Q)  # not the diagonal: every block up to the last query\n",
            "        end = tl.minimum(N_K, block_m * BLOCK_M + BLOCK_M)  # the diagonal\n")


# ---- the wrong files: refused ------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [SEED, 11])
def test_r14_05_forward_lane_decoy_is_refused(seed):
    key, fn = load_attack(find_attack(14, "05"))
    message = _refused(key, fn, "05", seed)
    assert "queries 0-31 and keys 62-92" in message, message


@pytest.mark.parametrize("seed", [SEED, 11])
def test_r14_06_backward_lane_decoy_is_refused(seed):
    key, fn = load_attack(find_attack(14, "06"))
    message = _refused(key, fn, "06", seed)
    assert "queries 0-30 and keys 32-63" in message, message


@pytest.mark.parametrize("seed", [SEED, 11])
def test_r14_13_autograd_lane_decoy_is_refused(seed):
    key, fn = load_attack(find_attack(14, "13"))
    _refused(key, fn, "13", seed)


@pytest.mark.parametrize("walk", ["dK, dV", "dQ"])
def test_r14_06_each_walk_alone_is_refused(walk):
    """The other walk skipping as the lab asks: the decoy lanes of one walk are refused by themselves."""
    path = find_attack(14, "06")
    key, fn = load_attack_variant(path, DQ_SKIPS) if walk == "dK, dV" else load_attack_variant(path, DKDV_SKIPS)
    message = _refused(key, fn, f"06 ({walk} walk)")
    assert ("dkdv_kernel" if walk == "dK, dV" else "dq_kernel") in message, message


def test_r14_13_backward_lane_decoy_is_refused_behind_a_forward_that_skips():
    key, fn = load_attack_variant(find_attack(14, "13"), FWD_SKIPS)
    message = _refused(key, fn, "13 (forward skipping)")
    assert "backward" in message, message


#: 06's dQ programs holding 31 queries and, in lane 31, a query up to 96 rows further (not stored, masked out of P),
#: walking the keys up to that far query's diagonal, and adding their dQ by tl.atomic_add into zeros (which the
#: rule that reads the rows of dQ a program stores does not see); the dK, dV walk skipping
HELD_DECOY = (
    DKDV_SKIPS, DKDV_DECOY, DQ_DECOY,
    ("    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)\n",
     "    rows = block_m * (BLOCK_M - 1) + tl.arange(0, BLOCK_M)\n"
     "    mine = (tl.arange(0, BLOCK_M) < BLOCK_M - 1) & (rows < N_Q)\n"
     "    far = tl.minimum(block_m * (BLOCK_M - 1) + 127, N_Q - 1)\n"
     "    held = tl.where(tl.arange(0, BLOCK_M) == BLOCK_M - 1, far, rows)\n"),
    ("    q = tl.load(q_ptr + q_offsets, mask=rows[:, None] < N_Q, other=0.0)\n",
     "    q = tl.load(q_ptr + head * N_Q * HEAD_DIM + held[:, None] * HEAD_DIM + dims[None, :], "
     "mask=held[:, None] < N_Q, other=0.0)\n"),
    (DQ_SKIPS[0], "        end = tl.minimum(N_K, far + 1)  # the far query's diagonal\n"),
    ("        visible = (rows[:, None] < N_Q) & real[None, :]\n", "        visible = mine[:, None] & real[None, :]\n"),
    ("    tl.store(dq_ptr + q_offsets, (dq * scale).to(dq_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)",
     "    tl.atomic_add(dq_ptr + q_offsets, (dq * scale).to(dq_ptr.dtype.element_ty), mask=mine[:, None])"),
    ("dq, dk, dv = torch.empty_like(q), torch.empty_like(k)", "dq, dk, dv = torch.zeros_like(q), torch.empty_like(k)"),
    ("dq_kernel[(triton.cdiv(n_q, block), heads_total)]", "dq_kernel[(triton.cdiv(n_q, block - 1), heads_total)]"),
)


def test_r14_a_lane_far_from_the_held_block_is_refused():
    """The same trick on the held side (accepted before this fix, dQ added by atomics): a block of queries with
    one lane far down the sequence is read as its blocks, and each tile of keys is judged against the one ending
    first (31 queries), not against rows 0-127."""
    key, fn = load_attack_variant(find_attack(14, "06"), *HELD_DECOY)
    message = _refused(key, fn, "06 with a far lane in the held block")
    assert "dq_kernel" in message and "queries 0-30" in message, message


# ---- controls: the decoy taken out (still refused), the walks skipping (accepted) --------------------------------


@pytest.mark.parametrize("tag, edits", [("05", (FWD_DECOY,)), ("06", (DKDV_DECOY, DQ_DECOY)),
                                        ("13", (FWD_DECOY, DKDV_DECOY, DQ_DECOY))])
def test_r14_lane_decoy_files_without_the_decoy_keep_their_verdict(tag, edits):
    key, fn = load_attack_variant(find_attack(14, tag), *edits)
    _refused(key, fn, f"{tag} without its decoy lane")


@pytest.mark.parametrize("tag, edits", [
    ("05", (FWD_SKIPS,)),
    ("06", (DKDV_SKIPS, DQ_SKIPS, DQ_DECOY_EVERYWHERE)),
    ("13", (FWD_SKIPS, DKDV_SKIPS, DQ_SKIPS, DQ_DECOY_EVERYWHERE)),
])
def test_r14_lane_decoy_files_that_skip_are_accepted(tag, edits):
    """Tiles of 31 rows and a lane at a row the held block sees, in the tiles a skipping walk visits only: no
    tile past the diagonal, so nothing to refuse (a lane away from its tile is no fault by itself)."""
    key, fn = load_attack_variant(find_attack(14, tag), *edits)
    _accepted(key, fn, f"{tag} skipping")


# ---- honest kernels whose last tile runs past N ------------------------------------------------------------------

#: 06 made honest: blocks of 32 rows, both walks skipping, no decoy; the last tile of each walk runs past N
HONEST_BACKWARD = (
    DKDV_SKIPS, DQ_SKIPS, DKDV_DECOY, DQ_DECOY,
    ("    STEP: tl.constexpr = BLOCK_M - 1 if CAUSAL else BLOCK_M\n", "    STEP: tl.constexpr = BLOCK_M\n"),
    ("    STEP: tl.constexpr = BLOCK_N - 1 if CAUSAL else BLOCK_N\n", "    STEP: tl.constexpr = BLOCK_N\n"),
)
HONEST_FORWARD = (FWD_SKIPS, FWD_DECOY,
                  ("    STEP: tl.constexpr = BLOCK_N - 1 if CAUSAL else BLOCK_N\n", "    STEP: tl.constexpr = BLOCK_N\n"))


@pytest.mark.parametrize("seed", [SEED, 11])
@pytest.mark.parametrize("tag, edits", [("05", HONEST_FORWARD), ("06", HONEST_BACKWARD)],
                         ids=["forward", "backward"])
def test_honest_last_tile_partly_masked_at_n_is_accepted(tag, edits, seed):
    """Tiles of 32 rows, the walks skipping: the last tile of each walk (and the last held block) runs past N,
    its lanes there masked off (N_q, N_k not multiples of 32 in the case's second shape)."""
    key, fn = load_attack_variant(find_attack(14, tag), *edits)
    _accepted(key, fn, f"{tag} honest", seed)


def test_a_tile_clamped_to_row_0_past_the_end_is_one_block():
    """A tile whose rows past N were clamped to row 0 and loaded unmasked (``tl.where(rows < N, rows, 0)``) is
    the block it walks, not a block at row 0 besides (which a walk of queries would read as hidden from every
    key block but the first); a tile with one lane at another row keeps that row as a block of its own. (The
    whole kernel is refused elsewhere for now: the width rules read a load by its span, rows 0 to N - 1.)"""
    from types import SimpleNamespace

    from gpuperf.grading.exercises import _judged_block, _judged_rows, _visit_rows

    n, row_bytes = 90, 64
    rows = lambda address: address // row_bytes  # noqa: E731  (a contiguous head of 90 rows of 16 fp32)

    def judged(runs, active_runs=None):
        launch = SimpleNamespace(visit_runs={0: (active_runs or runs, runs)})
        return _judged_rows([_visit_rows(launch, 0, rows, None, None)], n)

    tail = (64 * row_bytes, n * row_bytes - 1)  # rows 64-89 of the last tile
    assert judged(((0, row_bytes - 1), tail)) == [(64, 89)]
    second_head = ((n * row_bytes, (n + 1) * row_bytes - 1), (n * row_bytes + tail[0], n * row_bytes + tail[1]))
    assert judged(second_head) == [(154, 179)]
    blocks = judged(((0, 31 * row_bytes - 1), (40 * row_bytes, 41 * row_bytes - 1)))
    assert blocks == [(0, 30), (40, 40)]
    assert _judged_block("q", blocks) == (0, 30) and _judged_block("k", blocks) == (40, 40)
    # masked-off lanes of a block with active rows are no rows; a block of masked-off lanes alone is visited
    assert judged(((0, 63 * row_bytes),), ((0, 15 * row_bytes),)) == [(0, 15)]
