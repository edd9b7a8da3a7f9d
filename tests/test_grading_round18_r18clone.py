"""Round 18 (2026-12-06, tenth session), r18clone's part: files 02, 03, 04, 06, 08, 09, 11 of
tests/grading_attacks_round18.

- 02 (L3.softmax), 03 (L4.matmul), 04 (L5.forward), 06 (L2.chain), 08 (L6.backward): a Python loop of one-program
  launches (or one program over everything) wrote a buffer of the function's own, and the function returned
  ``buf.clone()``. The launch-loop and spread rules read only launches' writes into the returned tensor's bytes,
  and no launch wrote the clone. They now read the programs that wrote the values the output holds through
  torch's copies (``exercises._out_writes``: clone, .contiguous(), .to(), copy_, followed back in time).
- 09 (L5.forward), 11 (L4.matmul): a launch per block where one program computes and the others add 0 with
  ``tl.atomic_add`` to the blocks done (or store placeholders): an add of 0 counted as a write kept. A lane that
  leaves memory as it was (an atomic add of 0 or of a value below the sum's rounding, a max that keeps what is
  there, an exchange or a store of the value already there) is now no new writer
  (``algorithm.Launch.value_writes``).

L5/L6 files are graded only on the case that refuses them (seconds each)."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 11
INTERPRETER = "interpreter on the CPU"  # the L5/L6 case the launch-loop rule is graded in
CASES = {"L2.chain": "n=72027 fp32", "L3.softmax": "x 3x39 fp32", "L4.matmul": "A 64x64 @ B 64x64 fp32",
         "L5.forward": INTERPRETER, "L6.backward": INTERPRETER}


def _interpreted_here() -> bool:
    import torch

    # the CPU's case labels and messages: on a GPU (with GPUPERF_GRADING_INTERPRET_ON_GPU=1) the labels differ
    # and a race shows in the compiled case's values first (an H100, 2026-12-06)
    return not torch.cuda.is_available()


def _grade(key, fn, words=None):
    if not _interpreted_here():
        pytest.skip("the programs that write an output are counted by the interpreter's trace")
    from gpuperf import grading

    words = CASES[key] if words is None else words
    report = grading.grade_report(key, fn, seed=SEED, only=lambda label: words in label)
    assert report.results, f"{key}: no case says {words!r}"
    return report


def _refused(report, *words):
    assert not report.passed, report.text()
    message = report.failures[0].message
    assert all(w in message for w in words), message
    return message


def _passed(report):
    assert report.passed, report.text()


_LOOP = "times in one call"
_ONE_PROGRAM = ("1 program(s) of your kernel chain_kernel wrote the 72027 elements of out in one launch",
                "Give every block of the vector its own program")


# ---- 02, 03, 04, 06, 08: the output handed back as torch's copy of a buffer ---------------------------------------

@pytest.mark.parametrize("tag,words", [
    ("02", (_LOOP, "each launch with 1 program(s) or fewer writing y", "Launch the kernel once")),
    ("03", (_LOOP, "each launch with 1 program(s) or fewer writing C", "Launch the kernel once")),
    ("04", (_LOOP, "to write o, each launch with 1 program(s) or fewer on a head's rows",
            "(cdiv(N_q, BLOCK_M), B x H)")),
    ("06", _ONE_PROGRAM),
    ("08", (_LOOP, "kernel dkdv_kernel", "to write dk, each launch with 1 program(s)")),
])
def test_r18_clone_outputs_copied_by_torch_are_counted_by_the_programs_that_wrote_them(tag, words):
    key, fn = load_attack(find_attack(18, tag))
    _refused(_grade(key, fn), *words)


@pytest.mark.parametrize("tag,old,new,words", [
    ("02", "    return buf.clone()", "    return buf", (_LOOP, "writing y")),
    ("06", "    return buf.clone()", "    return buf", _ONE_PROGRAM),
    ("03", "    return c.clone()  #", "    return c  #", (_LOOP, "writing C")),
    ("04", "    return o.clone(), lse.clone()", "    return o, lse", (_LOOP, "to write o")),
])
def test_r18_clone_controls_returning_the_buffer_get_the_same_message(tag, old, new, words):
    key, fn = load_attack_variant(find_attack(18, tag), (old, new))
    _refused(_grade(key, fn), *words)


@pytest.mark.parametrize("tag,old,new", [
    ("02", "    return buf.clone()", "    return buf.to(torch.float64).to(buf.dtype)"),  # two conversions
    ("02", "    return buf.clone()", "    out = torch.empty_like(buf)\n    out.copy_(buf)\n    return out"),
    ("02", "    return buf.clone()", "    return buf.t().contiguous().t().contiguous()"),
    ("03", "    return c.clone()  #", "    return c.clone().clone()  #"),
])
def test_r18_clone_other_torch_copies_are_followed_too(tag, old, new):
    key, fn = load_attack_variant(find_attack(18, tag), (old, new))
    _refused(_grade(key, fn), _LOOP, "Launch the kernel once")


# ---- honest kernels handing back a copy of what they wrote -----------------------------------------------------

def test_r18_clone_one_launch_per_row_grid_returning_a_clone_passes():
    """02 made honest: one launch on a grid of one program per row, buf.clone() returned (every case)."""
    key, fn = load_attack_variant(
        find_attack(18, "02"),
        ("    for row in range(n_rows):  # one row per launch, one program each\n"
         "        softmax_row_kernel[(1,)](x, buf, row,",
         "    for row in range(1):\n        softmax_row_kernel[(n_rows,)](x, buf, row,"))
    _passed(_grade(key, fn, words=""))


def test_r18_clone_chain_on_a_full_grid_returning_a_clone_passes():
    key, fn = load_attack_variant(
        find_attack(18, "06"),
        ("    for start in range(start0, n_elements, BLOCK_SIZE):",
         "    for start in range(start0, n_elements, BLOCK_SIZE * tl.num_programs(0)):"),
        ("    chain_kernel[(1,)](", "    chain_kernel[(triton.cdiv(x.numel(), block_size),)]("))
    _passed(_grade(key, fn, words="fp32"))


def test_r18_clone_matmul_on_a_full_grid_returning_a_clone_passes():
    key, fn = load_attack_variant(
        find_attack(18, "03"),
        ("    for tile in range(triton.cdiv(M, block_m) * triton.cdiv(N, block_n)):  # one tile per launch\n"
         "        matmul_kernel[(1,)]",
         "    for tile in range(1):\n        matmul_kernel[(triton.cdiv(M, block_m) * triton.cdiv(N, block_n),)]"))
    _passed(_grade(key, fn, words="fp32"))


_FORWARD_ONE_LAUNCH = (
    ("    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)",
     "    block_m = block_m + tl.program_id(0)\n    rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)"),
    ("    for block_m in range(triton.cdiv(n_q, 32)):  # the blocks of queries one after another: a launch each\n"
     "        attention_forward_kernel[(1, batch * heads)]",
     "    for block_m in range(1):\n        attention_forward_kernel[(triton.cdiv(n_q, 32), batch * heads)]"))
_FORWARD_PER_HEAD = (
    ("    head = tl.program_id(1).to(tl.int64)  # one (batch, head) pair per column of the grid",
     "    head = tl.program_id(1).to(tl.int64) + block_m\n    block_m = tl.program_id(0)"),
    ("    for block_m in range(triton.cdiv(n_q, 32)):  # the blocks of queries one after another: a launch each\n"
     "        attention_forward_kernel[(1, batch * heads)]",
     "    for block_m in range(batch * heads):  # one launch per head\n"
     "        attention_forward_kernel[(triton.cdiv(n_q, 32), 1)]"))


@pytest.mark.parametrize("edits,words", [
    (_FORWARD_ONE_LAUNCH, INTERPRETER),
    (_FORWARD_ONE_LAUNCH, "B=2 H=3 N_q=60 N_k=91"),
    (_FORWARD_PER_HEAD, "B=2 H=3 N_q=60 N_k=91"),
    (_FORWARD_PER_HEAD, INTERPRETER),
])
def test_r18_clone_forward_returning_clones_passes(edits, words):
    """04 made honest: one launch on the full grid, or a loop over heads (a launch per head on a grid of every
    block of queries), o.clone() and lse.clone() returned."""
    key, fn = load_attack_variant(find_attack(18, "04"), *edits)
    _passed(_grade(key, fn, words=words))


def test_r18_clone_split_k_with_atomics_returning_a_clone_passes():
    """Round 15's h08 (split-K, atomics onto zeros in fp32 for K >= 256), as is and returning c.clone()."""
    path = find_attack(15, "h08")
    for edits in ((), (("    return c\n", "    return c.clone()\n"),)):
        key, fn = load_attack_variant(path, *edits) if edits else load_attack(path)
        _passed(_grade(key, fn, words="A 33x2048 @ B 2048x40 fp32"))


