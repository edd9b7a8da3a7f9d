"""Round 14 (2026-12-05), r14alias's part: findings 4, 5 and 7 of tests/grading_attacks_round14/REPORT.md, a view
of x, k or C in another dtype passed to a kernel first and never read.

- The tracer booked each lane of a load or store to the first argument, in launch order, whose bytes held it, and
  counted it in that argument's elements; the graders know an argument as x or k only where it starts at the
  tensor's first byte with its element size. ``xw = x.view(torch.int64)`` or ``kw = k.view(torch.int16)`` passed
  first took every lane of x or k: L3 counted two passes as one (09, 10), L5 and L6 saw no pass and no visit of K
  in the launch that had it (11, 12, 14, 15), and L4's one-program check found no launch that stored C (16).
- Now a lane is booked by the grader's tensors: an argument that is a view of one of them in another dtype is
  that tensor (its extent and element size), where two arguments hold an address the grader's tensor itself, then
  the argument of the pointer's own element type, takes the lane; and the launches that wrote C are found by the
  addresses they wrote. 09, 10 and 16 are tests in tests/test_grading_round14.py.
- Variants: the kernel reading x or k, or storing C, through the alias itself (a pointer cast in the kernel), and a
  same-dtype slice of k passed first, are refused too; the same kernels without the alias keep their verdict; an
  honest kernel with an unread alias argument still passes.

L5/L6 files are graded only on the case that refuses them."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 11  # round 14's seed

#: The case that refuses each file's control (the file without its alias).
PASS_CASE = "fp32 full, q = 0 and v near 1/3"  # L5.forward's pass count over N_k = 4096
SKIP_CASES = {"L5.causal": "the key blocks it visits",
              "L6.backward": "the blocks of queries and keys the backward visits"}
SMALLER_X = "torch.int16 if x.element_size() == 4 else torch.int8"
SMALLER_K = "torch.int16 if k.element_size() == 4 else torch.int8"


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


def _grade(key, fn, words=None):
    if not _interpreted_here():
        pytest.skip("the lanes of each load are booked by the interpreter")
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=SEED, only=None if words is None else lambda label: words in label)
    assert report.results, f"{key}: no case says {words!r}"
    return report


def _refused(report, *words):
    assert not report.passed, report.text()
    message = report.failures[0].message
    assert all(w in message for w in words), message
    return message


# ---- the files ----------------------------------------------------------------------------------------------
def test_r14_alias_two_pass_forward_with_an_int16_view_of_k_is_refused():
    """11: K read twice (a max kernel, then a sum-and-output kernel that has kw first)."""
    key, fn = load_attack(find_attack(14, "11"))
    _refused(_grade(key, fn, PASS_CASE), "loads of k", "2 times each")


def test_r14_alias_causal_two_pass_with_an_int16_view_of_k_is_refused_for_its_visits():
    """15: 11 in the causal forward, skipping nothing: refused as its control is, for the blocks it visits."""
    key, fn = load_attack(find_attack(14, "15"))
    _refused(_grade(key, fn, SKIP_CASES[key]), "Skip them", "visited key blocks", "out_kernel")


def test_r14_alias_dq_two_pass_with_an_int16_view_of_k_is_refused_for_its_visits():
    """12: the dQ kernel (kw first) rebuilds each row's max and sum with a pass over K and skips nothing."""
    key, fn = load_attack(find_attack(14, "12"))
    _refused(_grade(key, fn, SKIP_CASES[key]), "Skip them", "every key comes after every query", "dq_kernel")


def test_r14_alias_whole_head_dkdv_with_an_int16_view_of_k_is_refused():
    """14: one program per head does every block of keys (kw first): the whole-head rule sees its pairs again."""
    key, fn = load_attack(find_attack(14, "14"))
    _refused(_grade(key, fn, SKIP_CASES[key]), "does a whole head alone")


# ---- variants: the alias read through, a slice, no alias ----------------------------------------------------
def _v09(*edits):
    return load_attack_variant(find_attack(14, "09"), *edits)


_X_ROW = ("    x_row = x_ptr + row * x_row_stride\n    y_row = y_ptr + row * y_row_stride\n    lanes",
          "    x_row = x_ptr.to(y_ptr.dtype) + row * x_row_stride\n    y_row = y_ptr + row * y_row_stride\n    lanes")
