"""Round 11 of issue 30 (2026-12-05), r11lineage's part: what the tracer books a load to and what a loaded value
carries (tests/grading_attacks_round11, findings 3, 4 and 5).

- 03 (L6.backward): a stats kernel rebuilds each row's lse from K, stores it to scratch, loads it back in the same
  launch and stores that for dq_kernel. A loaded value carried only the buffer it read, so K dropped out of the
  lineage. A load now carries what the same launch stored at those addresses, and the sources of its pointers
  and mask (a gather through an address computed from K).
- 04b (L3.online): lane 0 of each load of the max pass points at a one-value-per-row scratch, the other lanes at
  x; the whole load was booked to the scratch (the first active lane's tensor). Lanes are now booked to the
  tensor each address falls in.
- h05 (L3.online, honest): m and l in one workspace of max(2 rows, 256) floats; two loads per row of such memory
  are a row's statistics, whatever the buffer's size.
"""

from __future__ import annotations

import contextlib
import re

import pytest

from attack_files import find_attack, load_attack

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any kernel below is defined)
import triton
import triton.language as tl

SEED = 20261205

#: L6.backward's case whose kernels the interpreter traces block by block (the pass check runs there).
VISITS = "the blocks of queries and keys the backward visits"


def _online_blocked(label: str) -> bool:
    """L3.online's fp32 cases of blocks of 128 over a row of 129 to 999 values (a few, seconds each)."""
    m = re.match(r"x (\d+)x(\d+) fp32,", label)
    return bool(m) and "block=128" in label and 128 < int(m.group(2)) < 1000


def _grade(round_number, tag, only=None):
    import torch

    if torch.cuda.is_available():
        pytest.skip("the CPU's cases (the interpreter's blocks of 128 and traced backward)")
    key, fn = load_attack(find_attack(round_number, tag))
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=SEED, only=only)
    assert report.results, f"{tag} ({key}): no case selected"
    return key, report


@pytest.mark.parametrize("tag", ["03", "03c"])
def test_lse_rebuilt_from_k_is_refused_through_a_same_launch_round_trip(tag):
    """03 stores the rebuilt lse to scratch and loads it back before handing it on; 03c (the control) hands it on
    straight. Both: the dQ program is charged with the stats kernel's K loads."""
    key, report = _grade(11, tag, lambda label: VISITS in label)
    assert not report.passed, f"{tag} accepted by {key} (seed {SEED}):\n{report.text()}"
    message = report.failures[0].message
    assert "stats_kernel whose results it read, computed from k" in message, f"{tag}: {message}"


@pytest.mark.parametrize("round_number, tag", [(11, "04b"), (10, "12")])
def test_three_pass_online_softmax_is_refused_whatever_lane_0_points_at(round_number, tag):
    """04b points lane 0 of its max pass's loads at a one-value-per-row scratch; round 10's 12 is the plain
    three-pass softmax. Both read x three times."""
    key, report = _grade(round_number, tag, _online_blocked)
    assert not report.passed, f"{tag} accepted by {key} (seed {SEED}):\n{report.text()}"
    message = report.failures[0].message
    assert "3 times each" in message and "separate pass for the max" in message, f"{tag}: {message}"


def test_statistics_in_one_workspace_pass():
    """h05: m and l at [0, rows) and [rows, 2 rows) of a workspace of at least 256 floats (every case)."""
    key, report = _grade(11, "h05")
    assert report.passed, f"h05 refused by {key} (seed {SEED}):\n{report.text()}"


# ---- the tracer itself, on small kernels ----------------------------------------------------------------


@triton.jit
def _round_trip_kernel(a_ptr, tmp_ptr, out_ptr, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + lanes)
    tl.store(tmp_ptr + lanes, a * 2.0)
    back = tl.load(tmp_ptr + lanes)
    tl.store(out_ptr + lanes, back)


