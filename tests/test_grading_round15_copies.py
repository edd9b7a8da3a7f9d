"""Round 15 (2026-12-05), r15copies's part: findings 4 and 8 of tests/grading_attacks_round15/REPORT.md, torch copies.

- 11 (L5.forward), 12 and 13 (L6.backward): ``ws.view(k.dtype).view(k.shape).copy_(k)`` into a float64 buffer, read
  through a pointer cast. torch's copy was an :class:`Image` of k in k's elements, but the kernel's argument was
  float64, so the copy did not hold it and its loads were no loads of k. Now the tracer is told what torch writes
  while kernels are traced (``Trace.torch_event``): an argument whose bytes torch last filled with a copy in
  another dtype is recorded in that dtype (its lanes counted in its elements), so the copy holds it. 11 is refused
  for two passes over K, 12 for its dQ's pass over the copy, 13 as a whole head in one program.
- 18 (L5.forward), 19 (L6.backward), 20 (L6.autograd): a kernel's results (a row's max, a rebuilt lse) handed to the
  next kernel through ``clone()``. The pass counts follow what one kernel stored to the loads of a later one;
  torch's copy cut that. Now a torch copy's bytes take the last writer and lineage of the bytes they copy, so
  the three are refused as their controls without the clone are.
- Variants: ``.to(torch.float64)``, ``copy_`` into a slice, a copy through int8 views, clones of clones, a
  ``fill_`` with each element's value (now a copy too), and an int32 view of the workspace: refused. Honest: 11
  as one online pass reading K from the float64 copy only (it was refused before: "loaded 0 of the 4096 rows of
  k"), and 19 without its stats kernel, the forward's lse and the row sums D handed on through ``clone()``: they
  pass.

L5/L6 files are graded only on the case that refuses them (seconds each)."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 11  # round 15's seed

PASS_CASE = "fp32 full, q = 0 and v near 1/3"  # L5.forward's pass count over N_k = 4096
CASES = {"L5.forward": PASS_CASE, "L6.backward": "the blocks of queries and keys the backward visits",
         "L6.autograd": "the blocks they visit"}


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


def _grade(key, fn, words=None):
    if not _interpreted_here():
        pytest.skip("torch's copies are followed by the interpreter's trace")
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


# ---- finding 4: a torch copy into a view in another dtype ------------------------------------------------------
def test_r15_copies_two_pass_forward_reading_k_from_a_torch_copy_in_a_float64_buffer_is_refused():
    """11: the max pass reads ws (k's bytes, copied by torch through ``ws.view(k.dtype)``), the second pass k."""
    key, fn = load_attack(find_attack(15, "11"))
    _refused(_grade(key, fn), "loads of k (counting the copy your function made of it", "2 times each")


def test_r15_copies_dq_rebuilding_its_stats_from_a_float64_copy_of_k_is_refused():
    """12: the dQ kernel ignores lse and walks the float64 copy of k for each row's max and sum."""
    key, fn = load_attack(find_attack(15, "12"))
    _refused(_grade(key, fn), "of dq_kernel loaded", "elements of k (counting the copy",
             "Each program walks the keys once")


def test_r15_copies_whole_head_dkdv_reading_q_from_a_float64_copy_is_refused():
    """13: one dK/dV program per head, q read from a float64 copy: the half-head rule sees its pairs."""
    key, fn = load_attack(find_attack(15, "13"))
    _refused(_grade(key, fn), "dkdv_kernel", "does a whole head alone")


def _v11(*edits):
    return load_attack_variant(find_attack(15, "11"), *edits)


def test_r15_copies_an_int32_view_of_the_float64_copy_is_still_k():
    key, fn = _v11(("max_kernel[grid](q, ws, m,", "max_kernel[grid](q, ws.view(torch.int32), m,"))
    _refused(_grade(key, fn), "loads of k", "2 times each")


#: 11 as one online pass (running max, sum and output) that reads K from the float64 copy only
_ONLINE_FROM_WS = (
    ("    m = tl.load(m_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)\n",
     "    m = tl.full((BLOCK_M,), float(\"-inf\"), dtype=tl.float32)\n"
     "    k_ptr = k_ptr.to(tl.pointer_type(q_ptr.dtype.element_ty))  # k's bytes in a float64 workspace\n"),
    ("        p = tl.exp(s - m[:, None])\n        l += tl.sum(p, axis=1)\n",
     "        m_new = tl.maximum(m, tl.max(s, axis=1))\n        alpha = tl.exp(m - m_new)\n"
     "        p = tl.exp(s - m_new[:, None])\n        l = l * alpha + tl.sum(p, axis=1)\n"
     "        acc = acc * alpha[:, None]\n        m = m_new\n"),
    ("    max_kernel[grid](q, ws, m, n_q, n_k, scale, HEAD_DIM=d, BLOCK_M=32, BLOCK_N=32)\n", ""),
    ("out_kernel[grid](q, k, v, m, o, lse,", "out_kernel[grid](q, ws, v, m, o, lse,"))


def test_r15_copies_an_honest_forward_reading_k_from_its_float64_copy_passes():
    """One pass over the copy, counted in k's elements: every case passes (before, "loaded 0 of the 4096 rows of
    k": the copy was not taken for k)."""
    key, fn = _v11(*_ONLINE_FROM_WS)
    report = _grade(key, fn, "")
    assert report.passed, report.text()


# ---- finding 8: a kernel's results handed on through a torch copy ----------------------------------------------
def test_r15_copies_two_pass_forward_handing_the_max_on_through_clone_is_refused():
    """18: the row max the first kernel stores reaches the second through ``m.clone()``."""
    key, fn = load_attack(find_attack(15, "18"))
    _refused(_grade(key, fn), "loads of k (2 times each", "earlier kernel whose results it read")


def test_r15_copies_backward_handing_a_rebuilt_lse_on_through_clone_is_refused():
    """19: stats_kernel rebuilds each row's lse with a pass over K; the dK/dV and dQ kernels read its clone."""
    key, fn = load_attack(find_attack(15, "19"))
    _refused(_grade(key, fn), "the programs of stats_kernel whose results it read, computed from k")


def test_r15_copies_autograd_backward_handing_a_rebuilt_lse_on_through_clone_is_refused():
    """20: 19 behind the course's forward, in one autograd.Function."""
    key, fn = load_attack(find_attack(15, "20"))
    _refused(_grade(key, fn), "in your Function's backward", "the programs of stats_kernel whose results it read")


_M18 = "out_kernel[grid](q, k, v, m.clone(), o, lse,"


@pytest.mark.parametrize("copy", ["to float64", "copy_ into a slice", "int8 views", "clones of clones",
                                  "fill_ per element"])
def test_r15_copies_two_pass_forward_through_other_torch_copies_is_refused(copy):
    edits = {
        "to float64": [(_M18, "out_kernel[grid](q, k, v, m.to(torch.float64), o, lse,"),
                       ("    m = tl.load(m_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)\n",
                        "    m = tl.load(m_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0).to(tl.float32)\n")],
        "copy_ into a slice": [(_M18, "m2 = torch.empty_like(m)\n    m2[:, :].copy_(m)\n"
                                      "    out_kernel[grid](q, k, v, m2, o, lse,")],
        "int8 views": [(_M18, "out_kernel[grid](q, k, v, m.view(torch.int8).clone().view(torch.float32), o, lse,")],
        "clones of clones": [(_M18, "out_kernel[grid](q, k, v, m.clone().contiguous().clone(), o, lse,")],
        "fill_ per element": [(_M18, "m2 = torch.empty_like(m)\n    for i in range(n_q):\n"
                                     "        m2[0, 0, i].fill_(m[0, 0, i])\n"
                                     "    out_kernel[grid](q, k, v, m2, o, lse,")],
    }[copy]
    key, fn = load_attack_variant(find_attack(15, "18"), *edits)
    _refused(_grade(key, fn), "loads of k (2 times each", "earlier kernel whose results it read")


def test_r15_copies_a_two_pass_forward_without_the_clone_keeps_its_verdict():
    key, fn = load_attack_variant(find_attack(15, "18"), (_M18, "out_kernel[grid](q, k, v, m, o, lse,"))
    _refused(_grade(key, fn), "loads of k (2 times each", "earlier kernel whose results it read")


#: 19 without its stats kernel: the course's backward, with the forward's lse and the row sums D (computed by a
#: kernel from O and dO) handed on through clone()
_CLONED_STATS = (
    ("    stats_kernel[(triton.cdiv(n_q, block), heads_total)](q, k, lse, lse_new,",
     "    if False:\n        stats_kernel[(triton.cdiv(n_q, block), heads_total)](q, k, lse, lse_new,"),
    ("    lse = lse_new.clone()  # the rebuilt lse, handed on through a torch copy\n",
     "    lse = lse.clone()  # the forward's lse, copied\n"),
    ("        o, do, delta, n_q, HEAD_DIM=head_dim, BLOCK_M=block)\n",
     "        o, do, delta, n_q, HEAD_DIM=head_dim, BLOCK_M=block)\n    delta = delta.clone()\n"))


def test_r15_copies_an_honest_backward_with_cloned_lse_and_row_sums_passes():
    """D = rowsum(dO * O) is computed from O and dO, not from K: its clone hands nothing of K over (the skip case,
    which counts the passes over K)."""
    key, fn = load_attack_variant(find_attack(15, "19"), *_CLONED_STATS)
    report = _grade(key, fn)
    assert report.passed, report.text()
