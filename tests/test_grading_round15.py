"""Round 15 of issue 30 (2026-12-05, seventh session): a fresh attacker against the graders with round 14 closed.
Its files are in tests/grading_attacks_round15 (README.md: each finding). Closed so far: 21 (lanes at a head's
first and last rows beside a real block read as a wrapped tile) and the honest files of rows wrapped modulo N;
r15masks closed 03 and 04 (a quotient multiplied back is a size for the mask rule) and 05 and 06 (the learner's own
memory counts in x's elements)."""

from __future__ import annotations

import pytest
import triton
import triton.language as tl

from attack_files import find_attack, load_attack

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)


def _on_the_cpu() -> bool:
    import torch

    return not torch.cuda.is_available() or gpuperf.kernels.interpreter_enabled()


def _visits(key, fn, seed):
    from gpuperf import grading

    return grading.grade_report(key, fn, seed=seed, only=lambda label: "visits" in label)


@pytest.mark.parametrize("seed", [11, 12])
def test_lanes_at_both_ends_of_a_head_are_no_wrap(seed):
    if not _on_the_cpu():
        pytest.skip("the skip cases run under the interpreter")
    key, fn = load_attack(find_attack(15, "21"))
    report = _visits(key, fn, seed)
    assert report.results and not report.passed, f"21 accepted by {key} (seed {seed})"
    message = report.failures[0].message
    # the blocks past the diagonal, or (a load of q whose lanes at the head's first and last rows make three blocks,
    # no wrap) the block of queries it holds
    assert "no query of the program's block can see" in message or "a block of 256 queries" in message, message


@pytest.mark.parametrize("tag", ["h01", "h04", "h05"])
def test_honest_rows_wrapped_or_clamped_are_accepted(tag):
    if not _on_the_cpu():
        pytest.skip("the skip cases run under the interpreter")
    key, fn = load_attack(find_attack(15, tag))
    report = _visits(key, fn, 11)
    assert report.results and report.passed, f"{tag} refused by {key}:\n{report.text()}"


# ---- r15masks: findings 2 (03, 04: a 32-bit mask of a row times a size rounded up) and 3 (05, 06: passes counted
# in elements of the learner's own float64 buffer) ------------------------------------------------------------------


def _first_case(pattern: str):
    """An ``only=`` predicate: the first case whose label matches ``pattern`` with every number in it above 1 (a
    size of 1 is a constant in the compiled kernel)."""
    import re

    picked: list = []

    def only(label):
        if not picked:
            m = re.match(pattern, label)
            if m and min(int(g) for g in m.groups()) > 1:
                picked.append(label)
        return bool(picked) and label == picked[0]

    return only


@pytest.mark.parametrize("tag,only,words", [
    ("03", None, ("mask", "32-bit product")),
    ("04", r"A (\d+)x(\d+) @ B (\d+)x(\d+) fp32", ("mask", "32-bit product")),
    ("05", None, ("not fused", "2 and 2 times")),
    ("06", None, ("other memory",)),
])
def test_round_15_wrong_file_is_refused(tag, only, words):
    """03 (L3.softmax) and 04 (L4.matmul): the mask ``row * width + cols < ...`` in 32 bits with ``width =
    cdiv(n_cols, 16) * 16`` or ``tiles_n * BLOCK_N``: a quotient multiplied back is a size again. 05 (L2.chain) and
    06 (L3.online): the intermediates kept in a float64 buffer through a pointer cast to x's type count as the
    elements of x they are (bytes over x's element size), not half as many."""
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("round 15 was run under the interpreter")
    key, fn = load_attack(find_attack(15, tag))
    report = grading.grade_report(key, fn, seed=11, only=_first_case(only) if only else None)
    assert report.results and not report.passed, f"{tag} accepted by {key} (seed 11)"
    message = report.failures[0].message
    for word in words:
        assert word in message, f"{tag} ({key}): {message}"