@pytest.mark.parametrize("edits", [(), (("    return dq, dk, dv", "    return dq.clone(), dk.clone(), dv.clone()"),)])
def test_r18_clone_dq_by_atomics_passes(edits):
    """Round 14's h04 (dQ added by every block of keys with tl.atomic_add), as is and returning clones."""
    path = find_attack(14, "h04")
    key, fn = load_attack_variant(path, *edits) if edits else load_attack(path)
    _passed(_grade(key, fn))


# ---- 09, 11: atomic adds of 0 (and stores of what is there) keep the value's writer ----------------------------

@pytest.mark.parametrize("tag,words", [
    ("09", (_LOOP, "to write o", "what counts is the programs that compute the values kept")),
    ("11", (_LOOP, "writing C", "what counts is the programs that compute the values kept")),
])
def test_r18_clone_atomic_adds_of_zero_are_no_new_writers(tag, words):
    key, fn = load_attack(find_attack(18, tag))
    _refused(_grade(key, fn, words=INTERPRETER if tag == "09" else "A 72x76 @ B 76x39 fp32"), *words)


_ADD0 = "            tl.atomic_add(c_at, zero, mask=c_ok)"


@pytest.mark.parametrize("new", [
    "            tl.atomic_add(c_at, tl.load(c_at, mask=c_ok) * 0, mask=c_ok)",  # 0 computed from a load
    "            tl.atomic_add(c_at, tl.load(c_at, mask=c_ok) * 1e-30, mask=c_ok)",  # below the sum's rounding
    "            tl.store(c_at, tl.load(c_at, mask=c_ok), mask=c_ok)",  # what is there, stored back
    "            tl.atomic_max(c_at, tl.load(c_at, mask=c_ok), mask=c_ok)",  # a max that keeps it
])
def test_r18_clone_writes_that_leave_the_value_as_it_was_are_no_new_writers(new):
    key, fn = load_attack_variant(find_attack(18, "11"), (_ADD0, new))
    _refused(_grade(key, fn, words="A 72x76 @ B 76x39 fp32"), _LOOP, "writing C")
