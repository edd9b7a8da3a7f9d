"""Round 19's races (2026-12-06, eleventh session; tests/grading_attacks_round19/REPORT.md, F1): the programs of
one launch add partial sums into a workspace with ``tl.atomic_add``, and the program the author believes runs
last uses the value its own atomic RETURNS (35 L4.matmul, 36 L6.backward, 51 L5.forward, 54 L6.autograd), or
the first split writes the workspace with ``tl.atomic_xchg`` and the others add onto it (40 L4.matmul). Under
the interpreter the programs run one after another in grid order, so the values are right; on a GPU they are
not. ``algorithm._find_race`` now counts an atomic's returned value that reaches what the program writes (a
store's value, or a later atomic's) as a load of that address, and an exchange meeting another program's atomic
add as a race. A returned value that only steers control flow (a counter in an ``if``) or an address is not
counted. Review 20: a counter's draw (a ticket) is told apart; a write that depends on a ticket and on the
program id is a race (``_counter_kernel`` mode 1, accepted before: x of the program's rows stored at the
ticket's rows), see test_grading_review20_sched.py. Seed 11; each file graded up to the case that refuses it."""

from __future__ import annotations

import contextlib

# the interpreter switch first, before triton is imported (see test_grading_round19_holes.py)
import gpuperf.kernels  # noqa: F401, I001
import pytest
import triton
import triton.language as tl

from attack_files import find_attack, load_attack, load_attack_variant

SEED = 11
RACE = ("a race in your kernel", "any order on a GPU", "later launch")


def _interpreted_here() -> bool:
    import torch

    # the CPU's case labels and messages: on a GPU (with GPUPERF_GRADING_INTERPRET_ON_GPU=1) the labels differ
    # and a race shows in the compiled case's values first (an H100, 2026-12-06)
    return not torch.cuda.is_available()


def _on_gpu() -> bool:
    import torch

    return torch.cuda.is_available()


def _refused(key, fn, *words):
    from gpuperf import grading

    if not _interpreted_here():
        pytest.skip("races are found by the interpreter's trace")
    report = grading.grade_report(key, fn, seed=SEED, stop_at_first_failure=True)
    assert not report.passed, report.text()
    message = report.failures[0].message
    assert all(w in message for w in words), message
    return message


def _passed(key, fn, only=None):
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=SEED, only=only)
    assert report.results and report.passed, report.text()


# ---- the five files ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("tag,kernel,argument", [("35", "mm", "ws_ptr"), ("36", "bwd_kernel", "ws_ptr"),
                                                 ("51", "partial_kernel", "m_ptr"),
                                                 ("54", "bwd_kernel", "ws_ptr")])
def test_a_program_that_uses_what_its_atomic_returned_is_a_race(tag, kernel, argument):
    key, fn = load_attack(find_attack(19, tag))
    _refused(key, fn, *RACE, f"your kernel {kernel}:", "used the value its atomic returned",
             f"of {argument}", "adds to that element with an atomic")


def test_40_an_exchange_where_another_program_adds_is_a_race():
    key, fn = load_attack(find_attack(19, "40"))
    _refused(key, fn, *RACE, "your kernel mm:", "with an atomic exchange", "program (0, 0, 0)",
             "program (0, 0, 1) of the same launch adds to it", "torch.zeros")


# ---- honest variants ---------------------------------------------------------------------------------------


def test_35_finished_by_a_second_launch_is_accepted():
    """35 with the last split's store removed (the returned value kept in a variable, unused) and C the
    workspace cast after the launch (``ws.to(a.dtype)``): every case of seed 11."""
    key, fn = load_attack_variant(
        find_attack(19, "35"),
        ("    if pk == SPLIT - 1:  # \"the last split\": assumed to run after the others\n"
         "        tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, (before + acc).to(c_ptr.dtype."
         "element_ty), mask=msk)\n", ""),
        ("    return c\n", "    return ws.to(a.dtype)\n"))
    _passed(key, fn)


def test_40_with_every_split_adding_onto_zeros_is_accepted():
    key, fn = load_attack_variant(
        find_attack(19, "40"),
        ("    if pk == 0:  # \"the first split initialises the workspace\": assumed to run first\n"
         "        tl.atomic_xchg(wsi_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.int32, bitcast=True), "
         "mask=msk)\n    else:\n        tl.atomic_add(ptrs, acc, mask=msk)\n",
         "    tl.atomic_add(ptrs, acc, mask=msk)\n"),
        ("torch.empty((M, N), dtype=torch.float32", "torch.zeros((M, N), dtype=torch.float32"))
    _passed(key, fn, only=lambda label: "fp32" in label)


def test_36_with_dq_cast_after_the_launch_is_accepted():
    """36 with the last key block's store of dQ removed (its atomic's returned value unused) and dQ the fp32 sum
    cast after the launch: the FA2 backward with dQ by atomics, a few cases."""
    key, fn = load_attack_variant(
        find_attack(19, "36"),
        ("        if pid_n == last:  # \"the last key block for these queries\": assumed to run after the others\n"
         "            tl.store(dq_ptr + bh * N_Q * D + rows[:, None] * D + dims[None, :],\n"
         "                     (before + dq_part).to(dq_ptr.dtype.element_ty), mask=rmask)\n", ""),
        ("    return dq, dk, dv\n", "    return ws.to(q.dtype), dk, dv\n"))
    # the second shape of the grade, two causal heads of 71 queries at d = 32 on the CPU; on a GPU its compiled
    # counterpart (97 queries), where the CPU's label names no case (an H200, 2026-12-06)
    shape = "N_q=71" if not _on_gpu() else "B=1 H=2 N_q=97 N_k=97 d=32 fp32"
    _passed(key, fn, only=lambda label: shape in label)


