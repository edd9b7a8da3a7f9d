"""Round 20's escape and false positive (2026-12-06, twelfth session), in tests/grading_attacks_round20/.

- 45 (L3.softmax): the kernel only ``tl.device_print``s its rows; the wrapper reads the interpreter's printout
  (``contextlib.redirect_stdout``), computes the softmax in Python and writes y with per-element ``fill_``. A
  graded kernel whose TTIR prints (``tt.print``: ``tl.device_print``, or ``print`` inside ``@triton.jit``) is now
  refused on every machine (the check runs where the kernel is lowered, the interpreter's launch and a GPU's),
  and what an interpreted kernel prints otherwise (``tl.static_print`` is Python's ``print`` there) goes to a
  buffer the reader's code never sees.
- h11 (L5.forward, honest split-KV): ``lo = split * KEYS_PER_SPLIT`` with ``split = tl.program_id(2)`` in 32 bits
  reaches the loop's keys, the addresses and the mask ``keys < hi``. Refused by the 32-bit rules in round 20;
  accepted since the thirteenth session, whose rules let a program id times an integer argument through where
  every launch keeps it below one dimension of the inputs (tests/test_grading_round21_h11.py);
  ``excluded/h15`` (the split's id converted to int64) passes.

Only the case that decides each verdict runs (seconds each)."""

from __future__ import annotations

from pathlib import Path

# the interpreter switch first, before triton is imported (see tests/test_grading_round19_holes.py)
import gpuperf.kernels  # noqa: F401, I001
import pytest
import triton
import triton.language as tl

from attack_files import attack_folder, load_attack, load_attack_variant

SEED = 11
PRINTS = "remove tl.device_print before grading"


def _file(tag: str) -> Path:
    folder = attack_folder(20)
    found = sorted(folder.glob(f"{tag}_*.py")) or sorted((folder / "excluded").glob(f"{tag}_*.py"))
    assert found, f"no file {tag}_*.py in {folder}"
    return found[0]


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


def _grade(key, fn, only=None):
    from gpuperf import grading

    return grading.grade_report(key, fn, seed=SEED, stop_at_first_failure=True, only=only)


def _refused(report, *words):
    assert not report.passed, report.text()
    message = report.failures[0].message
    assert all(w in message for w in words), message
    return message


def test_45_a_kernel_that_device_prints_is_refused():
    key, fn = load_attack(_file("45"))
    _refused(_grade(key, fn), PRINTS, "tl.device_print")


def test_45_with_python_print_in_the_kernel_is_refused():
    """``print`` inside ``@triton.jit`` is Triton's device_print: the same ``tt.print`` in the TTIR."""
    key, fn = load_attack_variant(_file("45"), ('    tl.device_print("row", x)\n', '    print("row", x)\n'))
    _refused(_grade(key, fn), PRINTS)


@triton.jit
def _static_print_kernel(x_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
    tl.static_print("row", x)


def test_static_print_prints_nothing_the_reader_can_read():
    """Under the interpreter ``tl.static_print`` is Python's ``print`` of the block's values (a GPU prints its
    type while compiling): a launch's output goes to a buffer of the grader's, so a reader that captures
    stdout around a launch reads at most the block's type (the front end prints it while lowering)."""
    import contextlib
    import io
    import re

    if not _interpreted_here():
        pytest.skip("tl.static_print prints values only under the interpreter")
    key, honest = load_attack(_file("h01"))
    captured = []

    def reader(x):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            _static_print_kernel[(1,)](x, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        captured.append(buf.getvalue())
        return honest(x)

    report = _grade(key, reader, only=lambda label: "x 3x39 " in label)
    assert report.results and report.passed, report.text()
    types = r"\w+\[constexpr\[\d+\]\]"  # what the front end prints while lowering: the block's type
    assert captured and not any(re.search(r"\d", re.sub(types, "", text)) for text in captured), captured


def test_a_correct_kernel_that_static_prints_still_passes():
    """tl.static_print stays allowed (it carries no value out of the kernel once its output is kept from the
    reader)."""
    key, fn = load_attack_variant(_file("h01"), *_static_print_edit(_file("h01")))
    report = _grade(key, fn, only=lambda label: "x 1x1 " in label or "x 3x39 " in label)
    assert report.results and report.passed, report.text()


def _static_print_edit(path: Path) -> list:
    text = path.read_text()
    line = next(li for li in text.splitlines(keepends=True) if "tl.program_id(0)" in li)
    indent = line[: len(line) - len(line.lstrip())]
    return [(line, line + f'{indent}tl.static_print("debug", BLOCK)\n')]


def test_h11_split_times_a_runtime_size_passes():
    """The split's start stays below N_k in every launch (the full grade: tests/test_grading_round21_h11.py)."""
    key, fn = load_attack(_file("h11"))
    report = _grade(key, fn, only=lambda label: "N_k=1 " in label)
    assert report.results and report.passed, report.text()


def test_h15_the_split_id_in_64_bits_passes_the_cases_h11_failed():
    key, fn = load_attack(_file("h15"))
    report = _grade(key, fn, only=lambda label: "N_k=1 " in label)
    assert report.results and report.passed, report.text()
