"""Round 13 (2026-12-05), r13copies's part: findings 5, 7 and 8 of tests/grading_attacks_round13/REPORT.md, copies
of the grader's tensors made by the learner's own kernels.

- 07 (L5.causal) and 11 (L6.backward): the blocks past the diagonal are read from a copy of k (and q) that a plain
  copy kernel of the learner's wrote first; the skip checks knew only torch's copies. The tracer now records the
  lanes a kernel stores as element-for-element copies of loaded elements (``Launch.copies``), and
  ``_kernel_images`` makes them :class:`Image` s of the tensor they copy, with the row of each element: their
  loads are loads of those rows, and both files are refused with the ordinary skip message.
- h04 and h03 (L6.backward, honest): the learner's own gather kernel in place of ``.contiguous()``.
  ``_tile_products_check`` merged the tensors one kernel argument took across launches (q's and k's copies as
  one): now a grader's tensor, or a copy of one, is that tensor, and only the learner's own memory is merged by
  argument. ``_scratch_check`` charged the five O(N d) copies as scratch: a kernel's copy of an input is not.
- Variants: a copy that is transposed or has its rows reversed is refused in the skip cases (its loads' first and
  last addresses need not bound the rows they hold); a copy computed lane by lane (``x * 1.0``) is a copy; a copy
  of k in a scratch buffer that the scores then overwrite is still refused as scratch, and the copy alone is not.
"""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 20261205

#: The case of each exercise that counts the blocks a causal kernel visits.
SKIP_CASES = {"L5.causal": "the key blocks it visits",
              "L6.backward": "the blocks of queries and keys the backward visits"}


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


def _grade(key, fn, only=None):
    if not _interpreted_here():
        pytest.skip("copies made by kernels are followed by the interpreter")
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=SEED, only=only)
    assert report.results, f"{key}: no case graded"
    return report


def _skip_case(key):
    return lambda label: SKIP_CASES[key] in label


def _refused(report, *words):
    assert not report.passed, report.text()
    message = report.failures[0].message
    assert all(w in message for w in words), message
    return message


# ---- the files ----------------------------------------------------------------------------------------------
def test_r13_copies_forward_reading_hidden_blocks_from_a_kernel_copy_of_k_is_refused():
    """07: the blocks past the diagonal from kc, which copy_kernel wrote: refused for the visits."""
    key, fn = load_attack(find_attack(13, "07"))
    _refused(_grade(key, fn, _skip_case(key)), "Skip them", "visited key blocks", "of fwd_kernel")


def test_r13_copies_backward_reading_hidden_blocks_from_kernel_copies_is_refused_by_the_skip_check():
    """11: 07 in the backward (copies of q and of k by one copy kernel): refused for the pairs it visits, no
    longer by the tile products."""
    key, fn = load_attack(find_attack(13, "11"))
    report = _grade(key, fn)
    assert not report.passed, report.text()
    assert all("as tl.dot" not in r.message for r in report.failures), report.text()
    _refused(_grade(key, fn, _skip_case(key)), "Skip them", "every key comes after every query")


@pytest.mark.parametrize("tag", ["h03", "h04"])
def test_r13_copies_backward_with_its_own_gather_kernel_passes(tag):
    """h04: q and k through the learner's gather kernel; h03: all five inputs. Every case."""
    key, fn = load_attack(find_attack(13, tag))
    report = _grade(key, fn)
    assert report.passed, report.text()


# ---- variants of 07 -----------------------------------------------------------------------------------------
_SIG = "def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):"
_COPY = ("    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)\n"
         "    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)")
_KC_LOAD = ("            k = tl.load(kc_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, "
            "other=0.0)")
_LAUNCH = "        copy_kernel[(triton.cdiv(k.numel(), 512),)](k, kc, k.numel(), BLOCK=512)"
_BIGGER = ("        kc = torch.empty_like(k)\n",
           "        kc = torch.empty(max(k.numel(), batch * heads * n_q * n_k), dtype=k.dtype, device=k.device)\n")


def _scrambled(dst_row: str, kc_load: str):
    """07 with a copy kernel that writes each head's element (r, c) of k at ``dst_row`` (r, c, N, D) and a forward
    that reads the hidden blocks back with ``kc_load``."""
    return load_attack_variant(
        find_attack(13, "07"),
        (_SIG, "def copy_kernel(src_ptr, dst_ptr, n, N, D, BLOCK: tl.constexpr):"),
        (_COPY, "    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)\n"
                "    h, r, c = offs // (N * D), (offs // D) % N, offs % D\n"
                f"    tl.store(dst_ptr + h * N * D + {dst_row}, tl.load(src_ptr + offs, mask=offs < n), "
                "mask=offs < n)"),
        (_KC_LOAD, f"            k = tl.load({kc_load}, mask=keys[:, None] < N_K, other=0.0)"),
        (_LAUNCH, "        copy_kernel[(triton.cdiv(k.numel(), 512),)](k, kc, k.numel(), n_k, d, BLOCK=512)"))


@pytest.mark.parametrize("layout", ["transposed", "rows reversed"])
def test_r13_copies_a_copy_with_its_rows_out_of_order_is_refused(layout):
    """A copy kernel that writes k transposed, or each head's rows last to first, and a forward that reads the
    hidden blocks from it: the grader cannot read a block's rows from its addresses there, and says so."""
    dst_row, kc_load = {
        "transposed": ("c * N + r", "kc_head + dims[None, :] * N_K + keys[:, None]"),
        "rows reversed": ("(N - 1 - r) * D + c", "kc_head + (N_K - 1 - keys[:, None]) * HEAD_DIM + dims[None, :]"),
    }[layout]
    key, fn = _scrambled(dst_row, kc_load)
    _refused(_grade(key, fn, _skip_case(key)), "copy of k that your kernel copy_kernel wrote", "out of their order")


