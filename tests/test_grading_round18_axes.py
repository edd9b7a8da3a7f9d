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


@pytest.mark.parametrize("how,wraps", [(0, True), (3, False)])
def test_the_names_triton_3_6_gives_calls_are_read(how, wraps):
    """Triton 3.6 (the GPU machines') quotes a called function's name and writes its constant arguments apart,
    ``@"triton.language.standard.cdiv__i32__(1,)cconstexpr_16_"``: ``tl.cdiv`` went unread there, so no size was
    rounded and the 32-bit mask rule missed round 17's 13 and round 18's 07 on the GPU. The TTIR Triton 3.6 made
    on an H100 for ``_split_kernel`` of test_grading_round17_r17misc (HOW 0: a block's index times a padded
    tile, refused; HOW 3: a split index times its slice of K, exempt), read on any machine."""
    from pathlib import Path

    from gpuperf.grading import frontend

    ttir = (Path(__file__).parent / "data" / f"triton36_split_kernel_how{how}.ttir").read_text()
    assert '@"triton.language.standard.cdiv__i32__(1,)cconstexpr_16_"' in ttir
    assert frontend.wrapping_masks(ttir) == wraps
    assert frontend._cdiv_arguments("i32__(1,)cconstexpr_16_", ["%n"]) == [("value", "%n"), ("const", 16)]
    assert frontend._cdiv_arguments("i32_c16", ["%n"]) == [("value", "%n"), ("const", 16)]
    call = frontend._CALL.match('tt.call @"mod._mk__i32__(1,)cconstexpr_16_"(%row) : (i32) -> tensor<16xi1>')
    assert call and call.group(1) == "mod._mk__i32__(1,)cconstexpr_16_"
