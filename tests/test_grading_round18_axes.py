"""Round 18 of issue 30 (2026-12-06, tenth session), 07 (L4.matmul): round 17's 13 again, the tile's rows made
from ``tl.maximum(pid_m, 0)``: an operation of the program id with constants only is the id itself, so axis 1 is
a block's index and the bare id times a padded tile in the store's mask is a 32-bit product of the program id."""

from __future__ import annotations

import pytest
import triton
import triton.language as tl

from attack_files import find_attack, load_attack

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)


def test_rows_from_the_program_id_through_a_maximum_are_a_blocks_rows():
    from gpuperf import grading

    key, fn = load_attack(find_attack(18, "07"))
    report = grading.grade_report(key, fn, seed=11, only=lambda label: True)
    assert not report.passed, f"07 accepted by {key}:\n{report.text()}"
    assert "32-bit product of the program id" in report.failures[0].message, report.failures[0].message


@triton.jit
def _axis_kernel(x_ptr, M, N, BLOCK: tl.constexpr, HOW: tl.constexpr):
    pid_1 = tl.program_id(1)
    lanes = tl.arange(0, BLOCK)
    if HOW == 0:
        blk = tl.maximum(pid_1, 0)
    else:
        blk = tl.minimum(pid_1, 1 << 20) + 1
    rows = blk * BLOCK + lanes
    flat = pid_1 * (BLOCK * (tl.cdiv(N, BLOCK) * BLOCK)) + lanes
    mask = (flat < M * N) & (rows < M)
    x = tl.load(x_ptr + lanes, mask=mask, other=0.0)
    tl.store(x_ptr + lanes, x + 1, mask=mask)


@pytest.mark.parametrize("how,block_axis", [(0, True), (1, True)])
def test_an_operation_with_constants_keeps_the_program_id(how, block_axis):
    import torch

    from gpuperf.grading import frontend

    if frontend.unavailable():
        pytest.skip(frontend.unavailable())
    x = torch.randn(64)
    problem, ttir = frontend.lower(_axis_kernel.fn, (x, 64, 48), dict(BLOCK=16, HOW=how))
    assert ttir and not problem, problem
    ops = frontend.kernel_function(frontend.inline_calls(ttir)).ops
    assert ("y" in frontend._block_axes(ops)) == block_axis
    assert frontend.wrapping_masks(ttir)
