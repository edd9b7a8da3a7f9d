"""Round 16 (2026-12-06, ninth session), r16misc's part: findings 6 and 7 of tests/grading_attacks_round16/REPORT.md,
and round 16's honest files h02, h03, h10, h11.

- 06 (L3.online): a three-pass softmax hands its (rows + 1) x cols workspace to the kernel as its first column,
  ``ws[:, :1]``, a view of rows + 1 elements; ``_online_row_loads`` took an argument of at most 2 elements per row
  for a row's statistics and left its loads out. Statistics are now measured by the bytes of memory the arguments
  reach (first byte to last element, together over a launch): at most two values of 8 bytes per row. The
  allowance of two statistics loaded per row from a larger workspace is now two lanes whatever x's type (it was
  two fp32 values in x's elements, four for fp16: a 4-byte lane of the learner's memory already counts as one
  value of a narrower x, see ``algorithm._worth``).
- 12 (L4.matmul): round 15's 04 (a 32-bit flat mask index, ``rows32 * (tiles_n * BLOCK_N)``) with the tiles of M on
  grid axis 1: the mask rule's split-K exemption took any value made from a program id of axis 1 or 2 for a split
  index. Now only the program id itself (through casts) is one; a block's rows made from it are a position.
- Honest: h02 (L6.backward, FA2 layout, dQ by atomics into fp32), h03 (L6.autograd, fp32 dQ rounded once), h10
  (L5.forward on fp32 copies), h11 (L4.matmul, C kept in fp32): accepted (the L5/L6 ones on the cases that count
  their loads, scratch and visits).
"""

from __future__ import annotations

import pytest
import triton
import triton.language as tl

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 11


def _on_the_cpu() -> bool:
    import torch

    return not torch.cuda.is_available() or gpuperf.kernels.interpreter_enabled()


def _grade(key, fn, only=None):
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("round 16 was run under the interpreter")
    report = grading.grade_report(key, fn, seed=SEED, only=only)
    assert report.results, f"{key}: no case graded"
    return report


def _refused(report, *words):
    assert not report.passed, report.text()
    message = report.failures[0].message
    assert all(w in message for w in words), message
    return message


# ------------------------------------------------------------------------------------------------------------
# Finding 6: a view of one column of a whole workspace is no row's statistics
# ------------------------------------------------------------------------------------------------------------

def test_a_workspace_passed_as_one_column_is_read_back_as_a_pass():
    key, fn = load_attack(find_attack(16, "06"))
    report = _grade(key, fn)
    _refused(report, "other memory your kernels wrote and read back", "three times")


def test_a_workspace_passed_as_one_row_sized_slice_is_a_pass_too():
    """The workspace handed over as a flat view of its first rows + 1 elements, ``ws.view(-1)[: rows + 1]``: small
    in bytes too, but the kernel's lanes past it are refused ("wrote past the end of ws_ptr")."""
    path = find_attack(16, "06")
    key, fn = load_attack_variant(path, ("stats = ws[:, :1]", "stats = ws.view(-1)[: n_rows + 1]"))
    report = _grade(key, fn)
    _refused(report, "past the end")


def test_row_statistics_in_their_own_vectors_are_still_left_out():
    """Round 10's h35 and h36 (m and l in two fp32 vectors, h36 reading them once per block of a row) and round 11's
    h05 (m and l in one workspace of max(2 rows, 256) fp32 values): every case."""
    for round_number, tag in ((10, "h35"), (10, "h36"), (11, "h05")):
        key, fn = load_attack(find_attack(round_number, tag))
        report = _grade(key, fn)
        assert report.passed, f"round {round_number}'s {tag}:\n{report.text()}"


@pytest.mark.parametrize("round_number,tag", [(5, "h04"), (6, "h03"), (16, "h09")])
def test_honest_online_softmaxes_stay_accepted(round_number, tag):
    key, fn = load_attack(find_attack(round_number, tag))
    report = _grade(key, fn)
    assert report.passed, report.text()


def test_the_statistics_budget_is_two_lanes_a_row_for_fp16_too():
    """``_online_row_loads`` directly: a workspace larger than the statistics, read 2 lanes a row, is free; 4 lanes
    a row (fp16 x: once two fp32 values "in x's elements") count past the two."""
    import torch

    from gpuperf.grading import algorithm, exercises

    x = torch.zeros((3, 1000), dtype=torch.float16)
    y = torch.zeros_like(x)
    work = torch.zeros(4096, dtype=torch.float32)
    launch = algorithm.Launch("normalize")
    launch.args = [("work", work.data_ptr(), work.data_ptr() + 4 * 4096, 4, 4096)]
    trace = algorithm.Trace(launches=[launch])
    launch.loaded = {"work": 2 * 3}
    assert exercises._online_row_loads(trace, x, y, 3) == (0, 0)
    launch.loaded = {"work": 4 * 3}
    assert exercises._online_row_loads(trace, x, y, 3) == (0, 6)


