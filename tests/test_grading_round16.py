"""Round 16 of issue 30 (2026-12-06, eighth session): a fresh attacker against the graders with round 15 closed.
Its files are in tests/grading_attacks_round16 (README.md: each finding). Closed: the packed int64 scratch (24,
25), with the honest files of fp32 copies and buffers for fp16 inputs (h01, h08, h09, h12) still accepted."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)


def _on_the_cpu() -> bool:
    import torch

    return not torch.cuda.is_available() or gpuperf.kernels.interpreter_enabled()


@pytest.mark.parametrize("tag,words", [("24", ("other memory",)), ("25", ("not fused",))])
def test_two_fp32_values_packed_in_an_int64_lane_count_as_two(tag, words):
    """24 (L3.online, three passes) and 25 (L2.chain, two launches) keep their intermediates two to an int64 lane
    of their own scratch: a lane of the learner's memory counts in x's elements by bytes."""
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("round 16 was run under the interpreter")
    key, fn = load_attack(find_attack(16, tag))
    report = grading.grade_report(key, fn, seed=11)
    assert report.results and not report.passed, f"{tag} accepted by {key} (seed 11)"
    for word in words:
        assert word in report.failures[0].message, report.failures[0].message


@pytest.mark.parametrize("tag", ["h01", "h08", "h09", "h12"])
def test_fp32_copies_and_buffers_for_fp16_inputs_are_one_value_a_lane(tag):
    """h01 (L6.backward: dQ in an fp32 buffer, rounded once), h08, h09, h12 (L3.softmax, L3.online, L2.chain on
    ``x.float()``): every case, seed 11."""
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("round 16 was run under the interpreter")
    key, fn = load_attack(find_attack(16, tag))
    report = grading.grade_report(key, fn, seed=11)
    assert report.results and report.passed, f"{tag} refused by {key}:\n{report.text()}"


def test_every_file_of_round_16_is_tested():
    """Every file of tests/grading_attacks_round16 is graded by a test of round 16 (this file, or the _rows,
    _passes, _r16copies and _misc files that closed its findings)."""
    import re
    from pathlib import Path

    from attack_files import attack_folder

    tags = {path.name.split("_")[0] for path in attack_folder(16).glob("*.py")}
    text = "\n".join(p.read_text() for p in sorted(Path(__file__).parent.glob("test_grading_round16*.py")))
    named = set(re.findall(r'"((?:h)?\d\d)"', text))
    assert len(tags) == 37 and tags <= named, sorted(tags - named)
