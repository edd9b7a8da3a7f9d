"""Round 19 of issue 30 (2026-12-06, eleventh session): a fresh attacker (no test read) against the graders at
924a24a. Its files are in tests/grading_attacks_round19 (README.md: each finding and what closed it; REPORT.md:
the attacker's report; excluded/: the 48 wrong files the grader refused and the 16 honest ones it accepted). The
findings are read by the _race, _guard and _split test files; this one checks that every file is read."""

from __future__ import annotations

import re
from pathlib import Path

from attack_files import attack_folder


def test_every_file_of_round_19_is_tested():
    """Every file of tests/grading_attacks_round19 (not excluded/) is graded by a test of round 19."""
    tags = {path.name.split("_")[0] for path in attack_folder(19).glob("*.py")}
    text = "\n".join(p.read_text() for p in sorted(Path(__file__).parent.glob("test_grading_round19*.py")))
    named = set(re.findall(r'"(h?\d\d?)"', text))
    assert len(tags) == 9 and tags <= named, sorted(tags - named)
