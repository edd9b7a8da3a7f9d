"""Round 31 (2026-12-07, nineteenth session): a fresh attacker against round 30's fixes (1c67350), and two variants
of the lead's.

- Broadcasts made in the addresses, not the values: tiles loaded through addresses that do not change along a
  dimension (``rows[:, None] * s + (cols * 0)[None, :]``; the lead's 02: a stride passed as 0 at run time) and
  multiplied lane by lane, a column times a row one k at a time. A tile loaded so is a broadcast to the rule.
- A column and a row carried around the loop (loaded before it and again inside it) and multiplied: a loop's
  carried values now come from what it yields, so they are computed from loads.
- The lead's 03: a stride of 0 computed some other way (``cols >> 20``): under the interpreter, a float product of
  two tiles as loaded whose addresses do not change along different dimensions is refused (review 31).
- The lead's 01: a column joined with itself until it is a tile (``tl.join``, reshapes, a transpose). A tile
  joined with itself is a broadcast along the new dimension, kept through reshapes of its broadcast dimensions
  and transposes."""

from __future__ import annotations

from pathlib import Path

import pytest

from attack_files import load_attack

_interpreted = pytest.mark.skipif(
    not __import__("gpuperf.kernels", fromlist=["interpreter_enabled"]).interpreter_enabled(),
    reason="counted under the interpreter (a CPU)")

FOLDER = Path(__file__).parent / "grading_attacks_round31"
WRONG = sorted(p.name for p in FOLDER.glob("*.py") if not p.name.startswith("h"))
HONEST = sorted(p.name for p in FOLDER.glob("h*.py"))


def _grade(key, fn, seed=1):
    import gpuperf.kernels  # noqa: F401
    from gpuperf import grading

    return grading.grade_report(key, fn, seed=seed, stop_at_first_failure=True)


@_interpreted
@pytest.mark.parametrize("name", WRONG)
def test_every_wrong_file_of_round_31_is_refused(name):
    key, fn = load_attack(FOLDER / name)
    report = _grade(key, fn)
    assert not report.passed, report.text()
    text = " ".join(r.message for r in report.failures)
    assert "multiplies two tiles by broadcasting" in text or "addresses that do not change" in text, text


@_interpreted
def test_a_stride_of_zero_no_rule_reads_is_seen_in_the_addresses(monkeypatch):
    # lead03: ``cols >> 20`` is 0 for every column of these cases; the TTIR does not say so, the addresses do
    # (round 34: the static rule now refuses it too, as a product of values loaded from A and from B; switched
    # off here so that the addresses' rule is still what is tested)
    from gpuperf import grading
    from gpuperf.grading import dataflow

    monkeypatch.setattr(dataflow, "broadcast_tile_products", lambda *args, **kwargs: 0)
    monkeypatch.setattr(grading._watch, "changed_since_import", lambda: [])
    key, fn = load_attack(FOLDER / "lead03_L4.matmul_shift_stride0.py")
    report = _grade(key, fn)
    assert not report.passed, report.text()
    assert "addresses that do not change" in " ".join(r.message for r in report.failures), report.text()


class _Trace:
    def __init__(self, products):
        self._products = products

    def products(self):
        return self._products

    def nonzero_products(self):  # (round 33's count: no case here, so nothing is needed)
        return {}

    def dots(self):
        shapes: dict = {}
        for made in self._products.values():
            for shape in made:
                shapes[shape] = shapes.get(shape, 0) + 1
        return shapes


class _Runner:
    def __init__(self, products, m, n):
        self.trace, self._matmul_mn = _Trace(products), (m, n)


def _blocks(products, m=64, n=64, k=512):
    from gpuperf.grading.exercises import _matmul_blocks_check

    return _matmul_blocks_check(_Runner(products, m, n), "a case", k)


def test_only_products_of_a_tile_of_a_by_a_tile_of_b_count_as_the_matmuls_work():
    a, b, eye = frozenset({1}), frozenset({2}), frozenset()
    every = [(64, 64, 64)] * 8  # 64 x 64 x 512: eight blocks of K
    assert _blocks({frozenset((a, b)): every}) == []
    # a schedule table read by both loads (a gather): each operand has a source of its own
    assert _blocks({frozenset((a | {3}, b | {3})): every}) == []
    # round 31's 09: C made some other way (from A and B), times an identity made of no load
    found = _blocks({frozenset((a | b, eye)): every})
    assert found and "multiply-adds" in found[0].message, found
    # or times a tile of A
    found = _blocks({frozenset((a | b, a)): every})
    assert found and "multiply-adds" in found[0].message, found
