"""Review 21 (2026-12-06, thirteenth session): two honest ticket schedulers that review 20's rule refused
(tests/grading_review21/README.md).

1. Tickets from a counter per group of programs: ``split = tl.atomic_add(counter + pid // SPLITS, 1)`` (split-KV or
   split-K with one counter per output tile). The draws of one counter element are a permutation among the programs
   that draw from it, so a write may depend on the draw and on the program id as long as the program id reaches it
   only through values that are the same in every program of that group (``algorithm._ticket_race``: each value
   computed from the program id and constants alone is a node, one function of the program id, whose value the
   trace notes in each program, ``_same_in``). The program id's rows, or another function of it (``pid % SPLITS``
   where the counter took ``pid // SPLITS``), stay a race.
2. A scheduler that fetches the next ticket before it stores the current item (FlashAttention-3's prefetch): each
   stretch of a program's work between two draws goes to the draw its writes depend on, not to the draw it follows
   (``algorithm._split_at_draws``), so each item is counted as a program of its own.

Seed 11; each grade limited to the cases that matter (``only=``) or stopped at its first failure."""

from __future__ import annotations

import contextlib

# the interpreter switch first, before triton is imported
import gpuperf.kernels  # noqa: F401, I001
import pytest
import triton
import triton.language as tl

from attack_files import TESTS, load_attack

SEED = 11
FOLDER = TESTS / "grading_review21"
RACE = ("a race in your kernel", "any order on a GPU")


def _file(tag):
    found = sorted(FOLDER.glob(f"{tag}_*.py"))
    assert len(found) == 1, found
    return found[0]


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


def _passed(key, fn, only=None):
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=SEED, only=only)
    assert report.results and report.passed, report.text()


def _refused(key, fn, *words, only=None):
    from gpuperf import grading

    if not _interpreted_here():
        pytest.skip("races are counted by the interpreter's trace")
    report = grading.grade_report(key, fn, seed=SEED, only=only, stop_at_first_failure=True)
    assert not report.passed, report.text()
    message = next(r.message for r in report.results if not r.passed)
    assert all(w in message for w in words), message
    return message


#: the cases where a ticket scheduler differs: the mask (causal), the long query sequence (one program under the
#: interpreter draws every ticket) and more items than a persistent grid has programs
_SCHEDULER_CASES = ("N_q=71", "the key blocks it visits", "how the queries are split", "more (block of queries")


#: their counterparts among a GPU's compiled cases (the CPU's labels above select interpreted or CPU-only cases
#: there: no case at all with the interpreted cases off, an H200, 2026-12-06): the mask case of two heads of 97
#: queries, and d = 128's 2 x 4 heads of 1024 queries, more (block of queries, head) pairs than the GPU has
#: multiprocessors
_GPU_SCHEDULER_CASES = ("B=1 H=2 N_q=97 N_k=97 d=32", "B=2 H=4 N_q=1024 N_k=1024 d=128")


def _scheduler_cases(label):
    import torch

    words = _SCHEDULER_CASES if not torch.cuda.is_available() else \
        _GPU_SCHEDULER_CASES + tuple(w for w in _SCHEDULER_CASES if not w.startswith("N_q="))
    return any(word in label for word in words)


# ---- 1. a counter per group ------------------------------------------------------------------------------------


def test_h01_split_kv_with_a_counter_per_group_passes_every_case():
    key, fn = load_attack(_file("h01"))
    _passed(key, fn)


def test_w01_key_slice_started_from_the_program_id_is_a_race():
    """The start reaches nothing written (a loop's bound, run in Python): it is the loop's bound, decided by the
    program id after the draw, that is refused."""
    key, fn = load_attack(_file("w01"))
    _refused(key, fn, *RACE, "decided what to do with its program id", "loop's bounds",
             "differs between the programs that draw from that counter element", only=lambda label: "N_q=71" in label)


# ---- 2. the next ticket fetched first --------------------------------------------------------------------------