_K_LOAD = ("        k = tl.load(k_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :],\n"
           "                    mask=keys[:, None] < N_K, other=0.0)\n        v = tl.load(")


def test_r14_alias_softmax_reading_x_only_through_a_smaller_view_counts_x_in_its_own_elements():
    """09 with ``x.view(torch.int16)`` (fp16: int8) as the only x and a pointer cast back in the kernel: the lanes
    are x's, counted in x's elements (2 times each; it was 4 times, the int16 elements)."""
    key, fn = _v09(("    return x[:, :c].view(torch.int64)", f"    return x.view({SMALLER_X})"),
                   ("two_pass_kernel[(n_rows,)](xw, x, y,", "two_pass_kernel[(n_rows,)](xw, xw, y,"), _X_ROW)
    _refused(_grade(key, fn), "loaded", "2 times each")


def test_r14_alias_a_softmax_without_the_alias_keeps_its_verdict():
    key, fn = _v09(("two_pass_kernel[(n_rows,)](xw, x, y,", "two_pass_kernel[(n_rows,)](x, x, y,"))
    _refused(_grade(key, fn), "loaded", "2 times each")


def test_r14_alias_online_softmax_without_the_alias_keeps_its_verdict():
    key, fn = load_attack_variant(find_attack(14, "10"), ("three_pass_kernel[(n_rows,)](xw, x, y,",
                                                          "three_pass_kernel[(n_rows,)](x, x, y,"))
    _refused(_grade(key, fn), "loaded", "3 times each")


def test_r14_alias_an_honest_fused_softmax_with_an_unread_int64_view_of_x_passes():
    """09's fused kernel, given the int64 view first wherever it exists: every case passes."""
    key, fn = _v09(("def fused_kernel(x_ptr, y_ptr,", "def fused_kernel(xw_ptr, x_ptr, y_ptr,"),
                   ("fused_kernel[(n_rows,)](x, y,", "fused_kernel[(n_rows,)](x, x, y,"),
                   ("two_pass_kernel[(n_rows,)](xw, x, y, n_cols, x.stride(0), y.stride(0), BLOCK=128)",
                    "fused_kernel[(n_rows,)](xw, x, y, n_cols, x.stride(0), y.stride(0), "
                    "BLOCK=triton.next_power_of_2(n_cols))"))
    report = _grade(key, fn)
    assert report.passed, report.text()


def test_r14_alias_one_program_matmul_storing_c_only_through_its_alias_is_refused():
    """16 with C's stores made through ``cw`` (a pointer cast in the kernel) and C itself not passed: the launch
    that wrote C is found by the addresses it wrote."""
    key, fn = load_attack_variant(find_attack(14, "16"),
                                  ("tl.store(c_ptr + rows", "tl.store(cw_ptr.to(a_ptr.dtype) + rows"),
                                  ("acc.to(c_ptr.dtype.element_ty)", "acc.to(a_ptr.dtype.element_ty)"),
                                  ("(cw, a, b, c, M, N, K,", "(cw, a, b, cw, M, N, K,"))
    _refused(_grade(key, fn), "1 program(s) of your kernel matmul_kernel wrote", "elements of C")


def test_r14_alias_a_one_program_matmul_without_the_alias_keeps_its_verdict():
    key, fn = load_attack_variant(find_attack(14, "16"), ("(cw, a, b, c, M, N, K,", "(c, a, b, c, M, N, K,"))
    _refused(_grade(key, fn), "1 program(s) of your kernel matmul_kernel wrote", "elements of C")


def test_r14_alias_an_honest_matmul_with_an_unread_view_of_c_passes():
    """16 with a program per tile of C (the grid of the exercise), still given ``cw`` first: every case passes."""
    key, fn = load_attack_variant(
        find_attack(14, "16"),
        ("    for t in range(0, tiles_m * tiles_n):  # every tile of C, in this one program\n",
         "    for t in range(tl.program_id(0), tl.program_id(0) + 1):  # the program's own tile\n"),
        ("matmul_kernel[(1,)](cw,", "matmul_kernel[(triton.cdiv(M, block_m) * triton.cdiv(N, block_n),)](cw,"))
    report = _grade(key, fn)
    assert report.passed, report.text()


