"""gpuperf.grading.dataflow: which tile products reach memory, read from kernels lowered to TTIR (no run)."""

from __future__ import annotations

import pytest

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before the kernels below are defined)
import torch
import triton
import triton.language as tl

from attack_files import find_attack, load_attack
from gpuperf.grading import dataflow, frontend


@triton.jit
def _carried(a_ptr, c_ptr, K, KEEP_SECOND: tl.constexpr, ATOMIC: tl.constexpr):
    i = tl.arange(0, 16)
    acc = tl.zeros((16, 16), dtype=tl.float32)
    other = tl.zeros((16, 16), dtype=tl.float32)
    for k0 in range(0, K, 16):
        a = tl.load(a_ptr + (k0 + i)[:, None] * 16 + i[None, :])
        acc = tl.dot(a, a, acc, input_precision="ieee")  # carried, stored after the loop
        other = tl.dot(a, a, other, input_precision="ieee")  # carried beside acc: stored only if KEEP_SECOND
    if KEEP_SECOND:
        acc += other
    if ATOMIC:
        tl.atomic_add(c_ptr + i[:, None] * 16 + i[None, :], acc)
    else:
        tl.store(c_ptr + i[:, None] * 16 + i[None, :], acc)


@triton.jit
def _branch(a_ptr, c_ptr, flag):
    i = tl.arange(0, 16)
    a = tl.load(a_ptr + i[:, None] * 16 + i[None, :])
    out = tl.zeros((16, 16), dtype=tl.float32)
    if flag > 0:
        out = tl.dot(a, a, input_precision="ieee")
    tl.store(c_ptr + i[:, None] * 16 + i[None, :], out)


def _ttir(kernel, *args, **constexprs) -> str:
    problem, ttir = frontend.lower(kernel.fn, args, constexprs)
    if not ttir:
        pytest.skip(f"Triton's front end is not available here: {problem or frontend.unavailable()}")
    return ttir


@pytest.mark.parametrize("keep, atomic, unstored", [(False, False, 1), (True, False, 0), (False, True, 1),
                                                   (True, True, 0)])
def test_a_product_carried_beside_the_stored_one_is_told_apart(keep, atomic, unstored):
    a, c = torch.zeros(64, 16), torch.zeros(16, 16)
    assert dataflow.unstored_dots(_ttir(_carried, a, c, 64, KEEP_SECOND=keep, ATOMIC=atomic)) == unstored


def test_a_product_made_in_a_branch_reaches_the_store_after_it():
    a, c = torch.zeros(16, 16), torch.zeros(16, 16)
    assert dataflow.unstored_dots(_ttir(_branch, a, c, 3)) == 0


def test_no_ir_no_products():
    assert dataflow.unstored_dots("") == 0


def test_a_product_thrown_away_is_refused_and_told_so():
    """Round 8's a27: C done as a broadcast multiply and a sum, beside a tl.dot nothing reads (it was counted)."""
    from gpuperf import grading

    key, fn = load_attack(find_attack(8, "a27"))
    report = grading.grade_report(key, fn, seed=5, stop_at_first_failure=True)
    assert not report.passed and "never reaches" in report.text(), report.text()
