"""Round 19's holes (2026-12-06, eleventh session): three holes the tenth session's helpers named and left open
(bench/NOTES.md, "r18axes" and "r18clone"), each with a wrong solution the grader accepted, in
tests/grading_attacks_round19_holes/.

- 01 (L4.matmul): round 18's 07 with the tile's rows made as ``pid_m.to(tl.int64) * bm``, ``bm`` a plain int
  argument equal to BLOCK_M: ``frontend._block_axes`` saw no product of axis 1's id with a constant, so axis 1
  stayed a split index and its bare id times a padded tile of C in the store's 32-bit mask was exempt. The
  exemption now holds only on an axis of the launch's grid with one program (split-K with its split count
  folded to 1 runs one program there): ``frontend.wrapping_masks(ttir, grid=...)``.
- 02a, 02b (L3.softmax): a loop of one-program launches into a buffer, handed back through a copy of 16-byte
  elements (``big.view(torch.complex128).clone()``: only one value in four was followed back) or through
  ``out.copy_(buf)`` made in a grid function (the copy tracker recorded nothing while the watch was paused for
  Triton's launch code).
- 03 (L5.forward): a loop of one-program launches per block of queries into a padded O (``buf[..., :d]``), each
  launch with 32 more programs storing zeros into the padding of the block's rows: the launch-loop rule decoded
  every write in O's span into O's rows (no element filter for a 4-D output).

L5 files are graded only on the case that refuses them (seconds each)."""

from __future__ import annotations

from pathlib import Path

# the interpreter switch first, before triton is imported (imported after triton, in a run of this file alone,
# Triton's interpreter raised "Cannot call @triton.jit'd outside of the scope of a kernel" at tl.cdiv in the
# grader's runs: round 18's test_grading_round18_axes.py does so when run alone on this session's venv)
import gpuperf.kernels  # noqa: F401, I001
import pytest
import triton
import triton.language as tl

from attack_files import load_attack, load_attack_variant

FOLDER = Path(__file__).resolve().parent / "grading_attacks_round19_holes"
SEED = 11
SOFTMAX = "x 3x39 fp32"
INTERPRETER = "interpreter on the CPU"


def _file(tag: str) -> Path:
    found = sorted(FOLDER.glob(f"{tag}_*.py"))
    assert found, f"no file {tag}_*.py in {FOLDER}"
    return found[0]


def _interpreted_here() -> bool:
    import torch

    # the CPU's case labels and messages: on a GPU (with GPUPERF_GRADING_INTERPRET_ON_GPU=1) the labels differ
    # and a race shows in the compiled case's values first (an H100, 2026-12-06)
    return not torch.cuda.is_available()


def _grade(key, fn, words=None, stop=False):
    from gpuperf import grading

    if words is None:
        return grading.grade_report(key, fn, seed=SEED, stop_at_first_failure=stop)
    if not _interpreted_here():
        pytest.skip("the programs that write an output are counted by the interpreter's trace")
    report = grading.grade_report(key, fn, seed=SEED, only=lambda label: words in label)
    assert report.results, f"{key}: no case says {words!r}"
    return report


def _refused(report, *words):
    assert not report.passed, report.text()
    message = report.failures[0].message
    assert all(w in message for w in words), message
    return message


def _passed(report):
    assert report.passed, report.text()


def test_every_file_of_round_19_holes_is_tested():
    text = Path(__file__).read_text()
    for path in sorted(FOLDER.glob("*.py")):
        tag = path.name.split("_")[0]
        assert f'_file("{tag}")' in text or f'"{tag}"' in text, f"{path.name} is not read by a test"


# ---- (a) 01: the 32-bit mask rule's split exemption --------------------------------------------------------


def test_01_rows_times_a_runtime_block_size_are_a_blocks_rows():
    key, fn = load_attack(_file("01"))
    _refused(_grade(key, fn, stop=True), "32-bit product of the program id")


def test_01_with_a_grid_function_that_answers_the_grader_otherwise():
    """The grader reads the grid before the launch (calling a grid function once); Triton called it again. A grid
    function that gave one program on axis 1 to the first call and M's tiles to the second was read again with
    the grid Triton used. Since round 23 the interpreted launch runs the grid the grader read (Triton does not
    call the function again): one program on axis 1, and the rows past it unwritten."""
    key, fn = load_attack_variant(_file("01"), (
        "    grid = (triton.cdiv(N, block_n), triton.cdiv(M, block_m))\n",
        "    calls = []\n\n"
        "    def grid(meta):\n"
        "        calls.append(1)\n"
        "        return (-(-N // block_n), 1 if len(calls) % 2 else -(-M // block_m))\n"))
    report = _grade(key, fn, stop=True)
    assert not report.passed, report.text()


