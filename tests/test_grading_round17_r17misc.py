"""Round 17 (2026-12-06, ninth session), r17misc's part: files 11-15 of tests/grading_attacks_round17.

- 12 (L3.online): three passes per row for fp16 x, the row kept in a workspace of the function's own, two fp16
  values packed in each int32 lane. A 4-byte lane of the learner's memory counted as one value of a narrower x
  (meant for fp32 accumulators and ``x.float()``). Now a buffer a kernel stored anything but fp32 values into
  (int32, or bits reinterpreted with a bitcast) counts by bytes (``algorithm._packed``).
- 13 (L4.matmul): a 32-bit flat mask index ``pid_m * (BLOCK_M * tiles_n * BLOCK_N)`` with M's tiles on axis 1 took
  the split-K exemption (a program id of axis 1 or 2 times a slice rounded up). Now a program id that the kernel
  also uses as a block's index (times a constant, a loop bound, or a value made from it divided) is no split
  index (``frontend._block_axes``).
- 11, 14, 15 (L5.causal, L6.autograd, L6.backward): a far tile read one element a row in the same load as one
  whole row at the diagonal; the far rows fell below half of the load's row read most and dropped out. Now the
  rows a load read less of are a block of their own (``exercises._light_blocks``), never joined to its dense
  rows: each row a load's active lanes read less of is a block of its own, so the block that starts last (keys)
  or ends first (queries) is a far row.
"""

from __future__ import annotations

import pytest
import triton
import triton.language as tl

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 11
SKIP_CASES = {"L5.causal": "the key blocks it visits",
              "L6.backward": "the blocks of queries and keys the backward visits",
              "L6.autograd": "the blocks they visit"}


def _on_the_cpu() -> bool:
    import torch

    return not torch.cuda.is_available() or gpuperf.kernels.interpreter_enabled()


def _grade(key, fn, only=None, seed=SEED):
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("round 17 was run under the interpreter")
    report = grading.grade_report(key, fn, seed=seed, only=only)
    assert report.results, f"{key}: no case graded"
    return report


def _refused(report, *words):
    assert not report.passed, report.text()
    message = report.failures[0].message
    assert all(w in message for w in words), message
    return message


# ------------------------------------------------------------------------------------------------------------
# 12: two fp16 values packed in an int32 lane of the learner's workspace
# ------------------------------------------------------------------------------------------------------------

def _fp16(label):
    return "fp16" in label or "float16" in label


def test_fp16_pairs_packed_in_int32_lanes_count_by_bytes():
    key, fn = load_attack(find_attack(17, "12"))
    _refused(_grade(key, fn), "other memory", "three times")


def test_fp16_pairs_packed_and_bitcast_to_fp32_count_by_bytes_too():
    """The same workspace as fp32: the packed int32 bits stored through ``.to(tl.float32, bitcast=True)`` and
    bitcast back after the load. What was stored is bits reinterpreted, not values computed in fp32."""
    load = "\n            mask = start + cols < n_cols\n            packed = tl.load(ws_row + start // 2 + pairs, " \
           "mask=start + 2 * pairs < n_cols, other=0)"
    edits = [(f"# pass {p}: {what}{load}", f"# pass {p}: {what}{load}.to(tl.int32, bitcast=True)")
             for p, what in ((2, "the sum, from the workspace"), (3, "from the workspace again, normalise, write"))]
    key, fn = load_attack_variant(
        find_attack(17, "12"), *edits,
        ("lo_bits | hi_bits, mask", "(lo_bits | hi_bits).to(tl.float32, bitcast=True), mask"),
        ("dtype=torch.int32", "dtype=torch.float32"))
    _refused(_grade(key, fn), "other memory")


def test_fp16_values_stored_and_read_back_two_to_an_int32_lane_count_by_bytes():
    """The row stored as fp16 through a pointer cast (``ws_row.to(tl.pointer_type(tl.float16))``) and read back
    through the int32 pointer, two values a lane: fp16 values stored there, so the lanes count by bytes."""
    key, fn = load_attack_variant(
        find_attack(17, "12"),
        ("tl.store(ws_row + start // 2 + pairs, lo_bits | hi_bits, mask=start + 2 * pairs < n_cols)",
         "tl.store(ws_row.to(tl.pointer_type(tl.float16)) + start + cols, x, mask=mask)"))
    _refused(_grade(key, fn), "other memory")


def test_int32_lane_of_fp32_values_still_counts_as_one():
    """Unit: ``_worth`` of an fp32 lane over fp16 x is one value; once the buffer holds packed lanes, two."""
    from gpuperf.grading import algorithm

    launch = algorithm.Launch("k")
    launch.args = [("ws", 1000, 2000, 4, 250)]
    launch._grader_unit = 2
    trace = algorithm.Trace(launches=[launch])
    saved, algorithm._TRACE = algorithm._TRACE, trace
    try:
        assert algorithm._worth(launch, "ws", 8, 4) == 8
        trace._packed.append((1500, 1600))
        assert algorithm._worth(launch, "ws", 8, 4) == 16
    finally:
        algorithm._TRACE = saved


