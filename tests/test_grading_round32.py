"""Round 32 (2026-12-07, nineteenth session, a short attack against the fixes of round 31 and review 31): the
column-times-row products done in integers (each float split into its mantissa and exponent, the mantissas of a
column and a row multiplied as int64, the exponents added, the scale built from bits). Integer operations now carry
a broadcast, and an integer product of two tiles broadcast against each other from loaded values counts (index
arithmetic multiplies broadcasts made from ``tl.arange``, not from loads); under the interpreter an integer product
of two tiles loaded through addresses steady along different dimensions is refused too."""

from __future__ import annotations

from pathlib import Path

import pytest

from attack_files import load_attack

_interpreted = pytest.mark.skipif(
    not __import__("gpuperf.kernels", fromlist=["interpreter_enabled"]).interpreter_enabled(),
    reason="counted under the interpreter (a CPU)")

FOLDER = Path(__file__).parent / "grading_attacks_round32"


@_interpreted
@pytest.mark.parametrize("name", sorted(p.name for p in FOLDER.glob("0*.py")))
def test_every_wrong_file_of_round_32_is_refused(name):
    import gpuperf.kernels  # noqa: F401
    from gpuperf import grading

    key, fn = load_attack(FOLDER / name)
    report = grading.grade_report(key, fn, seed=1, stop_at_first_failure=True)
    assert not report.passed, report.text()
    assert "multiplies two tiles by broadcasting" in " ".join(r.message for r in report.failures), report.text()
