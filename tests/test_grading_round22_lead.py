"""Round 22's 04 (tests/grading_attacks_round22): L2.chain cut at 8 operations is refused by the case that draws 9
to 63 operations; the course's chain passes it."""

from attack_files import find_attack, load_attack

MORE = "more operations than the lab sweeps"


def _grade(fn):
    from gpuperf import grading

    return grading.grade_report("L2.chain", fn, seed=20261206, only=lambda label: MORE in label)


def test_a_chain_cut_at_eight_operations_is_refused():
    key, fn = load_attack(find_attack(22, "04"))
    assert key == "L2.chain"
    report = _grade(fn)
    assert not report.passed and report.results, report.text()


def test_the_course_chain_passes_the_long_case():
    from gpuperf import grading

    report = _grade(grading.solution("L2.chain"))
    assert report.passed and report.results, report.text()


def test_every_file_of_round_22_is_accounted_for():
    """Each file of the folder is named in its README's table (closed with a test, or a limit said so)."""
    import re
    from pathlib import Path

    folder = Path(__file__).parent / "grading_attacks_round22"
    table = (folder / "README.md").read_text()
    named = set()
    for row in table.splitlines():
        if row.startswith("| ") and not row.startswith("| files") and not row.startswith("| ---"):
            named.update(re.findall(r"\b(h?\d\d)\b", row.split("|")[1]))
    tags = {path.name.split("_")[0] for path in folder.glob("*.py")}
    assert tags and tags <= named, sorted(tags - named)
