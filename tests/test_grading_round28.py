"""Round 28 (2026-12-07, seventeenth session): the twenty-eighth attacker's files (tests/grading_attacks_round28;
what became of each: the folder's README.md). 22 wrong files, 12 accepted; 11 honest, 2 refused.

- 01, 02, 06, 07, 09, 11-14: products done element by element in disguises the broadcast rule does not read (a
  division by a reciprocal, 3-D loads, a broadcast mixed with another), beside a decoy ``tl.dot`` times 0: every
  ``tl.dot`` call site must now change the output when its products change
  (:func:`gpuperf.grading._products_matter`).
- 04, 05, 15: the walk over K from Python in three more guises: at most 4 launches with tile products in one
  L4.matmul call.
- h03, h11 (honest): a pipeline of different kernels, and a persistent backward's atomic dQ, accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from attack_files import find_attack, load_attack

_interpreted = pytest.mark.skipif(
    not __import__("gpuperf.kernels", fromlist=["interpreter_enabled"]).interpreter_enabled(),
    reason="counted under the interpreter (a CPU)")


def _grade(key, fn, seed=1):
    import gpuperf.kernels  # noqa: F401
    from gpuperf import grading

    return grading.grade_report(key, fn, seed=seed, stop_at_first_failure=True)


def _refused(report, words):
    assert not report.passed, report.text()
    text = " ".join(r.message for r in report.failures)
    assert words in text, text


@_interpreted
@pytest.mark.parametrize("tag", ["01", "02", "06", "07", "09", "11", "12", "13", "14"])
def test_a_decoy_product_beside_disguised_element_wise_products_is_refused(tag):
    key, fn = load_attack(find_attack(28, tag))
    report = _grade(key, fn)
    assert not report.passed, report.text()
    # round 29: the quotient and the 3-D tiles are broadcast products now, refused before the decoy is tried
    text = " ".join(r.message for r in report.failures)
    assert "do not reach your output" in text or "multiplies two tiles by broadcasting" in text, text


@_interpreted
@pytest.mark.parametrize("tag", ["04", "05", "15"])
def test_the_walk_over_k_from_python_is_refused_however_partials_are_handed_on(tag):
    key, fn = load_attack(find_attack(28, tag))
    _refused(_grade(key, fn), "made tile products 64 times in one call")


@pytest.mark.parametrize("tag", ["h03", "h11"])
def test_round_28s_honest_files_pass(tag):
    key, fn = load_attack(find_attack(28, tag))
    report = _grade(key, fn)
    assert report.passed, report.text()


def test_every_file_of_round_28_is_accounted_for():
    folder = Path(__file__).parent / "grading_attacks_round28"
    readme = (folder / "README.md").read_text()
    for path in folder.glob("*.py"):
        tag = path.name.split("_", 1)[0]
        assert tag in readme, path.name