@pytest.mark.parametrize("alias", ["read through", "same-dtype slice"])
def test_r14_alias_two_pass_forward_variants_are_refused(alias):
    """11 with the second pass reading K only through ``kw`` (a pointer cast in the kernel), or with ``kw`` a
    same-dtype slice of k (``k[:, :, 1:]``) passed first: K is read twice."""
    through = _K_LOAD.replace("tl.load(k_ptr + head", "tl.load(k_ptr.to(q_ptr.dtype) + head")
    edits = {"read through": [(_K_LOAD, through), ("out_kernel[grid](kw, q, k, v,", "out_kernel[grid](kw, q, kw, v,")],
             "same-dtype slice": [(f"    kw = k.view({SMALLER_K})\n", "    kw = k[:, :, 1:]\n")]}[alias]
    key, fn = load_attack_variant(find_attack(14, "11"), *edits)
    _refused(_grade(key, fn, PASS_CASE), "loads of k", "2 times each")


def test_r14_alias_a_two_pass_forward_without_the_alias_keeps_its_verdict():
    key, fn = load_attack_variant(find_attack(14, "11"),
                                  ("out_kernel[grid](kw, q, k, v,", "out_kernel[grid](k, q, k, v,"))
    _refused(_grade(key, fn, PASS_CASE), "loads of k", "2 times each")


def test_r14_alias_fa2_backward_with_an_unread_view_of_k_passes_the_visits():
    """h04 (FlashAttention-2's one-kernel backward) with ``k.view(torch.int16)`` as its first argument, never read:
    the causal case that counts the blocks it visits still passes."""
    key, fn = load_attack_variant(
        find_attack(14, "h04"),
        ("def fa2_bwd_kernel(q_ptr,", "def fa2_bwd_kernel(kw_ptr, q_ptr,"),
        ("        q, k, v, do, lse, delta, dk, dv, dq_acc,",
         f"        k.view({SMALLER_K}), q, k, v, do, lse, delta, dk, dv, dq_acc,"))
    report = _grade(key, fn, SKIP_CASES[key])
    assert report.passed, report.text()


# ---- a kernel's copy made through views in another dtype ------------------------------------------------------
_COPY_LAUNCH = ("        copy_kernel[(triton.cdiv(k.numel(), 512),)](k, kc, k.numel(), BLOCK=512)",
                "        small = torch.int16 if k.element_size() == 4 else torch.int8\n"
                "        copy_kernel[(triton.cdiv(2 * k.numel(), 512),)](k.view(small), kc.view(small), "
                "2 * k.numel(), BLOCK=512)")


def test_r14_alias_a_kernel_copy_of_k_made_through_int16_views_is_a_copy():
    """Round 13's 07 with its copy kernel run on ``k.view(torch.int16)`` and ``kc.view(torch.int16)``, two lanes per
    element of k: kc is still a copy of k (an Image in k's elements), and the hidden blocks read from it are
    refused."""
    key, fn = load_attack_variant(find_attack(13, "07"), _COPY_LAUNCH)
    _refused(_grade(key, fn, SKIP_CASES[key]), "Skip them", "visited key blocks", "of fwd_kernel")


def test_r14_alias_an_honest_forward_reading_its_int16_kernel_copy_of_k_passes():
    """The same copy, with a forward that stops at its diagonal and reads every block of keys from it: every
    case."""
    key, fn = load_attack_variant(
        find_attack(13, "07"), _COPY_LAUNCH,
        ("        end = tl.minimum(N_K, N_Q)  # no per-block skipping",
         "        end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)"),
        ("            k = tl.load(k_head + keys[:, None]", "            k = tl.load(kc_head + keys[:, None]"))
    report = _grade(key, fn)
    assert report.passed, report.text()


@pytest.mark.parametrize("copy", ["clone", "copy_"])
def test_r14_alias_a_torch_copy_of_k_made_through_int16_views_is_a_copy(copy):
    """07 with kc made by torch through int16 views (``k.view(torch.int16).clone().view(k.dtype)``, or
    ``kc.view(torch.int16).copy_(k.view(torch.int16))``): a copy of k, replayed in k's elements; refused."""
    made = {"clone": "        kc = k.view(small).clone().view(k.dtype)",
            "copy_": "        kc.view(small).copy_(k.view(small))"}[copy]
    key, fn = load_attack_variant(
        find_attack(13, "07"),
        (_COPY_LAUNCH[0], "        small = torch.int16 if k.element_size() == 4 else torch.int8\n" + made))
    _refused(_grade(key, fn, SKIP_CASES[key]), "Skip them", "visited key blocks", "of fwd_kernel")
