"""Round 20 of issue 30 (2026-12-06, twelfth session): the two wrong L5.tiled files the twentieth attacker got
accepted (tests/grading_attacks_round20, REPORT.md there).

- 20: the key blocks in the outer loop, m, l and acc kept for every query (FlashAttention-1's order). The
  exercise asks for one block of queries at a time with a loop over blocks of keys inside. The grader follows
  the rows of q each score product takes (by ``@`` or by elementwise multiplies) and refuses products that come
  back to a block of queries they had left.
- 47: a two-pass softmax whose copy of K is a sum over a dimension of size 1, pass 1 by elementwise
  multiply-adds. A product or a reduction computed from k and nothing of q (and a reduction with as many
  elements as it read) is now an image of k, so reading it reads k: both passes count.

Honest variants pass: the course's solution, the attacker's h07 and h14, other block sizes."""

from __future__ import annotations

import pytest

from attack_files import attack_folder, find_attack, load_attack, load_attack_variant

SEED = 11


def _grade(key, fn, only=None):
    import gpuperf.kernels  # noqa: F401  (the course's kernels, as a learner's notebook has them)
    from gpuperf import grading

    return grading.grade_report(key, fn, seed=SEED, stop_at_first_failure=True, only=only)


def _refused(report, words):
    assert not report.passed
    text = " ".join(r.message for r in report.failures)
    assert words in text, text


def test_20_keys_outermost_is_refused_with_the_loop_order():
    key, fn = load_attack(find_attack(20, "20"))
    _refused(_grade(key, fn), "your loop visits the key blocks outermost")


def test_20_keys_outermost_on_a_scaled_copy_of_q_is_refused():
    """The queries scaled first (q * scale, then blocks of that copy): rows of the copy are rows of q."""
    key, fn = load_attack_variant(find_attack(20, "20"),
                                  ("    for c0 in range(0, n_k, block_cols):",
                                   "    q = q * scale\n    for c0 in range(0, n_k, block_cols):"),
                                  ("s = (q[sl] @ kb.T) * scale", "s = q[sl] @ kb.T"))
    _refused(_grade(key, fn), "your loop visits the key blocks outermost")


def test_20_keys_outermost_with_elementwise_scores_is_refused():
    key, fn = load_attack_variant(find_attack(20, "20"),
                                  ("s = (q[sl] @ kb.T) * scale",
                                   "s = torch.zeros((q[sl].shape[0], kb.shape[0]), dtype=q.dtype)\n"
                                   "            for j in range(d):\n"
                                   "                s += q[sl][:, j:j + 1] * kb[:, j].unsqueeze(0)\n"
                                   "            s = s * scale"))
    _refused(_grade(key, fn), "your loop visits the key blocks outermost")


def test_47_two_pass_through_a_singleton_sum_is_refused():
    key, fn = load_attack(find_attack(20, "47"))
    _refused(_grade(key, fn), "read each element of k")


@pytest.mark.parametrize("copy", ["k[c0:c0 + block_cols] @ torch.eye(d, dtype=k.dtype)",
                                  "(k[c0:c0 + block_cols].unsqueeze(0) + 0 * q[:1, :1].sum()).sum(0)",
                                  "k[c0:c0 + block_cols].unsqueeze(0).amax(0)"])
def test_47_two_pass_through_other_images_of_k_is_refused(copy):
    """k copied by a product with the identity, by a sum with q mixed in, by a max over a dimension of size 1."""
    key, fn = load_attack_variant(find_attack(20, "47"),
                                  ("k[c0:c0 + block_cols].unsqueeze(0).sum(0)", copy))
    _refused(_grade(key, fn), "read each element of k")


@pytest.mark.parametrize("tag", ["h07", "h14"])
def test_honest_tiled_files_of_round_20_pass(tag):
    path = sorted((attack_folder(20) / "excluded").glob(f"{tag}_*.py"))[0]
    key, fn = load_attack(path)
    report = _grade(key, fn)
    assert report.passed, report.text()


def test_course_solution_and_a_scaled_copy_of_q_pass():
    """The course's solution, and the same on a scaled copy of q taken in blocks (row spans of a copy)."""
    key, fn = load_attack_variant(find_attack(20, "20"), ("""    for c0 in range(0, n_k, block_cols):
        kb, vb = k[c0:c0 + block_cols], v[c0:c0 + block_cols]
        for r0 in range(0, n_q, block_rows):
            sl = slice(r0, r0 + block_rows)
            s = (q[sl] @ kb.T) * scale""", """    qs = q * scale
    for r0 in range(0, n_q, block_rows):
        sl = slice(r0, r0 + block_rows)
        for c0 in range(0, n_k, block_cols):
            kb, vb = k[c0:c0 + block_cols], v[c0:c0 + block_cols]
            s = qs[sl] @ kb.T"""))
    report = _grade(key, fn)
    assert report.passed, report.text()
    from gpuperf.kernels.labs import l5

    report = _grade("L5.tiled", l5.tiled_attention)
    assert report.passed, report.text()


def test_every_file_of_round_20_tiled_is_tested():
    tags = {p.name.split("_")[0] for p in attack_folder(20).glob("*_L5tiled_*.py")}
    assert tags == {"20", "47"}, tags


def test_round_19_fa1_order_file_is_refused_now():
    """Round 19's h09 (FlashAttention-1's order, accepted then as honest) is refused since round 20: the
    exercise asks for the blocks of queries outermost (labs/L5, Exercise 1); so is tests/grading_domain_solutions'
    tiled_keys_outer (now in WRONG)."""
    key, fn = load_attack(attack_folder(19) / "excluded" / "h09_L5tiled_fa1_loop_order.py")
    _refused(_grade(key, fn), "your loop visits the key blocks outermost")
