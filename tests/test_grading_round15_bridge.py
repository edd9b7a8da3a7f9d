"""Round 15 (2026-12-05), r15bridge's part: findings 1 and 5 of tests/grading_attacks_round15/REPORT.md.

- Finding 1 (01, 02, 07, 16): for each tile past the diagonal, a "bridge" load of one element (column 0) of every
  row between the tile and the diagonal made tile and bridge one visited block that reached the diagonal. A row
  of a visited block now counts only where the loads of the block read at least half as much of it as of the row
  they read most of (``_dense_blocks`` in ``_judged_rows``): a tile reads the head dimension of each of its rows,
  a bridge one element of each, so the tile is judged alone.
- Finding 5 (14): a 2-row decoy (lanes at key 0 and at the last key) widened the half-head rule's "strip" to the
  whole head. A strip is now taken from each block of rows a load read whole (``_whole_head_program``), and the
  pairs multiplied from the blocks of rows that reached the product, not from a load's first to its last row.

Each file is graded on the case that refuses it, on seeds 11 and 12 (seconds each)."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack

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


def _grade(tag, seed):
    if not _interpreted_here():
        pytest.skip("the blocks a kernel visits are counted by the interpreter")
    from gpuperf import grading

    key, fn = load_attack(find_attack(15, tag))
    report = grading.grade_report(key, fn, seed=seed, only=lambda label: SKIP_CASES[key] in label)
    assert report.results, f"{key}: no case says {SKIP_CASES[key]!r}"
    return key, report


@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("tag", ["01", "16", "02", "07"])
def test_bridge_to_the_diagonal_is_refused(tag, seed):
    """01 (forward, the bridge added times 0 to the tile), 16 (the bridge never used), 02 (backward, both walks),
    07 (01 and 02 through the Function): the tiles past the diagonal are judged alone."""
    key, report = _grade(tag, seed)
    assert not report.passed, f"{tag} accepted by {key} (seed {seed}):\n{report.text()}"
    message = report.failures[0].message
    assert "Skip them" in message, f"{tag} ({key}): {message}"
    assert "every key comes after every query" in message or "no query of the program's block can see" in message


@pytest.mark.parametrize("seed", [11, 12])
def test_two_row_decoy_does_not_widen_the_strip_of_a_whole_head_program(seed):
    """14: program 0 of dK, dV does 98% of a head; its decoy tile (key 0 and the last key) is two rows, no strip
    of every key."""
    key, report = _grade("14", seed)
    assert not report.passed, f"14 accepted by {key} (seed {seed}):\n{report.text()}"
    message = report.failures[0].message
    assert "more than half" in message and "most of a head alone" in message, message


@pytest.mark.parametrize("tag", ["h02", "h06"])
def test_honest_tiles_are_still_accepted(tag):
    """The honest controls: round 15's h02 (backward, the tutorial's blocks of 128: strips of 128 on a head of
    256) and h06 (causal forward, exp2)."""
    key, report = _grade(tag, 11)
    assert report.passed, f"{tag} refused by {key}:\n{report.text()}"


def test_a_row_counts_where_the_loads_read_most_of_it():
    from gpuperf.grading.exercises import _dense_blocks, _judged_rows

    d = 16
    tile = [(64, 95, float(d))]  # one run over 32 rows of a contiguous tensor
    bridge = [(row, row, 1.0) for row in range(63, 64)]  # one element of the row before it
    assert _dense_blocks(tile + bridge) == [(64, 95)]
    # K^T copied transposed: d runs of one element of each of the tile's rows add up to whole rows; a bridge
    # there is one run of one element per row
    transposed = [(64, 95, 1.0)] * d + [(40, 63, 1.0)]
    assert _dense_blocks(transposed) == [(64, 95)]
    # the head dimension in halves (two loads of d / 2 each) is whole rows, and a tile read in chunks of d / 4
    # alone is its rows
    assert _dense_blocks([(64, 95, d / 2), (64, 95, d / 2), (0, 63, 1.0)]) == [(64, 95)]
    assert _dense_blocks([(64, 95, d / 4)]) == [(64, 95)]
    # a tile loaded three times beside the next one loaded once: rows loaded twice are rows loaded (at most d)
    assert _dense_blocks([(64, 95, float(d))] * 3 + [(96, 127, float(d))], width=d) == [(64, 127)]
    # a visit: (active blocks, lane blocks, active pieces, lane pieces) per load; lanes masked off beside the tile
    # are no rows, a block with every lane masked off is visited
    tile_load = ([(64, 95)], [(64, 95)], tile, tile)
    bridge_load = ([(40, 63)], [(40, 295)], [(40, 63, 1.0)], [(40, 295, 1.0)])
    # (since round 16 each load keeps its own rows: the bridge is a block of its own, apart from the tile, and
    # a visit of keys is judged by the tile, the block starting last)
    assert _judged_rows([tile_load, bridge_load], 512) == [(40, 63), (64, 95)]
    half = ([], [(96, 127)], [], [(96, 127, float(d))])  # a tile in halves, its second half masked off
    assert _judged_rows([tile_load, half], 512) == [(64, 95)]
    masked = ([], [(160, 191)], [], [(160, 191, float(d))])
    assert _judged_rows([tile_load, masked], 512) == [(64, 95), (160, 191)]


def test_rows_spanned_reads_a_wrap_as_the_skip_checks_do():
    """A load is read the shorter way round a head only where :func:`_unwrapped` reads a wrap (two blocks, one
    at the head's first row, one ending at its last): lanes at both ends beside a block are every row between."""
    from gpuperf.grading.exercises import _rows_spanned

    n = 256
    assert _rows_spanned([(224, 255), (0, 7)], n) == 40  # rows % N
    assert _rows_spanned([(0, 0), (240, 255)], n) == 17  # clamped to row 0
    assert _rows_spanned([(0, 0), (64, 93), (255, 255)], n) == n  # round 15's 21: no wrap
    assert _rows_spanned([(0, 7), (100, 131)], n) == 132  # not at the head's last row: no wrap
