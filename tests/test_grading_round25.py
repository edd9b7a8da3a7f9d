"""Round 25 (2026-12-07, sixteenth session): round 24's two honest files still refused, the lead's finds beside
them, and the twenty-fifth attacker's files (tests/grading_attacks_round25; what became of each: the folder's
README.md).

- Round 24's h10 (a column index with no stride): the wrap of a 32-bit product reached the column index through
  the divisor of ``pid // group_rows`` (``group_rows = min(tiles_m - first_m, GROUP_M)``). A quotient or
  remainder now wraps only as its dividend does, under the interpreter and in the TTIR.
- Round 24's h16 (split-K into a workspace, then a flat 1 x 1024 cast into C): the cast's blocks were read as C's
  tiles. A launch with no tile product that writes C from what earlier launches stored is an epilogue: the
  launches that made the products are graded by the programs that made them.
- 90, 92 (the lead's): one program does all the work into a workspace, then a copy kernel spread over many
  programs writes the output. A kernel that only copies what earlier launches stored no longer counts as the
  programs that computed the output (:func:`gpuperf.grading.exercises._out_writes`).

Round 25 (a fresh attacker, main at bdc4c88, CPU): 28 wrong files, 10 accepted; 37 honest, 5 refused.

- 07, 07c: a process started through ``_posixsubprocess.fork_exec``, which raises no audit event. Refused by
  what the kernel accounts for the process's children (:meth:`gpuperf.grading.watch._Audit.children`).
- 16, 17, 18: a store left in a loop, made as ``tl.atomic_and(0)`` then ``tl.atomic_or(bits)``: bitwise atomics
  now count as stores of an output.
- 04, 10 (L4.matmul): the accumulator kept in a workspace of the reader's, stored back every block of K by one
  program, or by a launch per block from Python (:func:`gpuperf.grading.exercises._scratch_stored_again`).
- 20b: C made of rank-1 updates (a column times a row) beside a decoy ``tl.dot``: the broadcast-product rule reads
  two-dimensional products too in L4.matmul, L5 and L6.
- 22, 23: a causal loop that ends at the diagonal without ``min(N_k, ...)``: tile products of key blocks with every
  lane masked off (:meth:`gpuperf.grading.algorithm.Trace.empty_products`).
- h12, h12d (honest, refused before): an autograd Function that returns (o, lse) with lse non-differentiable; the
  zero gradient autograd makes for lse was allocated through a dataclass's generated ``__init__``, a frame the
  watch did not trust.
- h27 (honest, fairly refused): ``@triton.autotune`` cannot time its configurations under the interpreter; the
  message now says so."""

from __future__ import annotations

import itertools

import pytest

from attack_files import find_attack, load_attack

#: the rules these files meet count what the interpreter traces (a GPU grades them only with
#: GPUPERF_GRADING_INTERPRET_ON_GPU=1), and the children's accounting runs under the interpreter only
_interpreted = pytest.mark.skipif(
    not __import__("gpuperf.kernels", fromlist=["interpreter_enabled"]).interpreter_enabled(),
    reason="counted under the interpreter (a CPU)")


def _grade(key, fn, seed=11, first=None):
    import gpuperf.kernels  # noqa: F401  (the course's kernels, as a learner's notebook has them)
    from gpuperf import grading

    only = None
    if first is not None:  # the first cases only (the interpreter is slow): a predicate that counts
        counter = itertools.count()
        only = lambda label: next(counter) < first  # noqa: E731
    return grading.grade_report(key, fn, seed=seed, stop_at_first_failure=True, only=only)


def _refused(report, words):
    assert not report.passed, report.text()
    text = " ".join(r.message for r in report.failures)
    assert words in text, text


@pytest.mark.parametrize("tag, first", [("h10", 3), ("h16", 3)])
def test_round_24s_honest_split_and_unit_stride_files_pass_their_first_cases(tag, first):
    key, fn = load_attack(find_attack(24, tag))
    report = _grade(key, fn, seed=1, first=first)
    assert report.passed, report.text()


@_interpreted
def test_one_program_into_a_workspace_then_a_tiled_cast_is_refused():
    key, fn = load_attack(find_attack(25, "90"))
    _refused(_grade(key, fn, seed=1), "made its tile products in 2 program(s)")


@_interpreted
def test_one_program_into_a_workspace_then_a_spread_copy_is_refused():
    key, fn = load_attack(find_attack(25, "92"))
    _refused(_grade(key, fn, seed=1), "program(s) of your kernel add_all wrote")


def test_a_quotient_wraps_only_as_its_dividend_does_in_the_ttir():
    from gpuperf.grading.frontend import wrapping_offsets

    head = ("module {\n  tt.func public @k(%x_ptr: !tt.ptr<f32>, %n: i32) {\n"
            "    %pid = tt.get_program_id x : i32\n    %w = arith.muli %pid, %n : i32\n")
    tail = "    %o = arith.extsi %q : i32 to i64\n    %p = tt.addptr %x_ptr, %o : !tt.ptr<f32>, i64\n" \
           "    tt.return\n  }\n}\n"
    divisor = head + "    %q = arith.divsi %pid, %w : i32\n" + tail
    dividend = head + "    %q = arith.divsi %w, %n : i32\n" + tail
    assert not wrapping_offsets(divisor)
    assert wrapping_offsets(dividend)


