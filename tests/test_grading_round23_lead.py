"""The twenty-third round's lead (2026-12-07, fifteenth session): what the lead found before the attacker's report.

- A 32-bit row offset added up by a ``while`` loop whose condition reads the program id (``while i < row:
  off += stride``). Round 22 closed the ``for`` form (file 17); the ``while`` form lowers to an ``scf.while``,
  whose carried values and condition the rule did not read
  (:func:`gpuperf.grading.frontend._enclosing_loops`)."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack_variant

#: the rules these tests meet count what the interpreter traces: on a GPU they are graded only with
#: GPUPERF_GRADING_INTERPRET_ON_GPU=1 (found failing on an H100, 2026-12-07, make test-gpu's first full run)
_interpreted = pytest.mark.skipif(
    not __import__("gpuperf.kernels", fromlist=["interpreter_enabled"]).interpreter_enabled(),
    reason="counted under the interpreter (a CPU)")

_WHILE = ("    for i in range(row):\n        xo += x_row_stride\n        yo += y_row_stride\n",
          "    i = 0\n    while i < row:\n        xo += x_row_stride\n        yo += y_row_stride\n        i += 1\n")


def _grade(key, fn, seed=11):
    import gpuperf.kernels  # noqa: F401  (the course's kernels, as a learner's notebook has them)
    from gpuperf import grading

    first: list = []

    def only(label):
        if not first:
            first.append(label)
        return label == first[0]

    return grading.grade_report(key, fn, seed=seed, stop_at_first_failure=True, only=only)


def test_softmax_row_offset_summed_by_a_while_loop_is_refused():
    key, fn = load_attack_variant(find_attack(22, "17"), _WHILE)
    report = _grade(key, fn)
    assert not report.passed
    assert "32-bit product" in " ".join(r.message for r in report.failures), report.text()


def test_softmax_row_offset_summed_by_a_while_loop_in_64_bits_passes():
    key, fn = load_attack_variant(find_attack(22, "17"), _WHILE,
                                  ("    xo = 0\n    yo = 0\n",
                                   "    xo = tl.cast(0, tl.int64)\n    yo = tl.cast(0, tl.int64)\n"))
    report = _grade(key, fn)
    assert report.passed, report.text()


def test_while_loop_rule_reads_the_ttir():
    """A 32-bit sum handed on by a while loop whose condition reads the program id counts; one whose condition
    reads only a run-time size does not; the while loop's operands are its carried values."""
    from gpuperf.grading.frontend import wrapping_offsets
    from gpuperf.grading.kernel_ir import parse_op

    op = parse_op("%r:2 = scf.while (%a = %c0, %i = %c0) : (i32, i32) -> (i32, i32) {")
    assert op.carried == (("%a", "%c0"), ("%i", "%c0"))

    def kernel(bound):
        return ("module {\n  tt.func public @k(%x_ptr: !tt.ptr<f32>, %n: i32, %stride: i32) {\n"
                "    %pid = tt.get_program_id x : i32\n    %c0 = arith.constant 0 : i32\n"
                "    %c1 = arith.constant 1 : i32\n"
                "    %r:2 = scf.while (%a = %c0, %i = %c0) : (i32, i32) -> (i32, i32) {\n"
                f"      %c = arith.cmpi slt, %i, {bound} : i32\n"
                "      scf.condition(%c) %a, %i : i32, i32\n    } do {\n"
                "    ^bb0(%a: i32 loc(\"x\"), %i: i32 loc(\"y\")):\n"
                "      %o = arith.addi %a, %stride : i32\n      %j = arith.addi %i, %c1 : i32\n"
                "      scf.yield %o, %j : i32, i32\n    }\n"
                "    %q = tt.addptr %x_ptr, %r#0 : !tt.ptr<f32>, i32\n    tt.return\n  }\n}\n")

    assert wrapping_offsets(kernel("%pid"))
    assert not wrapping_offsets(kernel("%n"))



@_interpreted
def test_an_interpreted_launch_calls_the_grid_function_once():
    """Round 23 (60-62, 65): Triton's interpreter called the reader's grid function again inside the launch,
    after the grader's memory check before it, so Python run there could write the output raw. The launch now
    runs the sizes the grader read: one call of the function for the first case's one launch (two before)."""
    from gpuperf import grading

    key, fn = load_attack_variant(find_attack(22, "17"), (
        "    softmax_row_kernel[(n_rows,)](",
        "    softmax_row_kernel[_grid_once(n_rows)]("),
        ("def softmax_rows(x):\n",
         "CALLS = []\n\n\ndef _grid_once(n):\n    def grid(meta):\n        CALLS.append(n)\n        return (n,)\n"
         "    return grid\n\n\ndef softmax_rows(x):\n"))
    first: list = []

    def only(label):
        if not first:
            first.append(label)
        return label == first[0]

    grading.grade_report(key, fn, seed=3, stop_at_first_failure=True, only=only)
    assert len(fn.__globals__["CALLS"]) == 1, fn.__globals__["CALLS"]
