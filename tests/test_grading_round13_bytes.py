"""Round 13 (2026-12-05), r13bytes's part: findings 3 and 4 of tests/grading_attacks_round13/REPORT.md.

- Finding 3 (05 L3.online, 09 L3.softmax): the passes read x through a pointer to int64 (one lane holds two fp32
  or four fp16 values), and the tracer counted lanes, not what they read: a row read twice counted once. The
  tracer now counts the bytes a load (a store, an atomic) reads in elements of the tensor its lanes are booked to
  (:func:`gpuperf.grading.algorithm._worth`), so every pass count (L3's, L5's ``_one_pass_check``, L6's
  ``_backward_passes_check``, L2's fused chain) sees the elements read, and the message says it counted bytes.
- Finding 4 (06 L3.softmax, 08 L4.matmul): masks computed from a 32-bit product of the program id and a size
  given at run time (``row * n_cols + cols < (row + 1) * n_cols``; ``rows * N + cols < M * N``) wrap past 2^31
  elements. L3 to L6 now read the TTIR for such a product reaching a mask
  (:func:`gpuperf.grading.frontend.wrapping_masks`); a size divided first (a slice of K) or a program id divided
  first (a group of tiles) is an index bounded by one dimension and is not counted, nor is a plain mask
  (``cols < n_cols``, ``rows < M``, ``offs_k < K - k * BLOCK_K``, a causal ``q_idx >= k_idx``).

Each wrong file is graded on one case that refuses it (``only=``)."""

from __future__ import annotations

import re

import pytest
import triton
import triton.language as tl

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 20261205


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


def _int64_lanes_here() -> bool:
    """05 and 09 read rows at 4-byte offsets through int64 lanes: compiled on a GPU that faults (misaligned
    address, seen on an H100) and leaves the process's CUDA context unusable for every later test. They are
    graded on the CPU only (a GPU's compiled case refuses them anyway: the function raised)."""
    import torch

    return not torch.cuda.is_available()


def _first(pattern: str, wanted):
    """An ``only=`` predicate: the first case whose label matches ``pattern`` with ``wanted(*groups)`` true."""
    picked: list = []

    def only(label):
        if not picked:
            m = re.match(pattern, label)
            if m and wanted(*(int(g) for g in m.groups())):
                picked.append(label)
        return bool(picked) and label == picked[0]

    return only


def _l3_case(dtype="fp32", cols=256):
    """The first L3 case of ``dtype`` with several rows and more than ``cols`` columns."""
    return _first(rf"x (\d+)x(\d+) {dtype}", lambda rows, n: rows > 1 and n > cols)


#: L4.matmul's first fp32 case with M, N and K above 1 (a size of 1 is a constant in the compiled kernel).
L4_CASE = _first(r"A (\d+)x(\d+) @ B (\d+)x(\d+) fp32", lambda m, k, k2, n: min(m, k, n) > 1)


def _grade(key, fn, only):
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=SEED, only=only)
    assert report.results, f"{key}: no case graded"
    return report


def _refused(tag, only, *words, edits=()):
    path = find_attack(13, tag)
    key, fn = load_attack_variant(path, *edits) if edits else load_attack(path)
    report = _grade(key, fn, only)
    assert not report.passed, f"{tag} accepted by {key} (seed {SEED}):\n{report.text()}"
    message = report.failures[0].message
    for word in words:
        assert word in message, f"{tag} ({key}): {message}"
    return message


def _accepted(tag, only, edits=()):
    path = find_attack(13, tag)
    key, fn = load_attack_variant(path, *edits) if edits else load_attack(path)
    report = _grade(key, fn, only)
    assert report.passed, f"{tag} variant refused by {key} (seed {SEED}):\n{report.text()}"


