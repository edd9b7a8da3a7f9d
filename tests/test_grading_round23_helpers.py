"""Round 23 (2026-12-07): honest kernels whose final store sits in a ``@triton.jit`` helper (h24 L6.backward,
h25 L5.forward, h26 L4.matmul of tests/grading_attacks_round23) were refused as computing "tl.dot products
whose result never reaches what it stores": the check read the kernel's function without its helpers. It reads
them inlined now (:func:`gpuperf.grading.frontend.inline_calls`), which also counts a product made in a helper
and never stored."""

from __future__ import annotations

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before the kernels below are defined)
import torch
import triton
import triton.language as tl

from gpuperf.grading.dataflow import unstored_dots
from gpuperf.grading.frontend import lower


@triton.jit
def _store_tile(c_ptr, rows, cols, acc):
    tl.store(c_ptr + rows[:, None] * 16 + cols[None, :], acc)


@triton.jit
def _product(a, b):
    return tl.dot(a, b)


@triton.jit
def _stored_in_a_helper(a_ptr, b_ptr, c_ptr):
    r = tl.arange(0, 16)
    a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
    b = tl.load(b_ptr + r[:, None] * 16 + r[None, :])
    _store_tile(c_ptr, r, r, tl.dot(a, b))


@triton.jit
def _unused_product_in_a_helper(a_ptr, b_ptr, c_ptr):
    r = tl.arange(0, 16)
    a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
    b = tl.load(b_ptr + r[:, None] * 16 + r[None, :])
    unused = _product(a, b)  # noqa: F841
    tl.store(c_ptr + r[:, None] * 16 + r[None, :], a + b)


def _ttir(kernel):
    a, b, c = (torch.zeros(16, 16) for _ in range(3))
    complaint, ttir = lower(kernel.fn, (a, b, c), {})
    assert not complaint and ttir, complaint
    return ttir


def test_a_product_stored_by_a_helper_reaches_memory():
    assert unstored_dots(_ttir(_stored_in_a_helper)) == 0


def test_a_product_made_in_a_helper_and_dropped_is_counted():
    assert unstored_dots(_ttir(_unused_product_in_a_helper)) == 1
