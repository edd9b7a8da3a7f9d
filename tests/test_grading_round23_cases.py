"""Round 23 (2026-12-07, fifteenth session): the files the twenty-third attacker got accepted, or honest ones it
got refused (tests/grading_attacks_round23; its REPORT.md; what became of each: the folder's README.md).

- 21, 22, 41, 42, 43, 58, 60, 61, 62, 65: the grader's tensors read (and 60-62, 65: written) through
  ``/proc/self/mem``: a descriptor opened before the grade, one opened in the call relative to ``/proc/self``, or
  a link to it. Refused at the first case now (tests/test_grading_round23_memory.py has the rule's own tests).
- 13, 48, 50, 51, 57: an output stored more than once (a store left inside the loop; y stored unfinished and
  stored again). Refused (tests/test_grading_round23_stores.py).
- 47: D = rowsum(dO * O) recomputed for every tile, O read once per block of keys. Refused: O is loaded at most
  twice over.
- h20, h22: honest backwards (D stored by the dQ kernel) refused by L6.autograd only: its backward now counts
  the passes over K as L6.backward does. h24, h25, h26: honest final stores in a ``@triton.jit`` helper, refused
  as unstored products: the check now reads helpers (tests/test_grading_round23_helpers.py).
- 30 (fp16 partial products in L5.forward) is the known limit of round 22's 24; h04 (ctx attributes instead of
  ``save_for_backward``) stays refused, with a message that says why."""

from __future__ import annotations

import os

import pytest

from attack_files import find_attack, load_attack

#: the rules these tests meet count what the interpreter traces: on a GPU they are graded only with
#: GPUPERF_GRADING_INTERPRET_ON_GPU=1 (found failing on an H100, 2026-12-07, make test-gpu's first full run)
_interpreted = pytest.mark.skipif(
    not __import__("gpuperf.kernels", fromlist=["interpreter_enabled"]).interpreter_enabled(),
    reason="counted under the interpreter (a CPU)")

LINUX_PROC = os.path.isdir("/proc/self/fd")


def _grade(key, fn, seed=11, only=None, stop=True):
    import gpuperf.kernels  # noqa: F401  (the course's kernels, as a learner's notebook has them)
    from gpuperf import grading

    return grading.grade_report(key, fn, seed=seed, stop_at_first_failure=stop, only=only)


def _first_case():
    first: list = []

    def only(label):
        if not first:
            first.append(label)
        return label == first[0]

    return only


def _refused(report, words):
    assert not report.passed, report.text()
    text = " ".join(r.message for r in report.failures)
    assert words in text, text


@pytest.mark.skipif(not LINUX_PROC, reason="needs Linux's /proc")
@pytest.mark.parametrize("tag", ["21", "22", "41", "42", "43", "58", "60", "61", "62", "65"])
def test_the_process_memory_read_or_written_through_proc_is_refused(tag):
    key, fn = load_attack(find_attack(23, tag))
    try:
        _refused(_grade(key, fn, only=_first_case()), "this process's memory" if tag not in ("43", "58") else
                 "the process's memory")
    finally:  # the files open /proc/self/mem when loaded: close it, or every later grade here is refused
        fd = fn.__globals__.get("_FD")
        if isinstance(fd, int):
            os.close(fd)
            fn.__globals__["_FD"] = None


@_interpreted
@pytest.mark.parametrize("tag, words", [("13", "both stored"), ("48", "more than once"), ("50", "more than once"),
                                        ("51", "more than once"), ("57", "more than once")])
def test_an_output_stored_more_than_once_is_refused(tag, words):
    key, fn = load_attack(find_attack(23, tag))
    _refused(_grade(key, fn), words)  # the first case may have one block of keys: graded to the first failure


@_interpreted
def test_47_d_recomputed_for_every_tile_is_refused():
    key, fn = load_attack(find_attack(23, "47"))
    _refused(_grade(key, fn), "elements of O")


@pytest.mark.parametrize("tag", ["h24", "h25", "h26"])
def test_a_final_store_in_a_helper_passes_the_first_case(tag):
    key, fn = load_attack(find_attack(23, tag))
    report = _grade(key, fn, only=_first_case())
    assert report.passed, report.text()


@_interpreted
@pytest.mark.parametrize("tag", ["h20", "h22"])
def test_a_backward_whose_dq_kernel_stores_d_passes_l6_autograd_where_its_kernels_are_counted(tag):
    key, fn = load_attack(find_attack(23, tag))
    report = _grade(key, fn, only=lambda label: "their blocks of keys" in label)
    assert report.passed, report.text()


def test_every_file_of_round_23_is_accounted_for():
    """Each file of the folder is named in its README's table (closed with a test, or a limit said so)."""
    import re
    from pathlib import Path

    folder = Path(__file__).parent / "grading_attacks_round23"
    table = (folder / "README.md").read_text()
    named = set()
    for row in table.splitlines():
        if row.startswith("| ") and not row.startswith("| files") and not row.startswith("| ---"):
            named.update(re.findall(r"(?:^|[\s,])(h?\d\d)(?=[_,\s]|$)", row.split("|")[1]))
    tags = {path.name.split("_")[0] for path in folder.glob("*.py")}
    assert tags and tags <= named, sorted(tags - named)