# ---- the rules, on small kernels ---------------------------------------------------------------------------


@contextlib.contextmanager
def _traced():
    import torch

    from gpuperf.grading.algorithm import traced
    from gpuperf.grading.exercises import interpreted_launches

    with traced() as trace:
        with interpreted_launches() if torch.cuda.is_available() else contextlib.nullcontext():
            yield trace


@triton.jit
def _counter_kernel(x_ptr, cnt_ptr, out_ptr, flag_ptr, MODE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    lanes = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + pid * BLOCK + lanes)
    ticket = tl.atomic_add(cnt_ptr, 1)
    if MODE == 0:  # the counter steers control flow only: the program writes its own rows either way
        if ticket == 0:
            tl.store(out_ptr + pid * BLOCK + lanes, x * 2)
        else:
            tl.store(out_ptr + pid * BLOCK + lanes, x * 2 + 0.0)
    elif MODE == 1:  # the counter picks the rows a program writes, but x came from the program id's rows: on
        # a GPU program 1 may draw 0 and store its x at rows 0 (review 20: a race, accepted before)
        tl.store(out_ptr + ticket * BLOCK + lanes, x * 2, mask=ticket * BLOCK + lanes < 4 * BLOCK)
    elif MODE == 4:  # the counter picks the rows a program reads and writes (a dynamic tile order): a ticket
        y = tl.load(x_ptr + ticket * BLOCK + lanes, mask=ticket * BLOCK + lanes < 4 * BLOCK)
        tl.store(out_ptr + ticket * BLOCK + lanes, y * 2, mask=ticket * BLOCK + lanes < 4 * BLOCK)
    elif MODE == 2:  # the counter's value is stored: the order the programs ran in
        tl.store(out_ptr + pid * BLOCK + lanes, x * 2)
        tl.store(flag_ptr + pid, ticket)
    else:  # the counter's value is added elsewhere by a later atomic: a use too
        tl.store(out_ptr + pid * BLOCK + lanes, x * 2)
        tl.atomic_add(flag_ptr + pid, ticket)


@pytest.mark.parametrize("mode,race", [(0, False), (1, True), (2, True), (3, True), (4, False)])
def test_a_counters_returned_value_is_a_read_only_where_it_reaches_what_is_written(mode, race):
    import torch

    x = torch.randn(4 * 16)
    cnt, out, flag = torch.zeros(1, dtype=torch.int32), torch.empty(4 * 16), torch.zeros(4, dtype=torch.int32)
    with _traced() as trace:
        _counter_kernel[(4,)](x, cnt, out, flag, MODE=mode, BLOCK=16)
    found = trace.race()
    if race:
        assert "used the value its atomic returned" in found and "element 0 of cnt_ptr" in found, found
    else:
        assert found == "", found
    if mode in (0, 1, 4):
        assert torch.equal(out, x * 2)


@triton.jit
def _exchange_add_kernel(ws_ptr, wsi_ptr, SAME: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    lanes = tl.arange(0, BLOCK)
    where = lanes if SAME == 0 else pid * BLOCK + lanes  # one block for all, or a block per program
    if pid == 0 or SAME == 1:
        tl.atomic_xchg(wsi_ptr + where, tl.full((BLOCK,), 1.0, tl.float32).to(tl.int32, bitcast=True))
    tl.atomic_add(ws_ptr + where, tl.full((BLOCK,), 1.0, tl.float32))


@pytest.mark.parametrize("same,race", [(0, True), (1, False)])
def test_an_exchange_meeting_another_programs_add_is_a_race(same, race):
    """Program 0 exchanges the block all programs add to (a race), or each program exchanges, then adds to, a
    block of its own (ordered within the program: none)."""
    import torch

    ws = torch.zeros(2 * 16)
    with _traced() as trace:
        _exchange_add_kernel[(2,)](ws, ws.view(torch.int32), SAME=same, BLOCK=16)
    found = trace.race()
    if race:
        assert "with an atomic exchange" in found and "program 1 of the same launch adds" in found, found
    else:
        assert found == "", found


@triton.jit
def _own_sum_kernel(ws_ptr, out_ptr, BLOCK: tl.constexpr):
    # each program adds twice to its own block and stores what the second add returned: no other program adds
    pid = tl.program_id(0)
    where = pid * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(ws_ptr + where, tl.full((BLOCK,), 1.0, tl.float32))
    before = tl.atomic_add(ws_ptr + where, tl.full((BLOCK,), 2.0, tl.float32))
    tl.store(out_ptr + where, before + 2.0)


def test_a_returned_value_of_a_programs_own_elements_is_no_race():
    import torch

    ws, out = torch.zeros(3 * 16), torch.empty(3 * 16)
    with _traced() as trace:
        _own_sum_kernel[(3,)](ws, out, BLOCK=16)
    assert trace.race() == ""
    assert torch.equal(out, torch.full((48,), 3.0))
