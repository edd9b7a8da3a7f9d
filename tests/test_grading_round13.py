"""Round 13 of issue 30 (2026-12-05): every file of tests/grading_attacks_round13 is graded by one of the three
test files that closed its finding (``test_grading_round13_skip.py``: 01-04, 10, h01, h02;
``test_grading_round13_copies.py``: 07, 11, h03, h04; ``test_grading_round13_bytes.py``: 05, 06, 08, 09)."""

from __future__ import annotations

import re
from pathlib import Path

from attack_files import attack_folder

TESTS = Path(__file__).resolve().parent


def test_every_file_of_round_13_is_tested():
    tags = {path.name.split("_")[0] for path in attack_folder(13).glob("*.py")}
    text = "\n".join(p.read_text() for p in sorted(TESTS.glob("test_grading_round13_*.py")))
    named = set(re.findall(r'"((?:h)?\d\d)"', text))
    assert len(tags) == 15 and tags <= named, sorted(tags - named)