@triton.jit
def _split_kernel(x_ptr, K, BLOCK: tl.constexpr):
    pid_k = tl.program_id(1)
    lanes = tl.arange(0, BLOCK)
    per = tl.cdiv(K, BLOCK) * BLOCK  # split-K's slice with its split count folded to 1: rounded to blocks
    ks = pid_k * per + lanes
    x = tl.load(x_ptr + lanes, mask=ks < K, other=0.0)
    tl.store(x_ptr + lanes, x + 1, mask=ks < K)


@pytest.mark.parametrize("grid,wraps", [((4, 1, 1), False), ((4, 2, 1), True), (None, False)])
def test_a_split_index_times_a_rounded_slice_is_exempt_only_on_an_axis_of_one_program(grid, wraps):
    import torch

    from gpuperf.grading import frontend

    if frontend.unavailable():
        pytest.skip(frontend.unavailable())
    problem, ttir = frontend.lower(_split_kernel.fn, (torch.randn(64), 48), dict(BLOCK=16))
    assert ttir and not problem, problem
    assert frontend.wrapping_masks(ttir, grid=grid) == wraps


# ---- (b) 02a, 02b: outputs handed back through copies the tracker did not follow ----------------------------


@pytest.mark.parametrize("tag", ["02a", "02b"])
def test_02_a_loop_of_one_program_launches_handed_back_through_a_copy(tag):
    key, fn = load_attack(_file(tag))
    _refused(_grade(key, fn, SOFTMAX), "3 times in one call", "1 program(s) or fewer")


def test_02b_refused_by_the_whole_grade():
    import torch

    from gpuperf import grading

    if torch.cuda.is_available() and not grading.INTERPRET_ON_GPU:  # right values: only the count refuses it
        pytest.skip("the programs that write the rows are counted by L3.softmax's interpreted case, off on a GPU "
                    "machine (labs/README.md)")
    key, fn = load_attack(_file("02b"))
    _refused(_grade(key, fn, stop=True), "program(s) or fewer")


_ONE_LAUNCH = ("    for row in range(n_rows):  # one row per launch, one program each\n"
               "        softmax_row_kernel[(1,)](x, buf, row, n_cols, x.stride(0), buf.stride(0), BLOCK=block)\n",
               "    softmax_row_kernel[(n_rows,)](x, buf, 0, n_cols, x.stride(0), buf.stride(0), BLOCK=block)\n")


@pytest.mark.parametrize("tag", ["02a", "02b"])
def test_02_one_launch_on_the_full_grid_handed_back_the_same_way_passes(tag):
    key, fn = load_attack_variant(_file(tag), _ONE_LAUNCH)
    _passed(_grade(key, fn, SOFTMAX))


# ---- (c) 03: writes into an output's padding ----------------------------------------------------------------


def test_03_writes_into_the_padding_of_o_are_not_programs_on_its_rows():
    key, fn = load_attack(_file("03"))
    _refused(_grade(key, fn, INTERPRETER), "10 times in one call", "1 program(s) or fewer")


def test_03_one_launch_over_the_blocks_into_a_padded_o_passes():
    key, fn = load_attack_variant(
        _file("03"),
        ("    head = tl.program_id(1).to(tl.int64)  # one (batch, head) pair per column of the grid\n",
         "    block_m = block_m + tl.program_id(2)  # the blocks of queries on the grid's third axis\n"
         "    head = tl.program_id(1).to(tl.int64)  # one (batch, head) pair per column of the grid\n"),
        ("    for block_m in range(triton.cdiv(n_q, 32)):", "    for block_m in range(1):"),
        ("attention_forward_kernel[(33, batch * heads)]",
         "attention_forward_kernel[(33, batch * heads, triton.cdiv(n_q, 32))]"))
    _passed(_grade(key, fn, INTERPRETER))


def test_the_elements_of_a_padded_or_interleaved_4d_output():
    import numpy as np
    import torch

    from gpuperf.grading.exercises import _element_addresses

    padded = torch.empty(2, 3, 5, 12)[..., :8]
    interleaved = torch.empty(2, 5, 3, 8).permute(0, 2, 1, 3)
    for t, span in ((padded, 2 * 3 * 5 * 12), (interleaved, 2 * 5 * 3 * 8)):
        keep = _element_addresses(t)
        assert keep is not None
        addresses = np.arange(t.data_ptr(), t.data_ptr() + span * 4, 4, dtype=np.uint64)
        assert int(keep(addresses).sum()) == t.numel()
        assert not keep(addresses + np.uint64(2)).any()  # inside an element, not at its start
    assert _element_addresses(torch.empty(4, 4, 4)[:, ::2]) is not None
    assert _element_addresses(torch.empty(4, 4, 4).expand(2, 4, 4, 4)) is None  # a stride of 0: the span
