"""Round 14 (2026-12-05), r14mask's part: finding 6 of tests/grading_attacks_round14/REPORT.md.

- 07 (L3.softmax) and 08 (L4.matmul): round 13's 32-bit masks again (``row * n_cols + cols < ...``, a flat
  ``(pid_m * N) * BLOCK_M + ... < M * N``) with the row made as ``pid % n_rows`` and the tile row as
  ``pid // tiles_n``. :func:`gpuperf.grading.frontend.wrapping_masks` took any quotient or remainder of the
  program id for "a group of tiles" and exempted its products with a size. Now a remainder gets no exemption,
  and a quotient ``pid // d`` only in a product with a factor of ``d`` (Triton's grouped order,
  ``(pid // (GROUP_M * tiles_n)) * GROUP_M``, is at most ``pid``); products with constants were never counted.
- The review's leftover: L2's mask rule (``wrapping_offsets(masks=True)``) and L3-L6's are one function now,
  ``wrapping_masks(ttir, any_factor=...)``: they differ only in whether a product with a constant counts (a
  position in a vector, or a row index), and both follow a program id's value through loads and branches, as
  L2's did (a row rebuilt bit by bit in ``if pid & (1 << b):`` branches was not followed by L3-L6's).
- Controls: Triton's tutorial grouped matmul with GROUP_M and the group's size given at run time, and a split-K
  matmul whose slice of K comes from a program id divided (a one-dimensional grid), are accepted.

Each file is graded on one case (``only=``)."""

from __future__ import annotations

import re

import pytest
import torch
import triton
import triton.language as tl

from attack_files import find_attack, load_attack

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 20261205


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


def _l3_case():
    return _first(r"x (\d+)x(\d+) fp32", lambda rows, n: rows > 1 and n > 1)


def _l4_case():
    """L4.matmul's first fp32 case with M, N and K above 1 (a size of 1 is a constant in the compiled kernel)."""
    return _first(r"A (\d+)x(\d+) @ B (\d+)x(\d+) fp32", lambda m, k, k2, n: min(m, k, n) > 1)


def _grade(key, fn, only):
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=SEED, only=only)
    assert report.results, f"{key}: no case graded"
    return report


# ---- 07 and 08: refused -------------------------------------------------------------------------------------


@pytest.mark.parametrize("tag,only", [("07", _l3_case), ("08", _l4_case)])
def test_r14_mask_from_a_divided_program_id_times_a_size_is_refused(tag, only):
    key, fn = load_attack(find_attack(14, tag))
    report = _grade(key, fn, only())
    assert not report.passed, f"{tag} accepted by {key} (seed {SEED}):\n{report.text()}"
    message = report.failures[0].message
    for word in ("mask", "32-bit product", "64-bit"):
        assert word in message, f"{tag} ({key}): {message}"
    assert "pid % n_rows" in message and "pid // tiles_n" in message, message  # the learner's own index named


# ---- honest controls ------------------------------------------------------------------------------------------


@triton.jit
def _grouped_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, GROUP_M,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Triton's tutorial 03's grouped order, GROUP_M given at run time (not a tl.constexpr)
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)  # 32-bit row indices, compared to M
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_ok = ks < K - k * BLOCK_K
        a = tl.load(a_ptr + rows.to(tl.int64)[:, None] * sam + (k * BLOCK_K + ks)[None, :] * sak,
                    mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + (k * BLOCK_K + ks)[:, None] * sbk + cols.to(tl.int64)[None, :] * sbn,
                    mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    c = c_ptr + rows.to(tl.int64)[:, None] * scm + cols.to(tl.int64)[None, :] * scn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < M) & (cols[None, :] < N))


def _grouped_matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, 32) * triton.cdiv(N, 32),)
    _grouped_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                          c.stride(1), 3, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    return c