# ---- finding 3: loads counted in bytes --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_r13_05_three_passes_through_int64_lanes_are_refused(dtype):
    """05: the max and the sum passes read x through int64 lanes, the write pass through fp32 (fp16) lanes: three
    reads of every element, now counted as three."""
    if not _int64_lanes_here():
        pytest.skip("compiled, 05's int64 loads fault on a GPU (misaligned address)")
    message = _refused("05", _l3_case(dtype), "counted in bytes", "pointer to int64")
    assert "at once" in message or "3 times" in message, message


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_r13_09_two_passes_through_int64_lanes_are_refused(dtype):
    """09: a pass for the running max and sum and a pass to write, both through int64 lanes: the row is read
    twice, which the fused softmax must not do."""
    if not _int64_lanes_here():
        pytest.skip("compiled, 09's int64 loads fault on a GPU (misaligned address)")
    message = _refused("09", _l3_case(dtype), "2 times each", "counted in bytes", "pointer to int64")
    assert "twice" in message, message


def test_r13_05_is_counted_as_three_reads_of_every_element():
    """The count itself: 05's two passes through int64 lanes and its write pass through fp32 lanes load every
    element of x three times (the statistics exemption of L3.online leaves nothing out)."""
    if not _int64_lanes_here():
        pytest.skip("compiled, 05's int64 loads fault on a GPU (misaligned address)")
    import torch

    from gpuperf.grading.algorithm import traced
    from gpuperf.grading.exercises import _online_row_loads

    _, fn = load_attack(find_attack(13, "05"))
    x = torch.randn(3, 700)
    with traced() as trace:
        y = fn(x, block=128)
    assert torch.allclose(y, torch.softmax(x, dim=-1), atol=1e-6)
    assert _online_row_loads(trace, x, y, 3) == (3 * x.numel(), 0)


@triton.jit
def _read_as_kernel(x_ptr, out_ptr, n_lanes, LANES: tl.constexpr, KIND: tl.constexpr):
    lanes = tl.arange(0, LANES)
    ok = lanes < n_lanes
    if KIND == 0:
        w = tl.load(x_ptr.to(tl.pointer_type(tl.int64)) + lanes, mask=ok, other=0)
    elif KIND == 1:
        w = tl.load(x_ptr.to(tl.pointer_type(tl.int8)) + lanes, mask=ok, other=0).to(tl.int64)
    else:
        w = tl.load(x_ptr.to(tl.pointer_type(tl.int16)) + lanes, mask=ok, other=0).to(tl.int64)
    tl.store(out_ptr + lanes, w, mask=ok)


@pytest.mark.parametrize("dtype,kind,lanes,counted", [
    ("float32", 0, 50, 100),   # int64 over fp32: two elements a lane
    ("float16", 0, 25, 100),   # int64 over fp16: four
    ("float32", 1, 400, 100),  # int8 over fp32: a quarter of one
    ("float32", 2, 200, 100),  # int16 over fp32: half of one
    ("float16", 2, 100, 100),  # int16 over fp16: its own size, lanes
])
def test_loads_through_another_pointer_type_count_the_elements_they_read(dtype, kind, lanes, counted):
    """A load counts the bytes it reads in elements of the tensor its lanes fall in: 100 elements read whatever
    the pointer's element type; ``recast`` names the type where it differs from the tensor's."""
    import contextlib

    import torch

    from gpuperf.grading.algorithm import traced
    from gpuperf.grading.exercises import interpreted_launches

    x = torch.randn(100, dtype=getattr(torch, dtype))
    out = torch.empty(512, dtype=torch.int64)
    with traced() as trace, (interpreted_launches() if torch.cuda.is_available() else contextlib.nullcontext()):
        _read_as_kernel[(1,)](x, out, lanes, LANES=512, KIND=kind)
    (launch,) = trace.launches
    assert launch.loaded["x_ptr"] == counted
    assert launch.per_program["x_ptr"] == {0: counted}
    assert launch.stored["out_ptr"] == lanes  # int64 lanes into an int64 tensor: lanes
    assert ("x_ptr" in launch.recast) == (x.element_size() != {0: 8, 1: 1, 2: 2}[kind])


# ---- finding 4: 32-bit products in masks ------------------------------------------------------------------


def test_r13_06_softmax_mask_from_a_32_bit_row_times_n_cols_is_refused():
    message = _refused("06", _l3_case("fp32", 1), "mask", "32-bit product", "64-bit")
    assert "addresses" not in message.split(".")[0], message  # told it is the mask, not the addresses


