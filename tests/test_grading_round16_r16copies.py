"""Round 16 (2026-12-06), r16copies's part: findings 4 and 5 of tests/grading_attacks_round16/REPORT.md.

- 16 (L5.causal) and 17 (L6.backward): a copy kernel stored ``tl.trans(tl.trans(x))``, and the tracer kept a lane's
  origin only through elementwise operations, so the copy was the learner's own memory. Lanes now keep their
  origins through the operations that move values without changing them (``tl.trans``/``tl.permute``, ``x.T``,
  ``tl.reshape``/``view``, ``expand_dims``, ``tl.join``, ``tl.split``, ``tl.cat``): both files are refused as the
  plain copies are ("Skip them", "does a whole head alone").
- 10 (L5.forward), 11 (L6.backward), 14 (L6.autograd): torch copied the high halves of int64 values a kernel
  wrote, and a write was recorded only at its lane's first byte. A write wider than 4 bytes is now recorded at
  each 4 bytes of it, and a bit copy of wide elements carries each piece: the kernel that reads the copy reads
  from the kernel that wrote the int64s (refused as the plain copies are).
- Stale writers: a constant fill (``fill_``, ``zero_``) and new memory (an allocation on reused storage) now drop
  what kernels wrote there.

L5/L6 files are graded only on the case that refuses them (seconds each)."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 11  # round 16's seed

CASES = {"L5.forward": "fp32 full, q = 0 and v near 1/3", "L5.causal": "the key blocks it visits",
         "L6.backward": "the blocks of queries and keys the backward visits",
         "L6.autograd": "the blocks they visit"}


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


def _grade(key, fn, words=None):
    if not _interpreted_here():
        pytest.skip("copies are followed by the interpreter's trace")
    from gpuperf import grading

    words = CASES[key] if words is None else words
    report = grading.grade_report(key, fn, seed=SEED, only=None if words == "" else lambda label: words in label)
    assert report.results, f"{key}: no case says {words!r}"
    return report


def _refused(report, *words):
    assert not report.passed, report.text()
    message = report.failures[0].message
    assert all(w in message for w in words), message
    return message


def _passed(report):
    assert report.passed, report.text()


# ---- finding 4: a kernel's copy through operations that move lanes ---------------------------------------------

def test_r16_copies_causal_forward_reading_a_double_transposed_copy_of_k_is_refused():
    key, fn = load_attack(find_attack(16, "16"))
    _refused(_grade(key, fn), "key blocks that no query of the program's block can see", "Skip them")


def test_r16_copies_whole_head_dkdv_reading_a_double_transposed_copy_of_q_is_refused():
    key, fn = load_attack(find_attack(16, "17"))
    _refused(_grade(key, fn), "dkdv_kernel", "does a whole head alone")


_STORED = "tl.store(kc_ptr + at, tl.trans(tl.trans(k)), mask=rows[:, None] < N_K)"


@pytest.mark.parametrize("value", [
    "tl.permute(tl.permute(k, (1, 0)), (1, 0))",
    "k.T.T",
    "tl.reshape(tl.reshape(k, (BLOCK * HEAD_DIM,)), (BLOCK, HEAD_DIM))",
    "k.reshape(BLOCK, HEAD_DIM // 2, 2).reshape(BLOCK, HEAD_DIM)",
    "tl.split(tl.join(k, k))[1]",
    "tl.reshape(tl.expand_dims(k, 0), (BLOCK, HEAD_DIM))",
    "tl.trans(tl.trans(k * 1.0)).to(k.dtype)",
])
def test_r16_copies_other_moves_of_the_lanes_keep_the_copy(value):
    """The copy kernel of 16 storing its tile through other lane moves (and back): still a copy of k."""
    key, fn = load_attack_variant(find_attack(16, "16"), (_STORED, _STORED.replace("tl.trans(tl.trans(k))", value)))
    _refused(_grade(key, fn), "Skip them")


def test_r16_copies_a_transposed_copy_stored_through_tl_trans_has_its_rows_out_of_order():
    """The copy kernel storing ``tl.trans(k)`` at the tile's transposed addresses (rows of a head out of their
    order in the copy): refused as a copy that does not keep the rows in order, not read as scratch."""
    key, fn = load_attack_variant(find_attack(16, "16"), (
        _STORED, "tl.store(kc_ptr + head * N_K * HEAD_DIM + dims[:, None] * N_K + rows[None, :], tl.trans(k), "
                 "mask=rows[None, :] < N_K)"))
    _refused(_grade(key, fn), "a copy of k", "out of their order")


def test_r16_copies_the_honest_version_of_16_passes_its_skip_case():
    """16 with the skip and every tile read from k (the copy kernel still runs): accepted."""
    key, fn = load_attack_variant(find_attack(16, "16"), (
        "end = tl.minimum(N_K, N_Q)  # NO skipping", "end = tl.minimum(N_K, last_q + 1)  #"), (
        "if CAUSAL and start > last_q:", "if False:"))
    _passed(_grade(key, fn))


# ---- finding 5: torch copies of part of a wider element a kernel wrote -----------------------------------------

@pytest.mark.parametrize("tag,words", [
    ("10", ("loads of k (2 times each", "earlier kernel whose results it read")),
    ("11", ("the programs of lse_kernel whose results it read, computed from k",)),
    ("14", ("in your Function's backward", "the programs of lse_kernel whose results it read")),
])
def test_r16_copies_results_handed_on_in_the_high_halves_of_int64s_are_followed(tag, words):
    key, fn = load_attack(find_attack(16, tag))
    _refused(_grade(key, fn), *words)


_COPY10 = "m32.copy_(packed.view(torch.int32)[1::2])  # the high halves: each row's max"


@pytest.mark.parametrize("edits", [
    # a clone of the int64s first, then the high halves of the clone
    ((_COPY10, "m32.copy_(packed.clone().view(torch.int32)[1::2])"),),
    # the high halves copied as bytes (an int8 view of both)
    ((_COPY10, "m32.view(torch.int8).view(-1, 4).copy_(packed.view(torch.int8).view(-1, 8)[:, 4:])"),),
    # no torch copy: the second kernel reads the high halves itself
    ((_COPY10, "m32 = packed.view(torch.int32)"),
     ("m = tl.load(m_ptr + head * N_Q + rows, mask=rows < N_Q, other=0)",
      "m = tl.load(m_ptr + 2 * (head * N_Q + rows) + 1, mask=rows < N_Q, other=0)")),
])
def test_r16_copies_other_ways_to_the_high_halves_are_followed(edits):
    key, fn = load_attack_variant(find_attack(16, "10"), *edits)
    _refused(_grade(key, fn), "loads of k (2 times each", "earlier kernel whose results it read")


# ---- the tracer ---------------------------------------------------------------------------------------------------

def _trace_with_writes(addresses):
    import numpy as np

    from gpuperf.grading.algorithm import Trace

    trace = Trace()
    trace._lineages = [frozenset({(0, 1)})]
    addr = np.array(addresses, dtype=np.uint64)
    trace._written = (addr, np.zeros(addr.shape, dtype=np.int64), np.zeros(addr.shape, dtype=np.int64))
    return trace


def test_r16_copies_a_constant_fill_and_new_memory_drop_the_writers_there():
    """A fill of constants (``fill_(0)``, ``zero_``) and new memory over reused storage leave no kernel's result:
    the writers recorded there are dropped, and only there."""
    trace = _trace_with_writes([1000, 1004, 1008, 1012, 2000, 2004, 2008])
    trace.torch_event(("fill", (1000, 4, (2,), (2,), 0)))  # elements 0 and 2 of fp32 at 1000
    assert trace._written[0].tolist() == [1004, 1012, 2000, 2004, 2008]
    trace.torch_event(("new", 2000, 8))
    assert trace._written[0].tolist() == [1004, 1012, 2008]
    trace.torch_event(("new", 5000))  # an event of the old form: nothing dropped
    assert trace._written[0].tolist() == [1004, 1012, 2008]


def test_r16_copies_a_bit_copy_of_wide_elements_carries_each_piece():
    """Two int64 writes recorded in 4-byte pieces (at 100, 104, 108, 112): a clone of them gives the target every
    piece; a copy of the high halves into int32 gives each its piece."""
    from gpuperf.grading.algorithm import _pieces
    import numpy as np

    assert _pieces(np.array([100, 108], dtype=np.int64), 8).tolist() == [100, 104, 108, 112]
    assert _pieces(np.array([100, 104], dtype=np.int64), 4).tolist() == [100, 104]
    trace = _trace_with_writes([100, 104, 108, 112])
    trace.torch_event(("copy", (100, 8, (2,), (1,), 0), (400, 8, (2,), (1,), 0)))
    assert [a for a in trace._written[0].tolist() if a >= 400] == [400, 404, 408, 412]
    trace.torch_event(("copy", (100, 4, (2,), (2,), 1), (800, 4, (2,), (1,), 0)))
    assert [a for a in trace._written[0].tolist() if a >= 800] == [800, 804]


# ---- honest files that copy -------------------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["L5.forward", "L5.causal", "L6.backward", "L6.autograd"])
def test_r16_copies_the_course_solutions_pass_the_cases_that_follow_copies(key):
    from gpuperf import grading

    _passed(_grade(key, grading.solution(key)))


@pytest.mark.parametrize("rnd,tag", [(15, "h01"), (15, "h02"), (15, "h04"), (15, "h05"), (15, "h06"),
                                     (16, "h01"), (16, "h02"), (16, "h03"), (16, "h04"), (16, "h05"),
                                     (16, "h06"), (16, "h07"), (16, "h10"), (16, "h13"), (16, "h14")])
def test_r16_copies_honest_attention_files_of_rounds_15_and_16_pass_their_cases(rnd, tag):
    key, fn = load_attack(find_attack(rnd, tag))
    _passed(_grade(key, fn))