@triton.jit
def _split_k_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, SPLIT,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # one-dimensional grid: the slice of K is the program id divided by the number of tiles
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles = tl.cdiv(M, BLOCK_M) * tiles_n
    tile = pid % tiles
    pid_k = pid // tiles
    pid_m = tile // tiles_n
    pid_n = tile % tiles_n
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K).to(tl.int64)  # k0 + ks times a stride: a 64-bit address
    per = tl.cdiv(tl.cdiv(K, BLOCK_K), SPLIT) * BLOCK_K  # K divided: a slice, bounded by K
    k_end = tl.minimum(K, (pid_k + 1) * per)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(pid_k * per, k_end, BLOCK_K):
        k_ok = k0 + ks < k_end
        a = tl.load(a_ptr + rows.to(tl.int64)[:, None] * sam + (k0 + ks)[None, :] * sak,
                    mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * sbk + cols.to(tl.int64)[None, :] * sbn,
                    mask=k_ok[:, None] & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    c = c_ptr + rows.to(tl.int64)[:, None] * scm + cols.to(tl.int64)[None, :] * scn
    tl.atomic_add(c, acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


def _split_k_matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.zeros((M, N), dtype=torch.float32, device=a.device)
    split = 3
    grid = (triton.cdiv(M, 32) * triton.cdiv(N, 32) * split,)
    _split_k_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                          c.stride(1), split, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    return c.to(a.dtype)


@pytest.mark.parametrize("fn", [_grouped_matmul, _split_k_matmul], ids=["grouped", "split_k"])
def test_grouped_order_and_split_k_with_run_time_sizes_are_accepted(fn):
    report = _grade("L4.matmul", fn, _l4_case())
    assert report.passed, report.text()


# ---- the rule itself, on the TTIR -------------------------------------------------------------------------------


@triton.jit
def _index_kernel(x_ptr, M, N, GROUP_M, BLOCK: tl.constexpr, HOW: tl.constexpr):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK)
    lanes = tl.arange(0, BLOCK)
    if HOW == 0:  # the row as a remainder (07)
        flat = (pid % M) * N + lanes
    elif HOW == 1:  # the tile row as a quotient, times N (08)
        flat = (pid // tiles_n) * N * BLOCK + lanes
    elif HOW == 2:  # a group's first tile row, GROUP_M a factor of the divisor: at most pid
        flat = (pid // (GROUP_M * tiles_n)) * GROUP_M * BLOCK + lanes
    elif HOW == 3:  # the same, then times N: the rows of the group times N
        flat = (pid // (GROUP_M * tiles_n)) * GROUP_M * N + lanes
    elif HOW == 4:  # divided by a product that holds N: at most pid
        flat = (pid // (tiles_n * N)) * N + lanes
    elif HOW == 5:  # a remainder times a factor of its divisor: no exemption
        flat = (pid % (GROUP_M * tiles_n)) * GROUP_M * BLOCK + lanes
    elif HOW == 6:  # a persistent kernel's tile index (a loop from the program id), grouped: at most the tile index
        flat = lanes
        for tile in range(pid, M * tiles_n, 7):
            flat = (tile // (GROUP_M * tiles_n)) * GROUP_M * BLOCK + lanes
    else:  # the row rebuilt bit by bit in branches on the program id: the program id still
        row = tl.full([], 0, tl.int32)
        for b in tl.static_range(8):
            if (pid >> b) & 1:
                row += 1 << b
        flat = row * N + lanes
    mask = flat < M * N
    x = tl.load(x_ptr + lanes, mask=mask, other=0.0)
    tl.store(x_ptr + lanes, x + 1, mask=mask)


@pytest.mark.parametrize("how,wraps", [(0, True), (1, True), (2, False), (3, True), (4, False), (5, True),
                                       (6, False), (7, True)])
def test_a_divided_program_id_is_exempt_only_times_a_factor_of_its_divisor(how, wraps):
    from gpuperf.grading import frontend

    if frontend.unavailable():
        pytest.skip(frontend.unavailable())
    x = torch.randn(64)
    problem, ttir = frontend.lower(_index_kernel.fn, (x, 64, 48, 4), dict(BLOCK=16, HOW=how))
    assert ttir and not problem, problem
    assert frontend.wrapping_masks(ttir) == wraps