@_interpreted
@pytest.mark.parametrize("tag", ["07", "07c"])
def test_a_process_started_without_an_audit_event_is_refused(tag):
    key, fn = load_attack(find_attack(25, tag))
    _refused(_grade(key, fn, seed=1), "started a new process")


@_interpreted
@pytest.mark.parametrize("tag", ["16", "17", "18"])
def test_a_store_in_a_loop_made_of_bitwise_atomics_is_refused(tag):
    key, fn = load_attack(find_attack(25, tag))
    _refused(_grade(key, fn, seed=1), "more than once")


@_interpreted
@pytest.mark.parametrize("tag, words", [("04", "more than once in one launch"), ("10", "from Python")])
def test_an_accumulator_kept_in_a_workspace_is_refused(tag, words):
    key, fn = load_attack(find_attack(25, tag))
    _refused(_grade(key, fn, seed=1), words)


def test_rank_one_updates_beside_a_decoy_dot_are_refused():
    key, fn = load_attack(find_attack(25, "20b"))
    _refused(_grade(key, fn, seed=1), "a column times a row")


@_interpreted
@pytest.mark.parametrize("tag", ["22", "23"])
def test_products_of_wholly_masked_key_blocks_are_refused(tag):
    key, fn = load_attack(find_attack(25, tag))
    _refused(_grade(key, fn, seed=1), "its lanes were all masked off")


@pytest.mark.parametrize("tag", ["h12", "h12d"])
def test_an_autograd_function_with_a_non_differentiable_lse_passes(tag):
    key, fn = load_attack(find_attack(25, tag))
    report = _grade(key, fn, seed=1, first=2)
    assert report.passed, report.text()


@_interpreted
def test_autotune_under_the_interpreter_is_explained():
    key, fn = load_attack(find_attack(25, "h27"))
    _refused(_grade(key, fn, seed=1), "@triton.autotune")


def test_every_file_of_round_25_is_accounted_for():
    """Each file of the folder is named in its README's table (closed with a test, or named)."""
    import re
    from pathlib import Path

    folder = Path(__file__).parent / "grading_attacks_round25"
    table = (folder / "README.md").read_text()
    named = set()
    for row in table.splitlines():
        if row.startswith("| ") and not row.startswith("| files") and not row.startswith("| ---"):
            named.update(re.findall(r"(?:^|[\s,])(h?\d\d[a-z]?)(?=[_,\s]|$)", row.split("|")[1]))
    tags = {path.name.split("_")[0] for path in folder.glob("*.py")}
    assert tags and tags <= named, sorted(tags - named)


# ---- round 26: tests/grading_attacks_round26 (a fresh attacker against round 25's rules) ----------------------


@pytest.mark.parametrize("tag, words", [("02", "a column times a row"), ("04", "SIGCHLD"), ("04b", "SIGCHLD")])
def test_round_26_rank_one_fma_and_an_ignored_sigchld_are_refused(tag, words):
    key, fn = load_attack(find_attack(26, tag))
    _refused(_grade(key, fn, seed=1), words)


@_interpreted
@pytest.mark.parametrize("tag, words", [("05", "more than once"), ("07", "from Python")])
def test_round_26_min_max_stores_and_a_python_k_loop_into_fresh_buffers_are_refused(tag, words):
    key, fn = load_attack(find_attack(26, tag))
    _refused(_grade(key, fn, seed=1), words)


@pytest.mark.parametrize("tag", ["h02", "h10", "h11", "h16"])
def test_round_26_honest_files_the_new_rules_refused_pass_their_first_cases(tag):
    key, fn = load_attack(find_attack(26, tag))
    report = _grade(key, fn, seed=1, first=4)
    assert report.passed, report.text()


def test_every_file_of_round_26_is_accounted_for():
    """Each file of the folder is named in its README's table (closed with a test, or named)."""
    import re
    from pathlib import Path

    folder = Path(__file__).parent / "grading_attacks_round26"
    table = (folder / "README.md").read_text()
    named = set()
    for row in table.splitlines():
        if row.startswith("| ") and not row.startswith("| files") and not row.startswith("| ---"):
            named.update(re.findall(r"(?:^|[\s,])(h?\d\d[a-z]?)(?=[_,\s]|$)", row.split("|")[1]))
    tags = {path.name.split("_")[0] for path in folder.glob("*.py")}
    assert tags and tags <= named, sorted(tags - named)


def test_a_compiler_run_during_a_call_is_no_change_to_the_grader():
    """On a GPU, Triton's first launch of a kernel runs ptxas: the audit hook counts that spawn
    (``_Audit.spawns_allowed``) so that the children check lets the compiler's process through. The count
    changed in place is no change of the grader's: as a rebound integer it read as one, and every case that
    compiled a kernel was refused on the H100 (186 tests of make test-gpu, 2026-12-07)."""
    from gpuperf.grading.exercises import _GraderIntegrity
    from gpuperf.grading.watch import _Audit

    integrity = _GraderIntegrity()
    before = _Audit.children()[2]
    _Audit.spawns_allowed[0] += 1  # what _Audit.hook does for a spawn of Triton's or torch's own
    assert integrity.restore() == []
    assert _Audit.children()[2] == before + 1
