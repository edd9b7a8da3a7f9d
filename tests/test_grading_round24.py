"""Round 24 (2026-12-07, fifteenth session): the files the twenty-fourth attacker got accepted, or honest ones it
got refused (tests/grading_attacks_round24; its REPORT.md; what became of each: the folder's README.md).

- 02, 25-32: the program id narrowed (int8, int16) or passed through a float before the 64-bit product: every
  64-bit rule read a 32-bit product only. Refused now by the front end's read of the kernel
  (:func:`gpuperf.grading.frontend.lossy_program_ids`).
- 17b, 19, 20: an output stored more than once with ``tl.atomic_xchg`` instead of ``tl.store``: exchanges now
  count as stores of the output.
- 23, 33: the scores computed by a broadcast multiply and ``tl.sum`` beside a decoy ``tl.dot`` kept alive
  through ``tl.where`` or a helper's tuple. Refused in the exercises whose products are graded as tl.dot
  (:func:`gpuperf.grading.dataflow.broadcast_tile_products`)."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack

#: the rules these tests meet count what the interpreter traces: on a GPU they are graded only with
#: GPUPERF_GRADING_INTERPRET_ON_GPU=1 (found failing on an H100, 2026-12-07, make test-gpu's first full run)
_interpreted = pytest.mark.skipif(
    not __import__("gpuperf.kernels", fromlist=["interpreter_enabled"]).interpreter_enabled(),
    reason="counted under the interpreter (a CPU)")


def _grade(key, fn, seed=11):
    import gpuperf.kernels  # noqa: F401  (the course's kernels, as a learner's notebook has them)
    from gpuperf import grading

    return grading.grade_report(key, fn, seed=seed, stop_at_first_failure=True)


def _refused(report, words):
    assert not report.passed, report.text()
    text = " ".join(r.message for r in report.failures)
    assert words in text, text


@pytest.mark.parametrize("tag", ["02", "25", "26", "27", "28", "29", "30", "31", "32"])
def test_a_program_id_narrowed_or_passed_through_a_float_is_refused(tag):
    key, fn = load_attack(find_attack(24, tag))
    _refused(_grade(key, fn), "narrows the program id")


@_interpreted
@pytest.mark.parametrize("tag", ["17b", "19", "20"])
def test_an_output_exchanged_more_than_once_is_refused(tag):
    key, fn = load_attack(find_attack(24, tag))
    _refused(_grade(key, fn), "more than once")


@pytest.mark.parametrize("tag", ["23", "33"])
def test_a_broadcast_product_beside_a_decoy_dot_is_refused(tag):
    key, fn = load_attack(find_attack(24, tag))
    _refused(_grade(key, fn), "broadcasting them against each other")


def test_the_rules_read_the_ttir():
    from gpuperf.grading.frontend import lossy_program_ids

    head = ("module {\n  tt.func public @k(%x_ptr: !tt.ptr<f32>) {\n    %pid = tt.get_program_id x : i32\n")
    tail = "    %p = tt.addptr %x_ptr, %w : !tt.ptr<f32>, i64\n    tt.return\n  }\n}\n"
    int16 = head + "    %n = arith.trunci %pid : i32 to i16\n    %w = arith.extsi %n : i16 to i64\n" + tail
    wide = head + "    %w = arith.extsi %pid : i32 to i64\n" + tail
    floated = head + ("    %f = arith.sitofp %pid : i32 to f32\n    %w = arith.fptosi %f : f32 to i64\n") + tail
    assert lossy_program_ids(int16) and lossy_program_ids(floated)
    assert not lossy_program_ids(wide)


def test_every_file_of_round_24_is_accounted_for():
    """Each file of the folder is named in its README's table (closed with a test, or named)."""
    import re
    from pathlib import Path

    folder = Path(__file__).parent / "grading_attacks_round24"
    table = (folder / "README.md").read_text()
    named = set()
    for row in table.splitlines():
        if row.startswith("| ") and not row.startswith("| files") and not row.startswith("| ---"):
            named.update(re.findall(r"(?:^|[\s,])(h?\d\d[a-z]?)(?=[_,\s]|$)", row.split("|")[1]))
    tags = {path.name.split("_")[0] for path in folder.glob("*.py")}
    assert tags and tags <= named, sorted(tags - named)
