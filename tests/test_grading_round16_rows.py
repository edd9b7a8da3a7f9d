"""Round 16 (2026-12-06), r16rows' part: findings 1, 2 and 3 of tests/grading_attacks_round16/REPORT.md.

- Finding 1 (01, 02, 07: a bridge d/2 wide; 04, 05, 15: a narrow far tile beside one whole anchor row): a visited
  block's rows were those its loads together read at least half as much of as of the group's row read most. Each
  load is now judged by its own rows (``_load_blocks`` in ``_judged_rows``: dense against its own row read most
  of), and blocks of different loads join only across rows the loads together read whole (d elements): a
  bridge stays a block of its own, and an anchor row removes none of the tile's rows.
- Finding 2 (09): ``_unwrapped`` read a tile at a head's first rows and an anchor at its last row, two loads, as
  one wrapped tile. The skip checks now un-wrap load by load.
- Finding 3 (03): a program that multiplied every causal pair but one fit in the "strip" of its block of 255
  keys. The strip excuses a program only up to 3/4 of a head's pairs (a block of 128 on a head of 256: 74.9%).

Each file is graded on the case that refuses it, on seeds 11 and 12 (seconds each); round 16's honest files on
the cases the rules touch."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

#: The case of each exercise that counts the blocks a causal kernel visits (L6.backward's also runs the
#: half-head rule: N_q = 256).
SKIP_CASES = {"L5.causal": "the key blocks it visits",
              "L6.backward": "the blocks of queries and keys the backward visits",
              "L6.autograd": "the blocks they visit"}


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


def _grade(key, fn, seed):
    if not _interpreted_here():
        pytest.skip("the blocks a kernel visits are counted by the interpreter")
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=seed, only=lambda label: SKIP_CASES[key] in label)
    assert report.results, f"{key}: no case says {SKIP_CASES[key]!r}"
    return report


def _refused(tag, seed, key_fn=None):
    key, fn = key_fn or load_attack(find_attack(16, tag))
    report = _grade(key, fn, seed)
    assert not report.passed, f"{tag} accepted by {key} (seed {seed}):\n{report.text()}"
    return report.failures[0].message


@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("tag", ["01", "02", "07", "04", "05", "15", "09"])
def test_tiles_past_the_diagonal_are_judged_by_their_own_rows(tag, seed):
    """01, 02, 07 (a bridge of d/2 columns of every row up to the diagonal), 04, 05, 15 (a far tile read 7 of 16
    columns beside one whole row at the diagonal), 09 (query tile 0 beside the head's last query, two loads read
    as one wrapped tile): the tiles past the diagonal are visits no query (or key) of the block sees."""
    message = _refused(tag, seed)
    assert "Skip them" in message, f"{tag}: {message}"
    assert "every key comes after every query" in message or "no query of the program's block can see" in message


@pytest.mark.parametrize("seed", [11, 12])
def test_narrow_bridge_beside_a_narrow_tile_is_refused(seed):
    """01 with the far tile and the bridge both read 7 of the 16 columns of each row: alike, but no row of
    either is read whole, so they do not make one block (accepted before this change)."""
    variant = load_attack_variant(
        find_attack(16, "01"),
        ("k = tl.load(k_head + at[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)",
         "k = tl.load(k_head + at[:, None] * HEAD_DIM + tl.where(start > last_q, dims % 7, dims)[None, :], "
         "mask=keys[:, None] < N_K, other=0.0)"),
        ("half = tl.arange(0, HEAD_DIM // 2)", "half = tl.arange(0, HEAD_DIM) % 7"))
    message = _refused("01 narrow", seed, variant)
    assert "no query of the program's block can see" in message, message


@pytest.mark.parametrize("seed", [11, 12])
def test_every_key_but_one_is_most_of_a_head(seed):
    """03: program 0 of dK/dV holds keys 0-254 and walks every query: 32895 of 32896 causal pairs."""
    message = _refused("03", seed)
    assert "32895 of the 32896" in message and "more than half" in message and "most of a head alone" in message, \
        message
    assert "(99%" in message, message


@pytest.mark.parametrize("tag", ["h04", "h05", "h06", "h07", "h13", "h14"])
def test_honest_files_are_still_accepted(tag):
    """Round 16's honest files on the skip case (L6.backward's also runs the half-head rule): rows modulo N,
    the tutorial's blocks of 128 (strips of 3/4 of a head), a modulo walk, clamp-held rows, descriptors."""
    key, fn = load_attack(find_attack(16, tag))
    report = _grade(key, fn, 11)
    assert report.passed, f"{tag} refused by {key}:\n{report.text()}"


def test_each_load_keeps_its_own_rows():
    from gpuperf.grading.exercises import _judged_block, _judged_rows

    d, n = 16, 512

    def load(*pieces):  # every lane active: (active blocks, lane blocks, active pieces, lane pieces)
        return ([(a, b) for a, b, _ in pieces], [(a, b) for a, b, _ in pieces], list(pieces), list(pieces))

    tile = load((96, 127, float(d)))
    # a narrow tile (7 of 16 columns) beside one whole row at the diagonal: the tile keeps its rows
    narrow = load((96, 127, 7.0))
    anchor = load((63, 63, float(d)))
    assert _judged_rows([narrow, anchor], n, d) == [(63, 63), (96, 127)]
    assert _judged_block("k", _judged_rows([narrow, anchor], n, d)) == (96, 127)
    # a bridge of d/2 (or 7) columns of each row to the diagonal is a block of its own
    for each in (d / 2, 7.0, 1.0):
        bridge = load((63, 95, each))
        assert _judged_block("k", _judged_rows([tile, bridge], n, d)) == (96, 127), each
    # a narrow tile and a bridge alike (7 columns each): no row read whole, no block across them
    assert _judged_block("k", _judged_rows([load((96, 127, 7.0)), load((63, 95, 7.0))], n, d)) == (96, 127)
    # a block loaded in parts, or its head dimension in halves: rows read whole, one block
    assert _judged_rows([load((64, 95, float(d))), load((96, 127, float(d)))], n, d) == [(64, 127)]
    assert _judged_rows([load((64, 127, d / 2)), load((64, 127, d / 2))], n, d) == [(64, 127)]
    # a tile in halves with its second half masked off: the masked half is no rows
    half = ([], [(128, 159)], [], [(128, 159, float(d))])
    assert _judged_rows([tile, half], n, d) == [(96, 127)]


def test_a_wrap_is_one_loads_two_blocks():
    from gpuperf.grading.exercises import _judged_block, _judged_rows

    d, n = 16, 256

    def load(*pieces):
        return ([(a, b) for a, b, _ in pieces], [(a, b) for a, b, _ in pieces], list(pieces), list(pieces))

    # rows % N in one load: the tile is the block that ends the head
    assert _judged_rows([load((224, 255, float(d)), (0, 7, float(d)))], n, d) == [(224, 255)]
    # query tile 0 and the head's last query loaded beside it (two loads): no wrap, tile 0 is judged
    blocks = _judged_rows([load((0, 127, float(d))), load((255, 255, float(d)))], n, d)
    assert blocks == [(0, 127), (255, 255)] and _judged_block("q", blocks) == (0, 127)
