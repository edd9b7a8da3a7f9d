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
            named.update(re.findall(r"(?:^|[\s,])(h?\d\d)(?=[_,\s]|$)", row.split("|")[1]))
    tags = {path.name.split("_")[0] for path in folder.glob("*.py")}
    assert tags and tags <= named, sorted(tags - named)


def test_triton_36s_name_of_a_cdiv_of_two_run_time_values_has_two_arguments():
    """Triton 3.6 names ``tl.cdiv(N, S)`` of two run-time values ``cdiv__i32_i32__``; its trailing "__" read as two
    more arguments let ``pid * (cdiv(N, S) * S)`` in a 32-bit mask pass on Colab's and the GPU image's Triton
    (round 15's test, failing on the H200, 2026-12-06)."""
    from gpuperf.grading.frontend import _cdiv_arguments

    assert _cdiv_arguments("i32_i32__", ["n", "s"]) == [("value", "n"), ("value", "s")]
    assert _cdiv_arguments("i32_c16", ["n"]) == [("value", "n"), ("const", 16)]
    assert _cdiv_arguments("i32__(1,)cconstexpr_16_", ["n"]) == [("value", "n"), ("const", 16)]


def test_a_compiled_launchs_grid_function_is_read_again_with_the_grid_triton_uses(monkeypatch):
    """On a GPU the grader read a grid function once and Triton called it again: the 32-bit mask rules are now
    read again with the grid Triton's call returns (round 19's 01 was accepted on the H200, 2026-12-06). The
    wiring only: the compiled launch itself needs a GPU."""
    from types import SimpleNamespace

    from gpuperf.grading import watch

    seen = []
    monkeypatch.setattr(watch, "_recheck_masks", lambda w, checked, grid: seen.append((checked, grid)))
    w = SimpleNamespace(counters=SimpleNamespace(most_programs=0))
    answers = iter([(4, 1), (4, 7)])
    wrapped = watch._counting_grid(w, lambda meta: next(answers), checked="checked")
    assert wrapped({}) == (4, 1) and wrapped({}) == (4, 7)
    assert seen == [("checked", (4, 1, 1)), ("checked", (4, 7, 1))]
    assert w.counters.most_programs == 28
    assert watch._counting_grid(w, (3,), checked=None) == (3,) and len(seen) == 2
