"""r15jit (2026-12-05, eighth session): a ``@triton.jit`` helper hid a 32-bit product from the TTIR rules, which read
only the kernel's own function (the front end keeps a helper as a ``tt.func`` of its own, called by ``tt.call``,
until the compiler's inliner runs, and for ever where it is marked noinline): ``mask = _mk(row, n_cols, cols)`` with
``row * n_cols + cols < row * n_cols + n_cols`` inside ``_mk`` was accepted. ``frontend.inline_calls`` now reads the
kernel's helpers as part of it, for the mask rule and the address rule."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any kernel is defined)


def _on_the_cpu() -> bool:
    return not torch.cuda.is_available() or gpuperf.kernels.interpreter_enabled()


@triton.jit
def _row_mask(row, n_cols, cols):
    return row * n_cols + cols < row * n_cols + n_cols  # 32-bit: wraps past 2^31 elements


@triton.jit(noinline=True)
def _row_mask_kept(row, n_cols, cols):
    flat = _flat(row, n_cols, cols)  # a helper's helper
    return flat < (row + 1) * n_cols


@triton.jit
def _flat(row, n_cols, cols):
    return row * n_cols + cols


@triton.jit
def _row_start(row, stride):
    return row * stride  # 32-bit: wraps past 2^31 elements


@triton.jit
def _row_start64(row, stride):
    return row.to(tl.int64) * stride


@triton.jit
def _exp2(x):
    return tl.exp2(x * 1.4426950408889634)


@triton.jit
def _softmax_body(x_row, y_row, cols, mask):
    x = tl.load(x_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
    num = _exp2(x - tl.max(x, axis=0))
    y = num / tl.sum(num, axis=0)
    tl.store(y_row + cols, y.to(y_row.dtype.element_ty), mask=mask)


@triton.jit
def _mask_in_a_helper(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # wrong: the mask's 32-bit product in a helper
    cols = tl.arange(0, BLOCK)
    mask = _row_mask(row, n_cols, cols)
    _softmax_body(x_ptr + _row_start64(row, x_row_stride), y_ptr + _row_start64(row, y_row_stride), cols, mask)


@triton.jit
def _mask_in_a_noinline_helper(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # wrong: the same in a noinline helper, through a helper of its own
    cols = tl.arange(0, BLOCK)
    mask = _row_mask_kept(row, n_cols, cols)
    _softmax_body(x_ptr + _row_start64(row, x_row_stride), y_ptr + _row_start64(row, y_row_stride), cols, mask)


@triton.jit
def _offset_in_a_helper(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # wrong: the row's address in 32 bits, computed in a helper
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    _softmax_body(x_ptr + _row_start(row, x_row_stride), y_ptr + _row_start(row, y_row_stride), cols, mask)


@triton.jit
def _honest_helpers(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)  # honest: 64-bit offsets and an exp2 from helpers
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    _softmax_body(x_ptr + _row_start64(row, x_row_stride), y_ptr + _row_start64(row, y_row_stride), cols, mask)


_KERNELS = [_mask_in_a_helper, _mask_in_a_noinline_helper, _offset_in_a_helper, _honest_helpers]


def _softmax(how: int):
    kernel = _KERNELS[how]

    def softmax_rows(x):
        n_rows, n_cols = x.shape
        y = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
        kernel[(n_rows,)](x, y, n_rows, n_cols, x.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(n_cols))
        return y

    return softmax_rows


def _first_case():
    """An ``only=`` predicate: the first case whose sizes are all above 1 (a size of 1 is a constant in the
    compiled kernel)."""
    import re

    picked: list = []

    def only(label):
        if not picked:
            numbers = [int(n) for n in re.findall(r"\d+", label)]
            if numbers and min(numbers) > 1:
                picked.append(label)
        return bool(picked) and label == picked[0]

    return only


@pytest.mark.parametrize("how,words", [
    (0, ("mask", "32-bit product")),
    (1, ("mask", "32-bit product")),
    (2, ("32-bit",)),
])
def test_a_product_in_a_jit_helper_is_the_kernels(how, words):
    """A wrong L3.softmax whose 32-bit product of the row and a size given at run time is computed in a
    ``@triton.jit`` helper (the mask's, in a plain helper and in a noinline helper calling another; the row's
    address) is refused as the same kernel written out is."""
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("graded under the interpreter")
    report = grading.grade_report("L3.softmax", _softmax(how), seed=11, only=_first_case())
    assert report.results and not report.passed, f"helper {how} accepted"
    message = report.failures[0].message
    for word in words:
        assert word in message, message


def test_an_honest_kernel_with_jit_helpers_is_accepted():
    """64-bit row offsets and an exp2 computed in helpers: accepted on every case."""
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("graded under the interpreter")
    report = grading.grade_report("L3.softmax", _softmax(3), seed=11)
    assert report.results and report.passed, report.text()


@pytest.mark.parametrize("how,wraps", [(0, True), (1, True), (2, False), (3, False)])
def test_inline_calls_binds_arguments_and_results(how, wraps):
    """The TTIR rules on the kernel lowered here (no grading): the mask rule flags 0 and 1 (a helper's product,
    a noinline helper's helper's), and the address rule 2; the honest kernel 3 is flagged by neither."""
    from gpuperf.grading import frontend

    x = torch.zeros(4, 100)
    problem, ttir = frontend.lower(_KERNELS[how].fn, (x, x, 4, 100, 100, 100), {"BLOCK": 128})
    if not ttir:
        pytest.skip(f"the front end did not run here: {problem or frontend.unavailable()}")
    assert "tt.call @" in ttir and "_row_start" in ttir  # the helpers are functions of their own in the TTIR
    assert frontend.wrapping_masks(ttir) is (how in (0, 1))
    assert frontend.wrapping_offsets(ttir) is (how == 2)
    assert frontend.wrapping_masks(frontend.inline_calls(ttir)) is (how in (0, 1))  # inlining twice: the same
