"""Round 17's open finding, closed in the tenth session (r18passes): the causal pass count reads a program's
blocks of queries from the rows of q that reach each walk's tl.dot (``_query_walks``), not from the order of its
loads. 01, 02 and 16 (two walks for one block of queries: keys loaded before q, or a row more in the first walk)
and h01 (two blocks loaded first, walked in turn) are in ``test_grading_round17*.py``; here the honest kernel
that refused the ninth session's rule (``attention_paired_blocks_kt``: blocks p and last-p, each two halves of
16 rows sharing every tile of keys, walked in turn; the middle pair's blocks touch), a block as two halves,
and a decoy: 01 with its second walk's keys also multiplied with a far block of q (times 0), which must not make the
second walk a walk of another block."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

CASE = "the key blocks it visits"


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


def _grade(key, fn, seed):
    if not _interpreted_here():
        pytest.skip("passes are counted by the interpreter")
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=seed, only=lambda label: CASE in label)
    assert report.results, f"{key}: no case says {CASE!r}"
    return report


@pytest.mark.parametrize("name", ["attention_paired_blocks_kt", "attention_halves_skip"])
@pytest.mark.parametrize("seed", [11, 12])
def test_paired_and_halved_blocks_pass_the_causal_pass_count(name, seed):
    import grading_domain_solutions as solutions

    report = _grade("L5.causal", getattr(solutions, name), seed)
    assert report.passed, f"{name} refused (seed {seed}):\n{report.text()}"


DECOY = ("        s = tl.dot(q, tl.trans(k), input_precision=\"ieee\") * scale\n"
         "        visible = keys[None, :] < N_K\n",
         "        far = N_Q - 1 - tl.arange(0, BLOCK_M)\n"
         "        qf = tl.load(q_head + far[:, None] * HEAD_DIM + dims[None, :])\n"
         "        s = tl.dot(q, tl.trans(k), input_precision=\"ieee\") * scale\n"
         "        s = s + 0.0 * tl.sum(tl.dot(qf, tl.trans(k), input_precision=\"ieee\"), axis=0)[None, :]\n"
         "        visible = keys[None, :] < N_K\n")


def test_a_decoy_product_with_a_far_block_makes_no_block_of_its_own():
    key, fn = load_attack_variant(find_attack(17, "01"), DECOY)
    report = _grade(key, fn, 11)
    assert not report.passed, f"01 with a decoy product accepted by {key}:\n{report.text()}"
    assert "reads K twice" in report.failures[0].message, report.failures[0].message