def test_r13_08_matmul_store_mask_from_32_bit_rows_times_n_is_refused():
    _refused("08", L4_CASE, "mask", "32-bit product", "rows * N + cols < M * N")


def test_r13_06_with_a_64_bit_row_is_accepted():
    """The control: the same mask computed from the program id made 64-bit first."""
    _accepted("06", _l3_case("fp32", 1), edits=(("    row = tl.program_id(0)\n",
                                                  "    row = tl.program_id(0).to(tl.int64)\n"),))


def test_r13_06_with_n_cols_as_a_constexpr_is_refused():
    """n_cols given as a tl.constexpr (not a block's shape) is a size as well: the kernel is read once more with
    it as a run-time integer."""
    _refused("06", _l3_case("fp32", 1), "mask", "32-bit product", edits=(
        ("def softmax_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):",
         "def softmax_kernel(x_ptr, y_ptr, x_row_stride, y_row_stride, n_cols: tl.constexpr, BLOCK: tl.constexpr):"),
        ("softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK",
         "softmax_kernel[(n_rows,)](x, y, x.stride(0), y.stride(0), n_cols=n_cols, BLOCK")))


@pytest.mark.parametrize("mask", [
    "(rows32[:, None] < M) & (cols32[None, :] < N)",  # the plain 2-D mask, 32-bit rows: no product
    "(rows32.to(tl.int64)[:, None] * N + cols32[None, :] < M.to(tl.int64) * N) & (cols32[None, :] < N)",
])
def test_r13_08_with_a_plain_or_64_bit_mask_is_accepted(mask):
    _accepted("08", L4_CASE, edits=(
        ("(rows32[:, None] * N + cols32[None, :] < M * N) & (cols32[None, :] < N)", mask),))


@triton.jit
def _split_k_kernel(a_ptr, c_ptr, M, K, SPLIT, GROUP_M, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # honest products of a program id and a run-time size, bounded by one dimension: a slice of K per program
    # (the size divided first) and a group of tiles (the program id divided first)
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    group = pid // (GROUP_M * 2)
    pid_m = group * GROUP_M + pid % GROUP_M
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    per = tl.cdiv(tl.cdiv(K, BLOCK_K), SPLIT) * BLOCK_K
    ks = pid_k * per + tl.arange(0, BLOCK_K)
    q_idx = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    ok = (rows[:, None] < M) & (ks[None, :] < K) & (q_idx[:, None] >= ks[None, :])
    v = tl.load(a_ptr + rows.to(tl.int64)[:, None] * K + ks[None, :], mask=ok, other=0.0)
    tl.store(c_ptr + rows.to(tl.int64), tl.sum(v, axis=1), mask=rows < M)


@triton.jit
def _flat_mask_kernel(x_ptr, n_cols, BLOCK: tl.constexpr, FLAT: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    if FLAT:  # the element's place in the whole tensor, in 32 bits
        mask = row * n_cols + cols < (row + 1) * n_cols
    else:
        mask = cols < n_cols
    x = tl.load(x_ptr + row.to(tl.int64) * n_cols + cols, mask=mask, other=0.0)
    tl.store(x_ptr + row.to(tl.int64) * n_cols + cols, x + 1, mask=mask)


def test_the_mask_rule_reads_products_that_grow_with_the_tensor_only():
    import torch

    from gpuperf.grading import frontend

    if frontend.unavailable():
        pytest.skip(frontend.unavailable())
    a, c = torch.randn(64, 256), torch.empty(64)
    problem, ttir = frontend.lower(_split_k_kernel.fn, (a, c, 64, 256, 4, 2), dict(BLOCK_M=16, BLOCK_K=32))
    assert ttir and not problem, problem
    assert not frontend.wrapping_masks(ttir)
    x = torch.randn(8, 100)
    for flat in (True, False):
        problem, ttir = frontend.lower(_flat_mask_kernel.fn, (x, 100), dict(BLOCK=128, FLAT=flat))
        assert ttir and not problem, problem
        assert frontend.wrapping_masks(ttir) == flat