@triton.jit
def _gather_kernel(idx_ptr, table_ptr, out_ptr, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    idx = tl.load(idx_ptr + lanes)
    tl.store(out_ptr + lanes, tl.load(table_ptr + idx))


@triton.jit
def _elsewhere_kernel(a_ptr, buf_ptr, out_ptr, BLOCK: tl.constexpr):
    # stores one half of buf, loads the other half (not what this launch stored)
    lanes = tl.arange(0, BLOCK)
    tl.store(buf_ptr + lanes, tl.load(a_ptr + lanes))
    tl.store(out_ptr + lanes, tl.load(buf_ptr + BLOCK + lanes))


@triton.jit
def _straddle_kernel(s_ptr, x_ptr, out_ptr, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    ptrs = tl.where(lanes == 0, s_ptr, x_ptr + lanes - 1)
    v = tl.load(ptrs, mask=lanes < BLOCK - 2, other=0.0)
    tl.store(out_ptr + lanes, v)


@triton.jit
def _straddle_unnamed_kernel(x_ptr, out_ptr, elsewhere, BLOCK: tl.constexpr):
    # lane 0 reads memory that is no argument's (a tensor the function did not pass)
    lanes = tl.arange(0, BLOCK)
    v = tl.load(tl.where(lanes == 0, x_ptr + elsewhere, x_ptr + lanes - 1))
    tl.store(out_ptr + lanes, v)


@contextlib.contextmanager
def _traced():
    """The tracer around launches run by the interpreter, on a GPU machine too (as the grader's interpreted
    cases run them there)."""
    import torch

    from gpuperf.grading.algorithm import traced
    from gpuperf.grading.exercises import interpreted_launches

    with traced() as trace:
        with interpreted_launches() if torch.cuda.is_available() else contextlib.nullcontext():
            yield trace


def _stored_lineage(trace, launch_index, tensor):
    """The lineage (a set of (launch index, first byte)) of what the launch stored in ``tensor``."""
    import numpy as np

    addr, owner, lineage = trace._written
    first = tensor.data_ptr()
    inside = (addr >= first) & (addr < first + tensor.numel() * tensor.element_size()) & \
        ((owner >> 32) == launch_index)
    return frozenset().union(*(trace._lineages[i] for i in np.unique(lineage[inside])))


def test_a_value_loaded_back_in_the_same_launch_keeps_what_it_was_computed_from():
    import torch


    a, tmp, out = torch.randn(16), torch.empty(16), torch.empty(16)
    with _traced() as trace:
        _round_trip_kernel[(1,)](a, tmp, out, BLOCK=16)
    assert (0, a.data_ptr()) in _stored_lineage(trace, 0, out)
    assert torch.equal(out, a * 2)


def test_a_gathered_value_keeps_the_tensor_its_addresses_came_from():
    import torch


    idx, table, out = torch.randperm(16, dtype=torch.int32), torch.randn(16), torch.empty(16)
    with _traced() as trace:
        _gather_kernel[(1,)](idx, table, out, BLOCK=16)
    assert {(0, idx.data_ptr()), (0, table.data_ptr())} <= _stored_lineage(trace, 0, out)


def test_a_load_of_memory_the_launch_did_not_store_inherits_nothing_of_its_stores():
    """Per address: a kernel that writes one part of a buffer and reads another (written before it) hands on
    only what it read."""
    import torch


    a, buf, out = torch.randn(8), torch.randn(16), torch.empty(8)
    with _traced() as trace:
        _elsewhere_kernel[(1,)](a, buf, out, BLOCK=8)
    assert _stored_lineage(trace, 0, out) == {(0, buf.data_ptr())}


def test_a_load_straddling_two_tensors_is_booked_to_each():
    """Lane 0 at s, lanes 1-13 at x (the last two masked off): one element of s, 13 of x."""
    import torch


    s, x, out = torch.zeros(4), torch.randn(64), torch.empty(16)
    with _traced() as trace:
        _straddle_kernel[(1,)](s, x, out, BLOCK=16)
    (launch,) = trace.launches
    assert launch.loaded == {"s_ptr": 1, "x_ptr": 13}
    assert launch.per_program["x_ptr"] == {0: 13}
    assert {name for name, *_ in launch.spans} == {"s_ptr", "x_ptr"}


def test_a_load_whose_first_lane_is_no_arguments_still_books_its_other_lanes():
    import torch


    x, z, out = torch.randn(64), torch.randn(64), torch.empty(16)
    elsewhere = (z.data_ptr() - x.data_ptr()) // 4
    with _traced() as trace:
        _straddle_unnamed_kernel[(1,)](x, out, elsewhere, BLOCK=16)
    (launch,) = trace.launches
    assert launch.loaded == {"?": 1, "x_ptr": 15}


@triton.jit
def _exchange_kernel(a_ptr, tmp_ptr, out_ptr, BLOCK: tl.constexpr):
    # stores a value computed from a, then reads it back as an atomic exchange's old value
    lanes = tl.arange(0, BLOCK)
    tl.store(tmp_ptr + lanes, tl.load(a_ptr + lanes) + 1)
    back = tl.atomic_xchg(tmp_ptr + lanes, tl.zeros((BLOCK,), dtype=tl.int32))
    tl.store(out_ptr + lanes, back)


def test_an_atomics_returned_value_keeps_what_the_launch_stored_there():
    import torch


    a = torch.randint(0, 100, (16,), dtype=torch.int32)
    tmp, out = torch.empty_like(a), torch.empty_like(a)
    with _traced() as trace:
        _exchange_kernel[(1,)](a, tmp, out, BLOCK=16)
    assert (0, a.data_ptr()) in _stored_lineage(trace, 0, out)
    assert torch.equal(out, a + 1)