def test_r13_copies_a_copy_computed_lane_by_lane_is_a_copy():
    """07 with ``x * 1.0`` in the copy kernel: still a copy of k, still refused for the visits."""
    key, fn = load_attack_variant(find_attack(13, "07"), ("mask=offs < n), mask", "mask=offs < n) * 1.0, mask"))
    _refused(_grade(key, fn, _skip_case(key)), "Skip them", "visited key blocks")


def test_r13_copies_a_copy_whose_elements_mix_two_rows_is_refused():
    """07 with ``k[i] + 0 * k[n - 1 - i]`` in the copy kernel: each element of kc was computed from two rows of k
    (no row map), so it is refused as a copy out of order, not passed as memory the grader cannot read."""
    key, fn = load_attack_variant(
        find_attack(13, "07"),
        ("tl.load(src_ptr + offs, mask=offs < n), mask",
         "tl.load(src_ptr + offs, mask=offs < n) + 0.0 * tl.load(src_ptr + n - 1 - offs, mask=offs < n), mask"))
    _refused(_grade(key, fn, _skip_case(key)), "copy of k that your kernel copy_kernel wrote", "two rows")


def test_r13_copies_a_forward_that_skips_and_reads_only_its_kernel_copy_of_k_passes():
    """07 made honest: each program stops at its diagonal, and every block of keys comes from copy_kernel's
    copy of k (before, the grader found no walk of k in it). Every case."""
    key, fn = load_attack_variant(
        find_attack(13, "07"),
        ("        end = tl.minimum(N_K, N_Q)  # no per-block skipping",
         "        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)"),
        ("            k = tl.load(k_head + keys[:, None]", "            k = tl.load(kc_head + keys[:, None]"))
    report = _grade(key, fn)
    assert report.passed, report.text()


def _large_fp32(label):
    return "fp32 causal, large scores" in label


def test_r13_copies_scores_stored_over_a_kernel_copy_of_k_are_scratch():
    """k copied into a buffer of N_q x N_k per head, which the forward then fills with its score tiles: the copy
    is not scratch, the scores are."""
    key, fn = load_attack_variant(
        find_attack(13, "07"), (_KC_LOAD, _KC_LOAD.replace("kc_head", "k_head")), _BIGGER,
        ('        s = tl.where(visible, s, float("-inf"))\n',
         '        s = tl.where(visible, s, float("-inf"))\n'
         "        tl.store(kc_ptr + head * N_Q * N_K + rows[:, None] * N_K + keys[None, :], s,\n"
         "                 mask=(rows[:, None] < N_Q) & (keys[None, :] < N_K))\n"))
    _refused(_grade(key, fn, _large_fp32), "neither an input nor an output nor a copy of an input",
             "never writes the N_q x N_k scores")


def test_r13_copies_a_kernel_copy_of_k_into_a_larger_buffer_is_no_scratch():
    """The control: the same copy, no scores stored over it."""
    key, fn = load_attack_variant(find_attack(13, "07"), (_KC_LOAD, _KC_LOAD.replace("kc_head", "k_head")), _BIGGER)
    report = _grade(key, fn, _large_fp32)
    assert report.passed, report.text()


# ---- the tracer ----------------------------------------------------------------------------------------------
def test_r13_copies_tracer_records_copies_lane_by_lane_only():
    """A store of a loaded value (cast or times a constant) is a copy of the lanes it loaded (a masked-off lane,
    which holds ``other``, is none); a value that depends on a reduction is not; a launch that only copies is
    marked."""
    import numpy as np
    import torch
    import triton
    import triton.language as tl

    from gpuperf.grading.algorithm import traced

    @triton.jit
    def kernel(x_ptr, y_ptr, a_ptr, b_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n - 1, other=0.0)
        tl.store(a_ptr + offs, (x * 2.0).to(tl.float16), mask=offs < n)
        tl.store(b_ptr + offs, x + tl.sum(tl.load(y_ptr + offs, mask=offs < n)), mask=offs < n)

    @triton.jit
    def copy(x_ptr, a_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(a_ptr + BLOCK - 1 - offs, tl.load(x_ptr + offs))

    x, y = torch.arange(8, dtype=torch.float32), torch.ones(8)
    a, b = torch.empty(8, dtype=torch.float16), torch.empty(8)
    import contextlib

    from gpuperf.grading.exercises import interpreted_launches

    # CPU tensors: on a GPU machine the launches run through the interpreter, as the grader's traced cases do
    with traced() as trace, (interpreted_launches() if torch.cuda.is_available() else contextlib.nullcontext()):
        kernel[(1,)](x, y, a, b, 8, BLOCK=8)
        copy[(1,)](x, b, BLOCK=8)
    first, second = trace.launches
    (dst, src), = first.copies
    assert first.copied == 7 and not first.copy_only
    assert np.array_equal((dst.astype(np.int64) - a.data_ptr()) // 2, np.arange(7))
    assert np.array_equal((src.astype(np.int64) - x.data_ptr()) // 4, np.arange(7))
    (dst, src), = second.copies
    assert second.copy_only
    assert np.array_equal((dst.astype(np.int64) - b.data_ptr()) // 4, 7 - (src.astype(np.int64) - x.data_ptr()) // 4)
