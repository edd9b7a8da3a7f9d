"""Round 18 of issue 30 (2026-12-06, tenth session), the review's part: a line-by-line review of the ninth
session's grader change found two honest kernels it refused (tests/grading_attacks_round18/hr1, hr2).

- hr1 (L3.online): x converted to float64 by torch and read through float64 pointers was counted in x's elements
  by bytes; a buffer's own type counts its lanes again where no kernel packed values into it.
- hr2 (L4.matmul): split-K counting its blocks of K as the slice's length divided by BLOCK_K lost the split-K
  exemption of the 32-bit mask rule (the quotient marked axis 1 a block's index)."""

from __future__ import annotations

import pytest
import triton
import triton.language as tl

from attack_files import find_attack, load_attack

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)


@pytest.mark.parametrize("tag", ["hr1", "hr2"])
def test_honest_files_of_the_review_pass(tag):
    """Every case, seed 11."""
    from gpuperf import grading

    key, fn = load_attack(find_attack(18, tag))
    report = grading.grade_report(key, fn, seed=11)
    assert report.passed, f"{tag} refused by {key}:\n{report.text()}"


@triton.jit
def _slice_kernel(x_ptr, y_ptr, K, SPLIT, BLOCK: tl.constexpr, HOW: tl.constexpr):
    pid_k = tl.program_id(1)
    lanes = tl.arange(0, BLOCK)
    per = tl.cdiv(K, SPLIT * BLOCK) * BLOCK  # a split's slice of K, whole blocks
    k_lo = pid_k * per
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    if HOW == 0:  # the slice's blocks counted: its length over BLOCK
        n_it = (tl.minimum(k_lo + per, K) - k_lo + BLOCK - 1) // BLOCK
    elif HOW == 1:  # the same from what is left of K
        n_it = tl.cdiv(tl.minimum(K - k_lo, per), BLOCK)
    else:  # the split's start divided back: a block's index, no split index
        n_it = k_lo // per
    for i in range(0, n_it):
        offs = k_lo + i * BLOCK + lanes
        acc += tl.load(x_ptr + offs, mask=offs < K, other=0.0)
    tl.atomic_add(y_ptr + lanes, acc)


@pytest.mark.parametrize("how,split,block_axis", [(0, 1, False), (0, 4, False), (1, 1, False), (2, 1, True)])
def test_a_split_count_of_blocks_keeps_the_split_index(how, split, block_axis):
    """A quotient of a length or a bound computed from the split index (a difference, a minimum) leaves it a
    split index; a quotient of the index times its slice makes it a block's."""
    import torch

    from gpuperf.grading import frontend

    if frontend.unavailable():
        pytest.skip(frontend.unavailable())
    x, y = torch.randn(100), torch.zeros(16)
    problem, ttir = frontend.lower(_slice_kernel.fn, (x, y, 100, split), dict(BLOCK=16, HOW=how))
    assert ttir and not problem, problem
    ops = frontend.kernel_function(frontend.inline_calls(ttir)).ops
    assert ("y" in frontend._block_axes(ops)) == block_axis
    if not block_axis:
        assert not frontend.wrapping_masks(ttir)