def test_h02_prefetching_scheduler_passes_l5_forward_where_programs_count():
    _, fn = load_attack(_file("h02"))
    _passed("L5.forward", fn, only=_scheduler_cases)


def test_h02_prefetching_scheduler_passes_l5_causal():
    key, fn = load_attack(_file("h02"))
    _passed(key, fn)


def test_w02_output_at_the_rows_of_the_next_ticket_is_a_race():
    key, fn = load_attack(_file("w02"))
    _refused(key, fn, *RACE, "together with a second value it drew")


def test_w03_two_draws_taken_as_one_is_a_race():
    key, fn = load_attack(_file("w03"))
    _refused(key, fn, *RACE, "drew again without using it")


# ---- the rules, on small kernels -------------------------------------------------------------------------------


@contextlib.contextmanager
def _traced():
    import torch

    from gpuperf.grading.algorithm import traced
    from gpuperf.grading.exercises import interpreted_launches

    with traced() as trace:
        with interpreted_launches() if torch.cuda.is_available() else contextlib.nullcontext():
            yield trace


@triton.jit
def _group_kernel(x_ptr, cnt_ptr, out_ptr, SPLITS, GROUPS, MODE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    lanes = tl.arange(0, BLOCK)
    if MODE == 4:  # a counter of its own per program: a group of one
        split = tl.atomic_add(cnt_ptr + pid, 1)
        slot = pid + split
    else:
        group = pid // SPLITS
        split = tl.atomic_add(cnt_ptr + group, 1)
        slot = group * SPLITS + split
        if MODE == 2:  # the group for the write taken another way: pid % GROUPS (a permutation only where the
            # interpreter draws split == pid % SPLITS and GROUPS, SPLITS are coprime)
            slot = (pid % GROUPS) * SPLITS + split
        if MODE == 3:  # the same group computed another way: pid - pid % SPLITS == group * SPLITS
            slot = (pid - pid % SPLITS) + split
    x = tl.load(x_ptr + slot * BLOCK + lanes)
    if MODE == 1:  # x of the program id's rows, stored at the group's split: a permutation within the group
        x = tl.load(x_ptr + pid * BLOCK + lanes)
    if MODE == 6:  # x of the program id's rows stored at them, read back at the group's split: its own store
        # under the interpreter (which draws split == pid % SPLITS), another program's on a GPU
        tl.store(out_ptr + pid * BLOCK + lanes, tl.load(x_ptr + pid * BLOCK + lanes))
        x = tl.load(out_ptr + slot * BLOCK + lanes)
    if MODE == 5:  # stored only where the program id agrees with the draw: every slot under the interpreter,
        # some slots never on a GPU; the store itself depends on the group and the draw alone
        if pid % SPLITS == split:
            tl.store(out_ptr + slot * BLOCK + lanes, x * 2)
    else:
        tl.store(out_ptr + slot * BLOCK + lanes, x * 2)


@pytest.mark.parametrize("mode,race", [(0, ""), (1, "together with its program id"),
                                       (2, "together with its program id"), (3, ""), (4, ""),
                                       (5, "decided what to do with its program id"),
                                       (6, "to choose where it read back")])
def test_group_counters(mode, race):
    import torch

    splits, groups = 2, 3
    x = torch.randn(splits * groups * 16)
    cnt, out = torch.zeros(splits * groups, dtype=torch.int32), torch.empty(splits * groups * 16)
    with _traced() as trace:
        _group_kernel[(splits * groups,)](x, cnt, out, splits, groups, MODE=mode, BLOCK=16)
    found = trace.race()
    assert torch.equal(out, x * 2)  # every variant is right under the interpreter
    if race:
        assert race in found and ("differs between the programs" in found or mode == 6), found
        return
    assert found == "", found
    launch = trace.launches[0]
    if mode == 4:  # a counter drawn by one program spreads nothing: the programs stay as launched
        assert launch.ticket_draws == 0
    else:  # each draw's work a program of its own, numbered past the grid's 6
        assert launch.ticket_draws == 6
        assert {p for name, p, _, _ in launch.spans if name == "x_ptr"} == set(range(6, 12))


@triton.jit
def _chosen_group_kernel(cnt_ptr, out_ptr):
    """Which programs draw from the second counter is decided by the first counter's draw: the group the
    interpreter sees (programs 0 and 1) is not the one a GPU has."""
    first = tl.atomic_add(cnt_ptr, 1)
    if first < 2:
        second = tl.atomic_add(cnt_ptr + 1, 1)
        tl.store(out_ptr + (tl.program_id(0) // 2) * 2 + second, 1.0)  # pid // 2: 0 in both, on the interpreter


def test_a_group_chosen_by_another_draw_is_no_group():
    import torch

    cnt, out = torch.zeros(2, dtype=torch.int32), torch.zeros(4)
    with _traced() as trace:
        _chosen_group_kernel[(4,)](cnt, out)
    assert "together with its program id" in trace.race(), trace.race()


@triton.jit
def _prefetch_kernel(x_ptr, cnt_ptr, out_ptr, seen_ptr, TOTAL, MODE: tl.constexpr, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    cur = tl.atomic_add(cnt_ptr, 1)
    while cur < TOTAL:
        if MODE == 2:  # the item's loads before the next draw, in the stretch of the previous item's store
            x = tl.load(x_ptr + cur * BLOCK + lanes)
        nxt = tl.atomic_add(cnt_ptr, 1)  # the next ticket, fetched before this item's work
        if MODE != 2:
            x = tl.load(x_ptr + cur * BLOCK + lanes)
        if MODE == 1:  # the item stored at the rows of nxt - 1, taken to be cur
            tl.store(out_ptr + (nxt - 1) * BLOCK + lanes, x * 2)
        elif MODE == 4:  # stored by the program believed to draw every ticket (it does, under the interpreter)
            if tl.program_id(0) == 0:
                tl.store(out_ptr + cur * BLOCK + lanes, x * 2)
        else:
            tl.store(out_ptr + cur * BLOCK + lanes, x * 2)
        if MODE == 3:  # a write with the next ticket in the current item's stretch: two draws' work in one
            tl.store(seen_ptr + nxt, 1)
        cur = nxt


@pytest.mark.parametrize("mode,race", [(0, ""), (1, "together with a second value it drew"), (2, ""), (3, ""),
                                       (4, "decided what to do with its program id")])
def test_prefetch(mode, race):
    import torch

    x = torch.randn(6 * 16)
    cnt, out, seen = torch.zeros(1, dtype=torch.int32), torch.empty(6 * 16), torch.zeros(16, dtype=torch.int32)
    with _traced() as trace:
        _prefetch_kernel[(3,)](x, cnt, out, seen, 6, MODE=mode, BLOCK=16)
    found = trace.race()
    assert torch.equal(out, x * 2)
    if race:
        assert race in found, found
        return
    assert found == "", found
    launch = trace.launches[0]
    if mode == 3:  # stays as launched
        assert launch.ticket_draws == 0
        assert {p for name, p, _, _ in launch.spans if name == "x_ptr"} == {0}
        return
    assert launch.ticket_draws == 6
    # each item's loads of x in a program of its own, past the grid's 3. In mode 2 the stretch before the first
    # store writes nothing and goes with the next, and each later load shares a stretch with the previous item's
    # store: it is counted in that item's program (more work in one program, never less)
    x_spans = [(p, low) for name, p, low, _ in launch.spans if name == "x_ptr"]
    assert sorted(p for p, _ in x_spans) == ([3, 3, 4, 5, 6, 7] if mode == 2 else list(range(3, 9)))
    assert len({low for _, low in x_spans}) == 6


def test_every_file_is_tested_and_in_the_readme():
    readme = (FOLDER / "README.md").read_text()
    source = (TESTS / "test_grading_round21_sched.py").read_text()
    for path in FOLDER.glob("*.py"):
        tag = path.name.split("_")[0]
        assert path.name in readme, path.name
        assert f'_file("{tag}")' in source, tag