@triton.jit
def _width_kernel(x_ptr, M, N, K, SPLIT, BLOCK: tl.constexpr, CSPLIT: tl.constexpr, HOW: tl.constexpr):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    lanes = tl.arange(0, BLOCK)
    if HOW == 0:  # 03's width: the row length padded to whole blocks of 16
        flat = pid * (tl.cdiv(N, 16) * 16) + lanes
    elif HOW == 1:  # the same, multiplied back after the product with the row
        flat = (pid * tl.cdiv(N, 16)) * 16 + lanes
    elif HOW == 2:
        flat = pid * ((N + 15) // 16 * 16) + lanes
    elif HOW == 3:
        flat = pid * (N & -16) + lanes
    elif HOW == 4:
        flat = pid * (N - N % 16) + lanes
    elif HOW == 5:
        flat = pid * ((N + 15) >> 4 << 4) + lanes
    elif HOW == 6:  # divided and multiplied back by a size given at run time (1 too: a constant then)
        flat = pid * (tl.cdiv(N, SPLIT) * SPLIT) + lanes
    elif HOW == 7:  # the block's first row times the tile count: 04's rows * (tiles_n * BLOCK_N)
        flat = (pid * BLOCK) * tl.cdiv(N, BLOCK) + lanes
    elif HOW == 8:  # split-K slices, the README's bounded index, SPLIT at run time or a constexpr (1 too)
        flat = pid_k * tl.cdiv(K, SPLIT) + lanes
    elif HOW == 9:
        flat = pid_k * tl.cdiv(tl.cdiv(K, BLOCK), SPLIT) * BLOCK + lanes
    elif HOW == 10:
        flat = pid_k * (tl.cdiv(K, SPLIT * BLOCK) * BLOCK) + lanes
    elif HOW == 11:
        flat = pid_k * (tl.cdiv(K, CSPLIT * BLOCK) * BLOCK) + lanes
    elif HOW == 12:
        flat = pid_k * tl.cdiv(tl.cdiv(K, CSPLIT), BLOCK) * BLOCK + lanes
    elif HOW == 13:  # Triton's tutorial grouped order: program ids divided, no product with a size
        num_pid_m = tl.cdiv(M, BLOCK)
        num_pid_n = tl.cdiv(N, BLOCK)
        num_pid_in_group = 8 * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * 8
        group_size_m = tl.minimum(num_pid_m - first_pid_m, 8)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        flat = (pid_m * BLOCK + lanes) + (pid_n * BLOCK + lanes)
    elif HOW == 14:  # the tile's column from the tile row: pid - (pid // tiles_n) * tiles_n
        tiles_n = tl.cdiv(N, BLOCK)
        pid_m = pid // tiles_n
        pid_n = pid - pid_m * tiles_n
        flat = pid_n * BLOCK + lanes
    else:  # 04: the tile row's rows times the padded row length
        tiles_n = tl.cdiv(N, BLOCK)
        flat = (pid // tiles_n * BLOCK + lanes) * (tiles_n * BLOCK) + lanes
    mask = flat < M * N
    x = tl.load(x_ptr + lanes, mask=mask, other=0.0)
    tl.store(x_ptr + lanes, x + 1, mask=mask)


@pytest.mark.parametrize("split", [4, 1])
@pytest.mark.parametrize("how,wraps", [(0, True), (1, True), (2, True), (3, True), (4, True), (5, True), (6, True),
                                       (7, True), (8, False), (9, False), (10, False), (11, False), (12, False),
                                       (13, False), (14, False), (15, True)])
def test_a_quotient_multiplied_back_is_a_size_and_a_split_k_slice_is_not(how, wraps, split):
    import torch

    from gpuperf.grading import frontend

    if frontend.unavailable():
        pytest.skip(frontend.unavailable())
    x = torch.randn(64)
    problem, ttir = frontend.lower(_width_kernel.fn, (x, 64, 48, 100, split), dict(BLOCK=16, CSPLIT=split, HOW=how))
    assert ttir and not problem, problem
    assert frontend.wrapping_masks(ttir) == wraps


@triton.jit
def _through_wide_kernel(x_ptr, tmp_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tmp = tmp_ptr.to(tl.pointer_type(x_ptr.dtype.element_ty))
    x = tl.load(x_ptr + offsets, mask=offsets < n)
    tl.store(tmp + offsets, x, mask=offsets < n)
    y = tl.load(tmp + offsets, mask=offsets < n)
    tl.store(x_ptr + offsets, y, mask=offsets < n)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_a_wide_buffer_of_the_readers_counts_in_elements_of_x(dtype):
    """100 values of x kept in a float64 buffer through a pointer to x's type: 100 elements stored and loaded
    there (bytes over x's element size), not 50 or 25 (the float64 buffer's own elements)."""
    import contextlib

    import torch

    from gpuperf.grading.algorithm import traced
    from gpuperf.grading.exercises import interpreted_launches

    x = torch.randn(100, dtype=getattr(torch, dtype))
    tmp = torch.empty(50, dtype=torch.float64)
    with traced() as trace, (interpreted_launches() if torch.cuda.is_available() else contextlib.nullcontext()):
        trace.owners = [x]
        _through_wide_kernel[(1,)](x, tmp, 100, BLOCK=128)
    (launch,) = trace.launches
    assert launch.loaded == {"x_ptr": 100, "tmp_ptr": 100}
    assert launch.stored == {"x_ptr": 100, "tmp_ptr": 100}


@pytest.mark.parametrize("tag", ["h03", "h07", "h08"])
def test_honest_tutorial_style_file_of_round_15_is_accepted(tag):
    """h03 (L4.matmul, the grouped tutorial order with rows wrapped ``% M``), h07 (L3.softmax with exp2 and a
    reciprocal) and h08 (L4.matmul, split-K by atomic adds onto zeros): every case, seed 11."""
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("round 15 was run under the interpreter")
    key, fn = load_attack(find_attack(15, tag))
    report = grading.grade_report(key, fn, seed=11)
    assert report.results and report.passed, f"{tag} refused by {key}:\n{report.text()}"


def test_every_file_of_round_15_is_tested():
    """Every file of tests/grading_attacks_round15 is graded by a test of round 15 (this file, or the _bridge,
    _copies and _jit files that closed its findings)."""
    import re
    from pathlib import Path

    from attack_files import attack_folder

    tags = {path.name.split("_")[0] for path in attack_folder(15).glob("*.py")}
    text = "\n".join(p.read_text() for p in sorted(Path(__file__).parent.glob("test_grading_round15*.py")))
    named = set(re.findall(r'"((?:h)?\d\d)"', text))
    assert len(tags) == 24 and tags <= named, sorted(tags - named)
