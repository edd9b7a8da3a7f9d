"""Round 34 (2026-12-07, twentieth session, a fresh attacker against round 33's fixes): the outer products made
flat. A's tile broadcast to (BM, BN, BK) and reshaped to (BM * BN, BK), B's likewise, multiplied lane by lane and
summed (no operand a broadcast any more); or the flat operands loaded gathered, each row repeated, so that lane
(i BN + j, k) holds a[i, k] of one and b[k, j] of the other. A decoy tl.dot of A's rows reversed by B, added and
made again element by element and subtracted, made every perturbation of the dot's products reach C. Now a
reshape that merges a broadcast dimension with a real one makes a whole tile of its source, and in L4 and L5 a
product of values loaded from two different arguments counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from attack_files import load_attack

_interpreted = pytest.mark.skipif(
    not __import__("gpuperf.kernels", fromlist=["interpreter_enabled"]).interpreter_enabled(),
    reason="counted under the interpreter (a CPU)")

FOLDER = Path(__file__).parent / "grading_attacks_round34"


@_interpreted
@pytest.mark.parametrize("name", sorted(p.name for p in FOLDER.glob("[0-9]*.py")))
def test_every_wrong_file_of_round_34_is_refused(name):
    import gpuperf.kernels  # noqa: F401
    from gpuperf import grading

    key, fn = load_attack(FOLDER / name)
    report = grading.grade_report(key, fn, seed=1, stop_at_first_failure=True)
    assert not report.passed, report.text()
    assert "multiplies two tiles by broadcasting" in " ".join(r.message for r in report.failures), report.text()


@_interpreted
def test_a_mirrored_decoy_dot_is_refused_by_the_rerun_with_every_product_doubled(monkeypatch):
    """Round 34's 01 beside its element-wise products: C = E + D - De, D a tl.dot of A's rows reversed by B and De
    the same made element by element, moves with every perturbation of D. With the static rule switched off here
    (as a rule missing the next disguise would be), the L4 rerun with every tl.dot product doubled, against a
    reference of 2 A B, refuses it."""
    import gpuperf.kernels  # noqa: F401
    from gpuperf import grading
    from gpuperf.grading import dataflow

    monkeypatch.setattr(dataflow, "broadcast_tile_products", lambda *args, **kwargs: 0)
    monkeypatch.setattr(grading._watch, "changed_since_import", lambda: [])
    key, fn = load_attack(FOLDER / "01_L4.matmul_reshape_flat_decoy.py")
    report = grading.grade_report(key, fn, seed=1, stop_at_first_failure=True)
    assert not report.passed, report.text()
    assert "your C did not come out doubled" in " ".join(r.message for r in report.failures), report.text()


@pytest.mark.parametrize("name", ["mixed", "persist", "splitkv", "table"])
def test_review_33s_honest_kernels_are_not_products_of_tiles(name):
    """Review 33's hand-written TTIRs of honest designs the first rules of rounds 33 and 34 refused: a split-KV
    merge (partial outputs from one workspace scaled by a row statistic from another), a persistent L4 kernel
    taking tiles from an atomic counter and one reading an order table (index arithmetic from loaded integers),
    two heads side by side (acc times a statistic broadcast and reshaped flat)."""
    from gpuperf.grading.dataflow import broadcast_tile_products

    ttir = (Path(__file__).parent / "data" / f"review33_honest_{name}.ttir").read_text()
    assert broadcast_tile_products(ttir, min_dims=2, distinct_tensors=True) == 0
