"""Round 33 (2026-12-07, twentieth session): a reduction's region. Round 32's 04 (no verdict then: the interpreter
ran its reduction too slowly) handed a column and a row together to ``tl.reduce``, whose combine function of the
kernel's own multiplied them; the static rule read no operation inside a region that is not a loop or a branch, and
took a ``tl.reduce`` written in the kernel as computing nothing from its operands (so a loaded tile passed through
one no longer looked loaded). Now tiles broadcast against each other from loads and handed together to a
reduction (or joined into one tile) count as a product, and a reduction's results are computed from its
operands."""

from __future__ import annotations

from pathlib import Path

import pytest

from attack_files import load_attack

_interpreted = pytest.mark.skipif(
    not __import__("gpuperf.kernels", fromlist=["interpreter_enabled"]).interpreter_enabled(),
    reason="counted under the interpreter (a CPU)")

FOLDER = Path(__file__).parent / "grading_attacks_round33"


@_interpreted
@pytest.mark.parametrize("name", sorted(p.name for p in FOLDER.glob("[0-9l]*.py")
                                         if "_L3." not in p.name and not p.name.startswith("16_")))
def test_every_wrong_file_of_round_33_is_refused(name):
    import gpuperf.kernels  # noqa: F401
    from gpuperf import grading

    key, fn = load_attack(FOLDER / name)
    report = grading.grade_report(key, fn, seed=1, stop_at_first_failure=True)
    assert not report.passed, report.text()
    assert "multiplies two tiles by broadcasting" in " ".join(r.message for r in report.failures), report.text()


_DOT_THEN_REDUCE = """module {
  tt.func public @k(%c_ptr: !tt.ptr<f32>) {
    %a = arith.constant dense<1.0> : tensor<16x16xf32>
    %d = tt.dot %a, %a, %a : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
    %r = "tt.reduce"(%d) <{axis = 1 : i32}> ({
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %y : f32
      tt.reduce.return %s : f32
    }) : (tensor<16x16xf32>) -> tensor<16xf32>
    %p = tt.splat %c_ptr : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    tt.store %p, %r : tensor<16x!tt.ptr<f32>>
    tt.return
  }
}
"""


def test_a_dot_stored_through_a_reduction_of_the_kernels_own_is_stored():
    from gpuperf.grading.dataflow import unstored_dots
    from gpuperf.grading.kernel_ir import parse_op

    assert unstored_dots(_DOT_THEN_REDUCE) == 0
    op = parse_op('    %r = "tt.reduce"(%d) <{axis = 1 : i32}> ({')
    assert op.name == "tt.reduce" and op.combines and op.operands == ("%d",)
    assert not parse_op("    scf.for %i = %c0 to %n step %c1 iter_args(%x = %y) -> (f32) {").combines


@_interpreted
@pytest.mark.parametrize("name,message", [
    ("01_L4.matmul_cumprod_products.py", "so only the first call of each program reaches"),
    ("lead04_L4.matmul_cumprod_dot_last_block.py", "so the first call of each program does not reach"),
    ("lead02_L4.matmul_reduce_laundered_rank1.py", "pairs of non-zero elements of A and B")])
def test_a_dot_used_for_one_block_or_on_zeros_is_refused_with_the_static_rule_off(monkeypatch, name, message):
    """Round 33's 01 (a fresh attacker's): a full tl.dot every block, its product used for the first block only,
    the other blocks' products made by tl.cumprod over a tl.join of broadcast tiles; lead04, mine: used for the
    last block only. The static rule refuses both now (the join); with that rule switched off here, as a rule
    missing the next disguise would be, the rerun that perturbs every call of a site but its first in each
    program refuses 01, and the one that perturbs only the first calls refuses lead04. lead02's tl.dot takes A's
    tile masked to its first column (the rest by rank-1 updates): L4 counts the products of two non-zero
    elements its dots make, 1/32 of what C needs."""
    import gpuperf.kernels  # noqa: F401
    from gpuperf import grading
    from gpuperf.grading import dataflow

    monkeypatch.setattr(dataflow, "broadcast_tile_products", lambda *args, **kwargs: 0)
    monkeypatch.setattr(grading._watch, "changed_since_import", lambda: [])
    key, fn = load_attack(FOLDER / name)
    report = grading.grade_report(key, fn, seed=1, stop_at_first_failure=True)
    assert not report.passed, report.text()
    assert message in " ".join(r.message for r in report.failures), report.text()


def test_an_online_softmax_that_moves_its_max_only_for_rises_past_87_is_refused():
    """Round 33's 10: the running max moved only when a block's max passes it by more than 87 (and a lazy
    rescale of 8, honest, passes: round 33's h05 was accepted): a case whose rows rise 84 to 89 after their first
    block, thousands of values high, overflows its sum."""
    import gpuperf.kernels  # noqa: F401
    from gpuperf import grading

    key, fn = load_attack(FOLDER / "10_L3.online_rescale_skip_87.py")
    report = grading.grade_report(key, fn, seed=3, stop_at_first_failure=True)
    assert not report.passed, report.text()
    assert "rises, after its first block" in " ".join(r.message for r in report.failures), report.text()


@_interpreted
def test_tiles_passed_through_a_reduction_still_count_against_shared_memory():
    """Round 33's 16: 256 x 256 fp32 tiles of A and B (512 KiB, past the 232,448 B an H100 or H200 gives a
    program), each passed through tl.sum over a join with zeros before tl.dot: the reduction's result keeps the
    loaded tile's tag."""
    import gpuperf.kernels  # noqa: F401
    from gpuperf import grading

    key, fn = load_attack(FOLDER / "16_L4.matmul_huge_tiles_laundered.py")
    report = grading.grade_report(key, fn, seed=1, stop_at_first_failure=True)
    assert not report.passed, report.text()
    assert "multiplies (tl.dot) tiles loaded from a_ptr 256 x 256" in " ".join(r.message for r in report.failures)
