"""Round 30 (2026-12-07, the thirtieth attacker's files; fixed in the nineteenth session).

- Products written with no multiply the broadcast rule read: an exponential of an outer sum of logarithms
  (``exp(log|a|[:, :, None] + log|b|[None])``, the sign from a compare), ``tl.math.div_rn``, broadcasts passed
  through ``tl.clamp``, 2-D tiles gathered so that their lane-by-lane product reshaped to three dimensions and
  summed is the matrix product. Every element-wise operation now carries a broadcast through, any float
  operation of two tiles broadcast against each other from loads counts, ``tt.precise_divf`` is a quotient, a
  reshape to three dimensions of a product of two loaded tiles counts, and a batched ``tl.dot`` must batch more
  than one entry to switch the lane-by-lane rule off.
- Beside them, a guard ``tl.where(|d - lazy| <= tol, lazy, d)`` used the real ``tl.dot`` only where it disagreed
  with the lazy sum, and two dots cancelled across a transpose (``a @ b - (b^T @ a^T)^T``). The perturbation
  tests gained two reruns: every product made 0 (the output must go wrong) and every product changed by 2^-22 of
  itself (a float32 output must move, by a bit at least)."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack

_interpreted = pytest.mark.skipif(
    not __import__("gpuperf.kernels", fromlist=["interpreter_enabled"]).interpreter_enabled(),
    reason="counted under the interpreter (a CPU)")


def _grade(key, fn, seed=1):
    import gpuperf.kernels  # noqa: F401
    from gpuperf import grading

    return grading.grade_report(key, fn, seed=seed, stop_at_first_failure=True)


@_interpreted
@pytest.mark.parametrize("tag", [f"{n:02d}" for n in range(1, 13)])
def test_every_wrong_file_of_round_30_is_refused(tag):
    key, fn = load_attack(find_attack(30, tag))
    report = _grade(key, fn)
    assert not report.passed, report.text()
    text = " ".join(r.message for r in report.failures)
    assert "multiplies two tiles by broadcasting" in text, text


class _Case:
    """A case of its own for :func:`gpuperf.grading._products_matter`: passes when ``right(site)``, and returns
    ``output(site)`` (a tensor) as what the reader's function returned."""

    label = "a case"
    device = "cpu"

    def __init__(self, right, output):
        self.right, self.output = right, output

    def run(self, runner):
        from gpuperf.grading import algorithm
        from gpuperf.grading.core import CaseResult

        site = algorithm._PERTURB["site"]
        runner.returned.append(self.output(site))
        return [CaseResult(self.label, "-", self.right(site))]


def _matter(case, seed=0):
    import torch

    from gpuperf import grading

    chain = (("kernel.py", "k", 1, 10),)
    return grading._products_matter(grading._exercise("L4.matmul"), lambda a, b: a,
                                    [(case, {chain: (("kernel.py", 3), chain)})], False,
                                    torch.Generator().manual_seed(seed))


def _ones(site):
    import torch

    return torch.ones(8, dtype=torch.float32)


def _moved(site):
    import torch

    return torch.ones(8, dtype=torch.float32) + (1e-6 if site == "small" else 0.0)


@pytest.mark.parametrize("seed", range(3))
def test_a_guarded_dot_whose_small_changes_never_reach_the_output_is_refused(seed):
    # right unless the products are changed by their own size; bit for bit the same under 2^-22
    found = _matter(_Case(lambda site: site in (None, "small"), _ones), seed)
    assert found and "to the last bit" in found[0].message, found


@pytest.mark.parametrize("seed", range(3))
def test_products_that_cancel_when_all_are_zero_are_refused(seed):
    found = _matter(_Case(lambda site: site in (None, "zero", "small"), _moved), seed)
    assert found and "made 0" in found[0].message, found


def test_an_honest_dot_passes_both_new_reruns_and_a_16_bit_output_is_not_read_to_the_bit():
    import torch

    # (round 34: with every product doubled, L4's honest C comes out doubled: right against 2 A B)
    assert _matter(_Case(lambda site: site in (None, "small", "double"), _moved)) == []
    # no float32 output: the 2^-22 rerun cannot tell, and does not refuse
    half = _Case(lambda site: site in (None, "small", "double"), lambda site: torch.ones(8, dtype=torch.float16))
    assert _matter(half) == []


@_interpreted
@pytest.mark.parametrize("tag", ["h03", "h04"])
def test_honest_files_of_round_30_pass(tag):
    # h03: two heads a program with a batched tl.dot of two entries; h04: C^T tiles as B^T A^T
    key, fn = load_attack(find_attack(30, tag))
    report = _grade(key, fn)
    assert report.passed, report.text()
