"""Review 20 (2026-12-06, twelfth session): two honest kernels the round-19 graders refused
(tests/grading_review20/README.md).

1. A persistent FlashAttention forward with a ticket scheduler (``item = tl.atomic_add(counter, 1)``, the work
   computed from the ticket) was a race: round 19 counted any atomic's returned value that reaches a write as a
   read of what the other programs add. ``algorithm._tickets`` now tells a counter's draw (an add of one constant
   to a counter nothing else adds to) from a partial sum; a write may depend on a draw alone, not on the draw
   and the program id, nor on two draws, and a draw may not be dropped (``_ticket_race``). The counter's reset
   by the program that drew its final value, tested on it, is no race (``_resets``); a reset by "the last
   program id" stays one. Each draw's work is counted as a program of its own (``_split_at_draws``).
2. A split-KV forward with 16 or 32 splits was refused by L5's scratch budget (8 splits). The budget now holds
   one split per 16 keys, at most 32 (``exercises._split_bound``), and the message says what was stored.

Seed 11; each grade limited to the cases that matter (``only=``) or stopped at its first failure."""

from __future__ import annotations

import contextlib

# the interpreter switch first, before triton is imported
import gpuperf.kernels  # noqa: F401, I001
import pytest
import triton
import triton.language as tl

from attack_files import TESTS, load_attack, load_attack_variant

SEED = 11
FOLDER = TESTS / "grading_review20"
RACE = ("a race in your kernel", "any order on a GPU")


def _file(tag):
    found = sorted(FOLDER.glob(f"{tag}_*.py"))
    assert len(found) == 1, found
    return found[0]


def _interpreted_here() -> bool:
    import torch

    # the CPU's case labels and messages: on a GPU (with GPUPERF_GRADING_INTERPRET_ON_GPU=1) the labels differ
    # and a race shows in the compiled case's values first (an H100, 2026-12-06)
    return not torch.cuda.is_available()


def _passed(key, fn, only=None):
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=SEED, only=only)
    assert report.results and report.passed, report.text()


def _refused(key, fn, *words, only=None):
    from gpuperf import grading

    if not _interpreted_here():
        pytest.skip("races and scratch are counted by the interpreter's trace")
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


# ---- 1. ticket schedulers --------------------------------------------------------------------------------------


def test_h01_ticket_scheduler_passes_l5_causal():
    _, fn = load_attack(_file("h01"))
    _passed("L5.causal", fn)


def test_h01_ticket_scheduler_passes_l5_forward_where_programs_count():
    _, fn = load_attack(_file("h01"))
    _passed("L5.forward", fn, only=_scheduler_cases)


def test_h02_counter_reset_by_the_final_ticket_is_accepted():
    key, fn = load_attack(_file("h02"))
    _passed(key, fn, only=_scheduler_cases)


def test_w01_ticket_rows_with_the_program_ids_queries_is_a_race():
    key, fn = load_attack(_file("w01"))
    _refused(key, fn, *RACE, "used the value its atomic returned", "element 0 of counter_ptr",
             "together with its program id")


def test_w02_counter_reset_by_the_last_program_id_is_a_race():
    key, fn = load_attack(_file("w02"))
    _refused(key, fn, *RACE, "reset element 0 of counter_ptr with an atomic exchange", "final value")


def test_w03_two_draws_taken_as_consecutive_is_a_race():
    key, fn = load_attack(_file("w03"))
    _refused(key, fn, *RACE, "drew again without using it")


# ---- 2. split-KV with many splits ------------------------------------------------------------------------------


def _long(label):
    return "N_k=4096" in label and "fp32" in label


def test_h03_split_kv_with_32_splits_passes_every_case():
    key, fn = load_attack(_file("h03"))
    _passed(key, fn)


def test_h03_with_16_splits_passes_the_long_cases():
    key, fn = load_attack_variant(_file("h03"), ("WANTED_SPLITS = 32\n", "WANTED_SPLITS = 16\n"))
    _passed(key, fn, only=lambda label: "N_k=4096" in label or "N_k=271" in label)


def test_w04_split_kv_that_stores_the_scores_is_refused_for_the_scores():
    key, fn = load_attack(_file("w04"))
    message = _refused(key, fn, "B x H x N_q x N_k scores", "S or P", "computed from Q and K only", only=_long)
    assert "at most 32" in message