# ------------------------------------------------------------------------------------------------------------
# 13: M's tiles on axis 1, the bare program id times a padded tile
# ------------------------------------------------------------------------------------------------------------

def test_bare_axis1_pid_times_a_padded_tile_is_refused():
    key, fn = load_attack(find_attack(17, "13"))
    _refused(_grade(key, fn, only=lambda label: True), "32-bit product of the program id")


@triton.jit
def _split_kernel(x_ptr, M, N, K, BLOCK: tl.constexpr, HOW: tl.constexpr):
    pid_1 = tl.program_id(1)
    lanes = tl.arange(0, BLOCK)
    if HOW == 0:  # 13: the bare id times BLOCK * padded width; the same id a block's rows
        flat = pid_1 * (BLOCK * (tl.cdiv(N, BLOCK) * BLOCK)) + lanes
        rows = pid_1 * BLOCK + lanes
    elif HOW == 1:  # the rows got back by dividing the flat start
        start = pid_1 * (BLOCK * (tl.cdiv(N, BLOCK) * BLOCK))
        flat = start + lanes
        rows = start // (tl.cdiv(N, BLOCK) * BLOCK) + lanes
    elif HOW == 2:  # the rows by a shift
        flat = pid_1 * (BLOCK * (tl.cdiv(N, BLOCK) * BLOCK)) + lanes
        rows = (pid_1 << 4) + lanes
    else:  # a split index: only its slice of K (SPLIT = 1 folded)
        flat = pid_1 * (tl.cdiv(K, BLOCK) * BLOCK) + lanes
        rows = lanes
    mask = (flat < M * N) & (rows < M)
    x = tl.load(x_ptr + lanes, mask=mask, other=0.0)
    tl.store(x_ptr + lanes, x + 1, mask=mask)


@pytest.mark.parametrize("how,wraps", [(0, True), (1, True), (2, True), (3, False)])
def test_a_split_index_is_no_blocks_index(how, wraps):
    import torch

    from gpuperf.grading import frontend

    if frontend.unavailable():
        pytest.skip(frontend.unavailable())
    x = torch.randn(64)
    problem, ttir = frontend.lower(_split_kernel.fn, (x, 64, 48, 100), dict(BLOCK=16, HOW=how))
    assert ttir and not problem, problem
    assert frontend.wrapping_masks(ttir) == wraps


# ------------------------------------------------------------------------------------------------------------
# 11, 14, 15: one whole row at the diagonal inside the load of a far tile read one element a row
# ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tag,words", [("11", ("no query of the program's block can see", "fwd_kernel")),
                                       ("14", ("Function's forward", "no query of the program's block")),
                                       ("15", ("every key comes after every query",))])
def test_an_anchor_row_inside_the_far_load_hides_no_far_rows(tag, words):
    key, fn = load_attack(find_attack(17, tag))
    _refused(_grade(key, fn, only=lambda label: SKIP_CASES[key] in label), *words)


def test_light_rows_are_a_block_of_their_own():
    from gpuperf.grading.exercises import _judged_block, _judged_rows

    d, n = 16, 512

    def load(*pieces):
        return ([(a, b) for a, b, _ in pieces], [(a, b) for a, b, _ in pieces], list(pieces), list(pieces))

    # one load: a whole row at the diagonal (63) and the far rows 65-95 one element each
    inside = load((63, 63, float(d)), (65, 95, 1.0))
    assert _judged_block("k", _judged_rows([inside], n, d)) == (95, 95)
    # the light rows running on from the diagonal to the far end, the anchor further back: each row its own
    assert _judged_block("k", _judged_rows([load((40, 40, float(d)), (50, 95, 1.0))], n, d)) == (95, 95)
    # queries: the far rows before the anchor row end first
    assert _judged_block("q", _judged_rows([load((0, 30, 1.0), (63, 63, float(d)))], n, d)) == (0, 0)
    # a bridge inside the tile's load (one element of each row to the diagonal): the tile is judged
    assert _judged_block("k", _judged_rows([load((63, 95, 1.0), (96, 127, float(d)))], n, d)) == (96, 127)
    # masked-off lanes at a row read lightly (lanes pointed at a head's first element): no block
    masked = ([(96, 127)], [(0, 0), (96, 127)], [(96, 127, float(d))], [(0, 0, 1.0), (96, 127, float(d))])
    assert _judged_rows([masked], n, d) == [(96, 127)]
    # a tile read whole: one block
    assert _judged_rows([load((96, 127, float(d)))], n, d) == [(96, 127)]