# ------------------------------------------------------------------------------------------------------------
# Finding 7: a block's rows on grid axis 1 are no split index
# ------------------------------------------------------------------------------------------------------------

def test_a_padded_width_mask_with_tiles_of_m_on_axis_1_is_refused():
    key, fn = load_attack(find_attack(16, "12"))
    report = _grade(key, fn, only=lambda label: True)
    _refused(report, "32-bit product of the program id", "tiles_n * BLOCK_N")


@pytest.mark.parametrize("round_number,tag", [(15, "h08"), (5, "h03"), (6, "h06"), (6, "h07"), (16, "h11")])
def test_honest_split_k_matmuls_stay_accepted(round_number, tag):
    """Split-K by atomics (round 15's h08 with SPLIT = 1 folded, round 6's h06, h07) and by two launches (round 5's
    h03), and round 16's h11 (C kept in fp32, rounded once): every case."""
    key, fn = load_attack(find_attack(round_number, tag))
    report = _grade(key, fn)
    assert report.passed, report.text()


@triton.jit
def _axis1_kernel(x_ptr, M, N, K, SPLIT, BLOCK: tl.constexpr, CSPLIT: tl.constexpr, HOW: tl.constexpr):
    pid_1 = tl.program_id(1)
    lanes = tl.arange(0, BLOCK)
    if HOW == 0:  # 12: a block's rows on axis 1 times the padded row length
        flat = (pid_1 * BLOCK + lanes) * (tl.cdiv(N, BLOCK) * BLOCK) + lanes
    elif HOW == 1:  # the block's first row on axis 1 times the padded row length
        flat = (pid_1 * BLOCK) * (tl.cdiv(N, BLOCK) * BLOCK) + lanes
    elif HOW == 2:  # the row on axis 1 plus one, times the padded length
        flat = (pid_1 + 1) * (tl.cdiv(N, 16) * 16) + lanes
    elif HOW == 3:  # the split index times its slice of K, SPLIT folded (1) or not
        flat = pid_1 * (tl.cdiv(K, SPLIT * BLOCK) * BLOCK) + lanes
    elif HOW == 4:
        flat = pid_1 * (tl.cdiv(K, CSPLIT * BLOCK) * BLOCK) + lanes
    elif HOW == 5:  # cast first
        flat = pid_1.to(tl.int32) * (tl.cdiv(K, CSPLIT * BLOCK) * BLOCK) + lanes
    elif HOW == 6:  # pid_k * BLOCK_K * steps
        flat = pid_1 * BLOCK * tl.cdiv(tl.cdiv(K, BLOCK), SPLIT) + lanes
    else:
        flat = pid_1 * tl.cdiv(K, SPLIT) + lanes
    mask = flat < K
    x = tl.load(x_ptr + lanes, mask=mask, other=0.0)
    tl.store(x_ptr + lanes, x + 1, mask=mask)


@pytest.mark.parametrize("split", [4, 1])
@pytest.mark.parametrize("how,wraps", [(0, True), (1, True), (2, True), (3, False), (4, False), (5, False),
                                       (6, False), (7, False)])
def test_only_the_split_index_itself_times_a_slice_of_k_is_exempt(how, wraps, split):
    import torch

    from gpuperf.grading import frontend

    if frontend.unavailable():
        pytest.skip(frontend.unavailable())
    x = torch.randn(64)
    problem, ttir = frontend.lower(_axis1_kernel.fn, (x, 64, 48, 100, split), dict(BLOCK=16, CSPLIT=split, HOW=how))
    assert ttir and not problem, problem
    assert frontend.wrapping_masks(ttir) == wraps


# ------------------------------------------------------------------------------------------------------------
# Round 16's honest files not read elsewhere
# ------------------------------------------------------------------------------------------------------------

#: The cases of each exercise that count loads, scratch and the blocks visited (fp16 inputs where fp32 memory of
#: the learner's counts).
_COUNTED = {
    "L5.forward": ("N_q=16 N_k=4096 d=16 fp16", "N_q=75 N_k=75 d=32 fp16", "how the queries are split"),
    "L6.backward": ("N_q=4096 N_k=32 d=16 fp16 full, q = 0", "N_q=117 N_k=117 d=32 fp16 causal",
                    "the blocks of queries and keys the backward visits"),
    "L6.autograd": ("N_q=4096 N_k=32 d=16 fp16", "N_q=97 N_k=97 d=32 fp16 causal", "the blocks they visit"),
}


@pytest.mark.parametrize("tag", ["h02", "h03", "h10"])
def test_round_16_honest_attention_files_are_accepted(tag):
    key, fn = load_attack(find_attack(16, tag))
    words = _COUNTED[key]
    report = _grade(key, fn, only=lambda label: any(w in label for w in words))
    assert len(report.results) >= len(words), [r.case for r in report.results]
    assert report.passed, report.text()
