"""Round 17 (2026-12-06), r17copies's part: files 07 to 10 of tests/grading_attacks_round17.

- 08 (L5.forward), 09 (L6.backward), 10 (L6.autograd): a constant ``fill_`` of one byte of each fp32 a kernel wrote
  (the low byte: a harmless change of the max in 08, the zero already there in 09 and 10) dropped the kernel as
  the writer of the whole value, so the next kernel read a max or an lse with no lineage. A write is now recorded
  with the bytes it spans, and a fill (or a later write, a torch copy, new memory) takes a writer away only from
  the bytes it covers: a value keeps its writer while any byte of it is still as the kernel left it, and a load
  links to every write recorded in the bytes it reads.
- 07 (L5.causal): a copy kernel stored ``k + 0.0 * tl.sum(k, axis=0)[None, :]``, and a lane combined with any other
  value computed from loads lost its origin (no copy). A lane of an elementwise result that holds exactly the value
  of a loaded operand's lane is now a copy of that lane: 07 is refused as the plain copy is (round 16's 16).

L5/L6 files are graded only on the case that refuses them (seconds each)."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 11

CASES = {"L5.forward": "fp32 full, q = 0 and v near 1/3", "L5.causal": "the key blocks it visits",
         "L6.backward": "the blocks of queries and keys the backward visits",
         "L6.autograd": "the blocks they visit"}


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


def _grade(key, fn, words=None):
    if not _interpreted_here():
        pytest.skip("lineage and copies are followed by the interpreter's trace")
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


# ---- 08-10: a fill of one byte of each value a kernel wrote -----------------------------------------------------

_TWO_PASSES = ("loads of k (2 times each", "earlier kernel whose results it read")


@pytest.mark.parametrize("tag,words", [
    ("08", _TWO_PASSES),
    ("09", ("the programs of lse_kernel whose results it read, computed from k",)),
    ("10", ("in your Function's backward", "the programs of lse_kernel whose results it read")),
])
def test_r17_copies_results_laundered_by_a_fill_of_one_byte_are_followed(tag, words):
    key, fn = load_attack(find_attack(17, tag))
    _refused(_grade(key, fn), *words)


_FILL08 = "    m32.view(torch.uint8)[::4].fill_(0)  #"
_ZERO_BYTES = '''
@triton.jit
def zero_bytes_kernel(ptr, N, BLOCK: tl.constexpr):
    at = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ptr + 4 * at, tl.zeros((BLOCK,), dtype=tl.uint8), mask=at < N)


def attention_forward('''


@pytest.mark.parametrize("edits", [
    # the two low bytes, as a 2-byte view
    ((_FILL08, "    m32.view(torch.int16)[::2].zero_()  #"),),
    # the low byte of each, through a (n, 4) byte view
    ((_FILL08, "    m32.view(torch.uint8).view(-1, 4)[:, 0].fill_(0)  #"),),
    # the low byte of each, set by a kernel's store of a byte
    ((_FILL08, "    zero_bytes_kernel[(triton.cdiv(m32.numel(), 64),)](m32.view(torch.uint8), m32.numel(), BLOCK=64)  #"),
     ("\ndef attention_forward(", _ZERO_BYTES)),
    # the low byte of each, copied from a buffer of zeros
    ((_FILL08, "    m32.view(torch.uint8)[::4].copy_(torch.zeros(m32.numel(), dtype=torch.uint8))  #"),),
])
def test_r17_copies_other_overwrites_of_part_of_each_value_keep_its_writer(edits):
    key, fn = load_attack_variant(find_attack(17, "08"), *edits)
    _refused(_grade(key, fn), *_TWO_PASSES)


# ---- 07: a copy plus zero times a reduction -----------------------------------------------------------------------

_KK07 = "kk = k + 0.0 * tl.sum(k, axis=0)[None, :]"


@pytest.mark.parametrize("value", [
    None,
    "kk = k * (1.0 + 0.0 * tl.sum(k, axis=0)[None, :])",
    "kk = k + (tl.sum(k, axis=0) - tl.sum(k, axis=0))[None, :]",
    "kk = tl.maximum(k, tl.min(k, axis=0)[None, :] - float('inf'))",
])
def test_r17_copies_a_copy_plus_zero_times_a_reduction_is_a_copy(value):
    path = find_attack(17, "07")
    key, fn = load_attack(path) if value is None else load_attack_variant(path, (_KK07, value))
    _refused(_grade(key, fn), "key blocks that no query of the program's block can see", "Skip them")


class _Handle:  # a value of the interpreter: its lanes, what it was computed from, where its lanes came from
    def __init__(self, data, sources=frozenset(), lanes_from=None):
        self.data, self._gpuperf_src = data, frozenset(sources)
        if lanes_from is not None:
            self._gpuperf_lanes_from = lanes_from


def test_r17_copies_only_the_lanes_left_as_loaded_are_copies():
    """``k + z`` with z computed from another load: the lanes where z is 0 (the sum is k's value) keep k's origin,
    the others have none (a NaN left NaN is as loaded); a result in another dtype is no copy."""
    import numpy as np

    from gpuperf.grading.algorithm import _carry_lanes

    k_data = np.array([1.0, 2.0, -0.0, np.nan], dtype=np.float32)
    origin = (np.array([100, 104, 108, 112]), np.ones(4, dtype=bool))
    k = _Handle(k_data, {1}, (origin,))
    z = _Handle(np.array([0.0, 1.0, 0.0, 0.0], dtype=np.float32), {2})
    res = _Handle(k_data + z.data, {1, 2})
    _carry_lanes(res, [k, z])
    (where, loaded), = res._gpuperf_lanes_from
    assert where is origin[0] and loaded.tolist() == [True, False, True, True]
    other = _Handle(k_data + 5, {1, 2})
    _carry_lanes(other, [k, _Handle(np.full(4, 5.0, dtype=np.float32), {2})])
    assert res._gpuperf_lanes_from[0][1].tolist()[:3] == [True, False, True]
    assert other._gpuperf_lanes_from[0][1].tolist() == [False, False, False, True]  # NaN stays NaN
    wide = _Handle((k_data + z.data).astype(np.float64), {1, 2})
    _carry_lanes(wide, [k, z])
    assert getattr(wide, "_gpuperf_lanes_from", None) is None


# ---- the tracer ---------------------------------------------------------------------------------------------------

def _trace(records):
    """A trace whose kernels wrote ``(address, bytes, owner)`` records, each value of lineage 0."""
    import numpy as np

    from gpuperf.grading.algorithm import Trace

    trace = Trace()
    trace._lineages = [frozenset({(0, 1)})]
    trace._written = (np.array([a for a, _, _ in records], dtype=np.uint64),
                      np.array([o for _, _, o in records], dtype=np.int64), np.zeros(len(records), dtype=np.int64))
    trace._written_bytes = np.array([w for _, w, _ in records], dtype=np.int64)
    return trace


def _bytes(trace):
    if not trace._written:  # nothing left written: no records at all
        return []
    return [(int(a), int(w), int(o)) for a, o, w in zip(trace._written[0], trace._written[1], trace._written_bytes)]


def test_r17_copies_a_fill_takes_the_writer_only_from_the_bytes_it_covers():
    """Two fp32 values at 1000 and 1004: a fill of each one's low byte leaves the other three bytes to the writer;
    a fill of whole elements (the rest of the first value, as an int8 view) drops it."""
    trace = _trace([(1000, 4, 7), (1004, 4, 8)])
    trace.torch_event(("fill", (1000, 1, (2,), (4,), 0)))  # bytes 1000 and 1004
    assert _bytes(trace) == [(1001, 1, 7), (1002, 1, 7), (1003, 1, 7), (1005, 1, 8), (1006, 1, 8), (1007, 1, 8)]
    trace.torch_event(("fill", (1000, 1, (3,), (1,), 1)))  # bytes 1001-1003
    assert _bytes(trace) == [(1005, 1, 8), (1006, 1, 8), (1007, 1, 8)]
    trace = _trace([(1000, 4, 7), (1004, 4, 8)])
    trace.torch_event(("fill", (1000, 4, (2,), (1,), 0)))  # both values whole
    assert _bytes(trace) == []


def test_r17_copies_a_load_links_to_every_write_in_its_bytes():
    """A 4-byte load over bytes left to two writers, and an 8-byte load over two 4-byte writes, read from both."""
    import numpy as np

    from gpuperf.grading.algorithm import _overlapping

    trace = _trace([(1001, 1, 7), (1002, 2, 9), (1008, 4, 3), (1012, 4, 4)])
    w_addr, w_width = trace._written[0], trace._written_bytes
    lane, rec = _overlapping(w_addr, w_width, np.array([1000, 1004, 1008]), 4)
    assert sorted(zip(lane.tolist(), rec.tolist())) == [(0, 0), (0, 1), (2, 2)]
    lane, rec = _overlapping(w_addr, w_width, np.array([1008]), 8)
    assert sorted(rec.tolist()) == [2, 3]
    lane, rec = _overlapping(w_addr, w_width, np.array([1003]), 1)  # a byte inside the 2-byte write at 1002
    assert rec.tolist() == [1]


def test_r17_copies_a_copy_into_part_of_a_value_leaves_the_rest_to_its_writer():
    """A torch copy of one byte over the low byte of an fp32 a kernel wrote: that byte takes the source's writer
    (none here), the other three keep the kernel's."""
    trace = _trace([(1000, 4, 7)])
    trace.torch_event(("copy", (5000, 1, (1,), (1,), 0), (1000, 1, (1,), (1,), 0)))
    assert _bytes(trace) == [(1001, 1, 7), (1002, 1, 7), (1003, 1, 7)]


# ---- honest files ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["L5.forward", "L5.causal", "L6.backward", "L6.autograd"])
def test_r17_copies_the_course_solutions_pass_the_cases_that_follow_lineage_and_copies(key):
    from gpuperf import grading

    _passed(_grade(key, grading.solution(key)))


@pytest.mark.parametrize("rnd,tag", [(15, "h01"), (15, "h02"), (16, "h10"), (16, "h13")])
def test_r17_copies_honest_attention_files_pass_their_cases(rnd, tag):
    key, fn = load_attack(find_attack(rnd, tag))
    _passed(_grade(key, fn))


def test_r17_copies_the_honest_version_of_07_passes_its_skip_case():
    """07 with its copy kernel and the skip (no visit past the diagonal): accepted."""
    key, fn = load_attack_variant(find_attack(17, "07"), (
        "        end = tl.minimum(N_K, N_Q)  # NO skipping: every block up to N_q is walked",
        "        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)"))
    _passed(_grade(key, fn))
