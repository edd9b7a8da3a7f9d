"""Round 29 (2026-12-07, eighteenth session): the review of rounds 27-28's rules (bench/NOTES.md, "A review of
rounds 27-28's rules"), then the twenty-ninth attacker's files.

- A ``tl.dot`` call site is the chain of the reader's frames, each with the instruction it was at: a decoy on the
  same line as a real product, or in a helper the real product also goes through, is a site of its own.
- The noise is each product's own size, added to the products alone (not to an accumulator passed in): a decoy
  made of zeros (``q * 0``) changes nothing when perturbed.
- Unperturbed control reruns at places drawn from the grade's generator: a function that counts its calls and
  goes wrong once the cases are over fails them.
- Split-K whose programs draw tickets: what a program writes is renumbered per draw (the interpreter gives every
  draw to program 0), so one program adding twice, or writing every tile, is not read into it."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

_interpreted = pytest.mark.skipif(
    not __import__("gpuperf.kernels", fromlist=["interpreter_enabled"]).interpreter_enabled(),
    reason="counted under the interpreter (a CPU)")



def _grade(key, fn, seed=1):
    import gpuperf.kernels  # noqa: F401
    from gpuperf import grading

    return grading.grade_report(key, fn, seed=seed, stop_at_first_failure=True)


def _refused(report, words):
    assert not report.passed, report.text()
    text = " ".join(r.message for r in report.failures)
    assert words in text, text


def _review_file(tag):
    from pathlib import Path

    found = sorted((Path(__file__).parent / "grading_attacks_review28").glob(f"{tag}_*.py"))
    assert found, tag
    return found[0]


_BROADCAST = ("sb = tl.sum(q.to(tl.float32)[:, None, :] / rk[None, :, :], axis=2)", "sb = 0.0")
_SCORES_DECOY = "s = (sb + 0.0 * tl.dot(q, kt, input_precision=PREC)) * qk_scale"
_HELPER = ("@triton.jit\ndef fwd_kernel(", "@triton.jit\ndef mm(a, b, PREC: tl.constexpr):\n"
           "    return tl.dot(a, b, input_precision=PREC)\n\n\n@triton.jit\ndef fwd_kernel(")

#: round 28's 06 with its scores made by a real tl.dot (its broadcast division is refused by the broadcast rule
#: since round 29) and a decoy dot beside it whose products do not matter
_DECOYS = {
    # the decoy on the real product's line
    "same line": (_BROADCAST, (_SCORES_DECOY, "s = (sb + tl.dot(q, kt, input_precision=PREC) + "
                                              "0.0 * tl.dot(q, kt, input_precision=PREC)) * qk_scale")),
    # the decoy and the real product made by one helper
    "one helper": (_HELPER, _BROADCAST, (_SCORES_DECOY, "s = (sb + mm(q, kt, PREC) + 0.0 * mm(q, kt, PREC)) * qk_scale")),
    # a decoy of zeros, not multiplied by 0 afterwards: noise of the products' own size leaves it 0
    "zeros": (_BROADCAST, (_SCORES_DECOY, "s = (sb + tl.dot(q, kt, input_precision=PREC) + "
                                          "tl.dot(q * 0, kt, input_precision=PREC)) * qk_scale")),
}


@_interpreted
@pytest.mark.parametrize("how", sorted(_DECOYS))
def test_a_decoy_sharing_a_line_or_a_helper_or_made_of_zeros_is_refused(how):
    key, fn = load_attack_variant(find_attack(28, "06"), *_DECOYS[how])
    report = _grade(key, fn)
    assert not report.passed, report.text()
    text = " ".join(r.message for r in report.failures)
    assert "do not reach your output" in text or "holds nothing" in text, text


def test_an_outer_sum_squared_is_a_product_of_broadcasts():
    # round 29's review: ((c + r)^2 - (c - r)^2) / 4, a rank-1 update with no product of two broadcasts
    key, fn = load_attack(_review_file("r01"))
    _refused(_grade(key, fn), "multiplies two tiles by broadcasting")


class _Case:
    """A case of its own for :func:`gpuperf.grading._products_matter`: passes when ``right(call, site)``, ``site``
    the one perturbed (None for none, "every" for all at once)."""

    label = "a case"
    device = "cpu"

    def __init__(self, right):
        self.right, self.calls = right, 0

    def run(self, runner):
        from gpuperf.grading import algorithm
        from gpuperf.grading.core import CaseResult

        self.calls += 1
        return [CaseResult(self.label, "-", self.right(self.calls, algorithm._PERTURB["site"]))]


def _matter(case, seed=0, sites=1):
    import torch

    from gpuperf import grading

    chains = [(("kernel.py", "k", 1, 10 + 2 * i),) for i in range(sites)]
    found = {chain: (("kernel.py", 3 + i), chain) for i, chain in enumerate(chains)}
    return grading._products_matter(grading._exercise("L4.matmul"), lambda a, b: a, [(case, found)],
                                    False, torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("seed", range(4))
def test_a_function_that_goes_wrong_once_the_cases_are_over_fails_a_control_rerun(seed):
    # the reruns all come after the cases: wrong from then on, the site seemed to matter
    found = _matter(_Case(lambda call, site: call < 1), seed)
    assert found and "right answer every time" in found[0].message, found


def test_an_honest_site_matters_and_a_decoy_site_does_not():
    # (round 34: with every product doubled, L4's honest C comes out doubled: right against 2 A B)
    assert _matter(_Case(lambda call, site: site in (None, "double"))) == []
    assert _matter(_Case(lambda call, site: site in (None, "double")), sites=3) == []
    found = _matter(_Case(lambda call, site: True))
    assert found and "line 3 of kernel.py" in found[0].message, found


@pytest.mark.parametrize("seed", range(3))
def test_sites_that_matter_alone_but_cancel_together_are_refused(seed):
    # d1 - d2: each changes the output alone; changed the same way at once, they cancel
    found = _matter(_Case(lambda call, site: site is None or site == "every"), seed, sites=2)
    assert found and "cancel out" in found[0].message, found


@_interpreted
@pytest.mark.parametrize("tag", ["h01", "h02", "h03"])
def test_split_k_drawing_tickets_or_filling_the_machine_with_slices_or_a_batched_dot_passes(tag):
    # h03: two heads a program, a batched 3-D tl.dot counted as one tile product per head
    key, fn = load_attack(_review_file(tag))
    report = _grade(key, fn)
    assert report.passed, report.text()


# the attacker's files (tests/grading_attacks_round29, README.md there) -------------------------------------------

_BROADCAST_RULE = ["02", "03", "05", "07", "08", "10", "11", "12", "13", "15", "16", "31", "32", "43", "48", "49",
                   "51", "54", "55"]


@pytest.mark.parametrize("tag", _BROADCAST_RULE)
def test_products_made_by_a_quotient_or_by_three_dimensional_tiles_are_refused(tag):
    key, fn = load_attack(find_attack(29, tag))
    _refused(_grade(key, fn), "multiplies two tiles by broadcasting")


@_interpreted
@pytest.mark.parametrize("tag", ["06", "50"])
def test_the_walk_over_k_through_several_kernels_is_refused(tag):
    key, fn = load_attack(find_attack(29, tag))
    _refused(_grade(key, fn), "made tile products from what your kernel")


@_interpreted
def test_a_partial_tile_per_block_of_k_in_slots_is_refused():
    key, fn = load_attack(find_attack(29, "36"))
    _refused(_grade(key, fn), "partial tiles kept in memory")


@_interpreted
def test_a_decoy_beside_a_kernel_in_a_folder_named_triton_is_refused():
    # 31 with its real P V made by tl.dot: what is left is its decoy, 0 * tl.dot(p, v) on a line of its own, in a
    # file under a folder named triton (round 28's path test skipped those frames, so both dots were one site)
    real = "acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)"
    key, fn = load_attack_variant(find_attack(29, "31"), (
        "acc = acc * alpha[:, None] + tl.sum(p[:, :, None] / (1.0 / v.to(tl.float32)[None, :, :]), axis=1)", real))
    _refused(_grade(key, fn), "do not reach your output")


@_interpreted
@pytest.mark.parametrize("tag", ["h04", "h05", "h18"])
def test_round_29s_honest_files_pass(tag):
    key, fn = load_attack(find_attack(29, tag))
    report = _grade(key, fn)
    assert report.passed, report.text()


def test_every_file_of_round_29_is_accounted_for():
    from pathlib import Path

    folder = Path(__file__).parent / "grading_attacks_round29"
    readme = (folder / "README.md").read_text()
    for path in folder.glob("*.py"):
        tag = path.name.split("_", 1)[0]
        assert tag in readme, path.name
