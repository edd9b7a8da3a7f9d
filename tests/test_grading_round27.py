"""Round 27 (2026-12-07, seventeenth session): the twenty-seventh attacker's files (tests/grading_attacks_round27;
what became of each: the folder's README.md). 51 wrong files, 12 accepted; 23 honest, 2 refused (fairly).

- 20, 21, 29, 36: broadcast products with one broadcast passed through ``tl.where`` (or a cast, ``+ 0.0``):
  :func:`gpuperf.grading.dataflow.broadcast_tile_products` sees through element-wise operations whose other
  operands are constants.
- 22, 38: the walk over K from Python by two kernels taking turns, or through a copy kernel: the chain of product
  launches is the longest path of launches fed by the one before, through launches without products.
- 23: an accumulator kept in memory by atomic adds: one program adding computed values to one element twice.
- 24: a child process through torch's helpers: only Triton's own frames may start one.
- 45: a copy kernel with a dummy store beside its copy: copied lanes go back to the launch that computed them.
- 32, 46: tiles of zeros multiplied in place of blocks never loaded: empty products."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from attack_files import find_attack, load_attack

_interpreted = pytest.mark.skipif(
    not __import__("gpuperf.kernels", fromlist=["interpreter_enabled"]).interpreter_enabled(),
    reason="counted under the interpreter (a CPU)")


def _grade(key, fn, seed=1, first=None):
    import gpuperf.kernels  # noqa: F401
    from gpuperf import grading

    only = None
    if first is not None:
        counter = itertools.count()
        only = lambda label: next(counter) < first  # noqa: E731
    return grading.grade_report(key, fn, seed=seed, stop_at_first_failure=True, only=only)


def _refused(report, words):
    assert not report.passed, report.text()
    text = " ".join(r.message for r in report.failures)
    assert words in text, text


@pytest.mark.parametrize("tag", ["20", "21", "29", "36"])
def test_broadcast_products_through_a_where_are_refused(tag):
    key, fn = load_attack(find_attack(27, tag))
    _refused(_grade(key, fn), "multiplies two tiles by broadcasting them")


@_interpreted
@pytest.mark.parametrize("tag", ["22", "38"])
def test_a_chain_of_product_launches_by_two_kernels_or_through_a_copy_is_refused(tag):
    key, fn = load_attack(find_attack(27, tag))
    _refused(_grade(key, fn), "made tile products")  # the chain, or L4.matmul's launch cap (round 28) first


@_interpreted
def test_an_accumulator_kept_by_atomic_adds_is_refused():
    key, fn = load_attack(find_attack(27, "23"))
    _refused(_grade(key, fn), "atomically added to the same element")


def test_a_process_started_through_torchs_helpers_is_refused():
    key, fn = load_attack(find_attack(27, "24"))
    _refused(_grade(key, fn), "a new process")


@_interpreted
def test_a_copy_kernel_with_a_dummy_store_is_followed_back():
    key, fn = load_attack(find_attack(27, "45"))
    _refused(_grade(key, fn), "1 program(s) of your kernel all_in_one wrote")


@_interpreted
@pytest.mark.parametrize("tag", ["32", "46"])
def test_tiles_of_zeros_past_the_diagonal_are_empty_products(tag):
    key, fn = load_attack(find_attack(27, tag))
    _refused(_grade(key, fn), "a tile of zeros stood in for a block never loaded")


def test_folding_the_chains_scalars_is_allowed():
    key, fn = load_attack(find_attack(27, "26"))
    report = _grade(key, fn, first=6)
    assert report.passed, report.text()


@_interpreted
def test_a_grid_stride_add_with_fewer_programs_than_multiprocessors_is_refused():
    key, fn = load_attack(find_attack(27, "h02"))
    _refused(_grade(key, fn), "program(s) of your kernel add_kernel wrote")


def test_every_file_of_round_27_is_accounted_for():
    folder = Path(__file__).parent / "grading_attacks_round27"
    readme = (folder / "README.md").read_text()
    for path in folder.glob("*.py"):
        tag = path.name.split("_", 1)[0]
        assert tag in readme, path.name


def test_a_helper_named_with_several_constant_arguments_is_read_as_the_kernels_in_triton_36():
    """Make test-gpu's first full run (H100, Triton 3.6, 2026-12-07): round 23's honest h24 and h26 (the tile's
    store in a @triton.jit helper) were refused on a GPU, since Triton 3.6 names a helper called with several
    arguments specialised to 1 ``@"mod._store_tile__..._(4,)cconstexpr_1__(5,)cconstexpr_1_..."``: the name did not
    match, and the call's arguments were read up to the first parenthesis of the name. The TTIR here is Triton
    3.6's of h26 at its first case (M = N = K = 1, compiled for sm_90 on a CPU)."""
    from gpuperf.grading.dataflow import unstored_dots
    from gpuperf.grading.frontend import inline_calls

    ttir = (Path(__file__).parent / "data" / "triton36_store_in_helper.ttir").read_text()
    assert "cconstexpr_1__(5,)cconstexpr_1_" in ttir
    assert unstored_dots(ttir) == 0
    store = next(line for line in inline_calls(ttir).splitlines() if "tt.store" in line)
    assert "$in" not in store.split(",")[1], store  # the stored value is the kernel's accumulator, bound