def test_more_than_32_splits_are_refused_as_partials_not_scores():
    """h03 with 64 splits at N_k = 4096: the partials (64 x 16 x 18) pass the budget of 32 splits; the message
    names partial outputs and the splits to use, not S or P."""
    key, fn = load_attack_variant(_file("h03"), ("WANTED_SPLITS = 32\n", "WANTED_SPLITS = 64\n"))
    message = _refused(key, fn, "computed from Q, K and V", "split-KV walk", "Use at most 32 splits", only=_long)
    assert "S or P" not in message


def test_split_bound():
    from gpuperf.grading.exercises import _split_bound

    assert [_split_bound(n) for n in (1, 16, 17, 271, 512, 513, 4096, 16384)] == [1, 1, 2, 17, 32, 32, 32, 32]


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
def _draw_kernel(x_ptr, cnt_ptr, ws_ptr, out_ptr, spare_ptr, flag_ptr, TOTAL, MODE: tl.constexpr,
                 BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    if MODE == 3:  # a data add onto the counter too: it is no counter, its returned value a partial sum
        tl.atomic_add(cnt_ptr, tl.load(x_ptr).to(tl.int32) * 0 + 1)
    item = tl.atomic_add(cnt_ptr, 1)
    while item < TOTAL:
        x = tl.load(x_ptr + item * BLOCK + lanes)
        if MODE == 5:  # a second counter drawn in the middle of the item's work, and written on its own
            spare = tl.atomic_add(spare_ptr, 1)
            tl.store(flag_ptr + spare, 1)
        if MODE == 1:  # the draw's value and the program id in one write
            tl.store(out_ptr + item * BLOCK + lanes, x * 2 + item.to(tl.float32) * 0 + tl.program_id(0))
        elif MODE == 3:  # the returned value in the stored value
            tl.store(out_ptr + item * BLOCK + lanes, x * 2 + item.to(tl.float32) * 0)
        else:
            tl.store(out_ptr + item * BLOCK + lanes, x * 2)
        if MODE == 2:  # the item's sum added into a workspace every program adds to: a partial, not a ticket
            tl.atomic_add(ws_ptr, tl.sum(x))
        item = tl.atomic_add(cnt_ptr, 1)
    if MODE == 0 and item == TOTAL + tl.num_programs(0) - 1:  # the final draw resets the counter
        tl.atomic_xchg(cnt_ptr, 0)
    if MODE == 4:  # the counter reset by a program that drew past the work, but not the final value
        if item == TOTAL + 1:
            tl.atomic_xchg(cnt_ptr, 0)


@pytest.mark.parametrize("mode,race", [(0, ""), (1, "together with its program id"), (2, ""),
                                       (3, "adds to that element"), (4, "reset element 0 of cnt_ptr"), (5, "")])
def test_counter_draws(mode, race):
    import torch

    x = torch.randn(6 * 16)
    cnt, ws, out = torch.zeros(1, dtype=torch.int32), torch.zeros(1), torch.empty(6 * 16)
    spare, flag = torch.zeros(1, dtype=torch.int32), torch.zeros(8, dtype=torch.int32)
    with _traced() as trace:
        _draw_kernel[(3,)](x, cnt, ws, out, spare, flag, 6, MODE=mode, BLOCK=16)
    found = trace.race()
    if race:
        assert race in found, found
    else:
        assert found == "", found
        assert torch.equal(out, x * 2)
    if mode == 0:
        assert int(cnt) == 0
    launch = trace.launches[0]
    if mode in (0, 2):  # each draw's work counted as a program of its own, numbered past the grid's 3
        assert launch.ticket_draws == 6
        assert {p for name, p, _, _ in launch.spans if name == "x_ptr"} == set(range(3, 3 + 6))
    if mode == 5:  # the item's store came after the second draw: the programs stay as launched (a dummy draw
        # between two passes over K would otherwise make them two programs' single passes)
        assert launch.ticket_draws == 0
        assert {p for name, p, _, _ in launch.spans if name == "x_ptr"} == {0}


def test_every_file_is_tested_and_in_the_readme():
    readme = (FOLDER / "README.md").read_text()
    source = (TESTS / "test_grading_review20_sched.py").read_text()
    for path in FOLDER.glob("*.py"):
        tag = path.name.split("_")[0]
        assert path.name in readme, path.name
        assert f'_file("{tag}")' in source, tag
