"""Round 20's h11 accepted (2026-12-06, thirteenth session): an honest split-KV L5.forward whose slice of keys
starts at ``split * KEYS_PER_SPLIT`` in 32 bits, with ``split = tl.program_id(2)`` and KEYS_PER_SPLIT given at
run time (tests/grading_attacks_round20/h11_L5forward_splitkv.py).

The 32-bit rules (addresses and masks, :func:`gpuperf.grading.frontend.wrapping_offsets` and
:func:`~gpuperf.grading.frontend.wrapping_masks`) exempt a program id times an integer argument, each as given,
where in the launch the product's largest value, (programs on that axis - 1) times the argument, stays below the
longest dimension of the exercise's own tensors (:func:`~gpuperf.grading.frontend.slice_starts`): it starts a
slice of one dimension. The product is still the program id's value: a 32-bit product of it with a size or
stride wraps, and a head's offset ``pid_bh * N_q`` stays refused in the cases of the grade where the heads'
queries together are longer than every dimension.

Variants of h11 are graded on the case that decides each verdict only (seconds each)."""

from __future__ import annotations

from pathlib import Path

import gpuperf.kernels  # noqa: F401, I001  (the interpreter switch first, before triton is imported)
import pytest

from attack_files import attack_folder, load_attack, load_attack_variant

SEED = 11
H11 = attack_folder(20) / "h11_L5forward_splitkv.py"
H15 = next((attack_folder(20) / "excluded").glob("h15_*.py"))


def _grade(key, fn, only=None):
    from gpuperf import grading

    return grading.grade_report(key, fn, seed=SEED, stop_at_first_failure=True, only=only)


def _refused(report, *words):
    assert not report.passed, report.text()
    message = report.failures[0].message
    assert all(w in message for w in words), message
    return message


# ---- the bound, on hand-made launches ----------------------------------------------------------------------

def test_slice_starts_of_a_split_kv_launch():
    """h11 at N_k = 309: 3 splits of 128 keys (the last one short), so the largest start is 256 < 309."""
    from gpuperf.grading.frontend import slice_starts

    shapes = [(1, 2, 40, 16), (1, 2, 309, 16), (1, 2, 309, 16)]  # q, k, v
    integers = {"N_Q": 40, "N_K": 309, "KEYS_PER_SPLIT": 128, "SPLITS": 3}
    found = slice_starts((2, 2, 3), integers, shapes)
    assert ("z", "KEYS_PER_SPLIT") in found
    assert ("z", "N_K") not in found  # 2 * 309 is past N_k
    assert ("y", "N_Q") in found  # one other head: 40 < 309 (a case whose heads' queries are longer refuses it)
    assert ("y", "N_K") not in found


def test_slice_starts_is_strict_and_reads_one_dimension_not_a_count():
    from gpuperf.grading.frontend import slice_starts

    # two heads of N_q = N_k queries: the second head's offset is N_q, not below the longest dimension
    assert ("y", "N_Q") not in slice_starts((1, 2, 1), {"N_Q": 64}, [(1, 2, 64, 16), (1, 2, 64, 16)])
    # the element count of a tensor (64 * 64) is no dimension: a row times n_cols passes only below max(M, N)
    assert ("x", "n_cols") not in slice_starts((64, 1, 1), {"n_cols": 64}, [(64, 64)])
    assert ("x", "n_cols") in slice_starts((1, 1, 1), {"n_cols": 64}, [(1, 64)])  # one program: 0


def test_slice_starts_leaves_out_what_is_no_size():
    from gpuperf.grading.frontend import slice_starts

    found = slice_starts((1, 1, 4), {"neg": -5, "flag": True, "scale": 0.5, "K": 2}, [(8, 16)])
    assert ("z", "K") in found  # 3 * 2 < 16
    assert not any(name in ("neg", "flag", "scale") for _, name in found)
    assert slice_starts((1, 1, 4), {"K": 2}, []) == frozenset()  # no tensor of the exercise: no dimension


# ---- the rules on TTIR ---------------------------------------------------------------------------------------

_TTIR = """module {{
  tt.func public @k(%x_ptr: !tt.ptr<f32>, %KPS: i32, %STRIDE: i32) attributes {{noinline = false}} {{
    %split = tt.get_program_id z : i32
    %lo = arith.muli %split, %KPS : i32
{body}
    %p = tt.addptr %x_ptr, %off : !tt.ptr<f32>, i32
    %v = tt.load %p : !tt.ptr<f32>
    tt.return
  }}
}}
"""


@pytest.mark.parametrize("body,exempt,wraps", [
    ("    %off = arith.addi %lo, %lo : i32", frozenset({("z", "KPS")}), False),
    ("    %off = arith.addi %lo, %lo : i32", frozenset(), True),
    ("    %off = arith.addi %lo, %lo : i32", frozenset({("y", "KPS")}), True),  # another axis
    ("    %off = arith.addi %lo, %lo : i32", frozenset({("z", "STRIDE")}), True),  # another argument
    ("    %off = arith.muli %lo, %STRIDE : i32", frozenset({("z", "KPS"), ("z", "STRIDE")}), True),
])
def test_the_address_rule_exempts_the_slice_start_and_not_its_product(body, exempt, wraps):
    from gpuperf.grading.frontend import wrapping_offsets

    assert wrapping_offsets(_TTIR.format(body=body), within_head=True, exempt=exempt) is wraps


# ---- the files ----------------------------------------------------------------------------------------------

def test_h11_passes():
    key, fn = load_attack(H11)
    report = _grade(key, fn)
    assert report.results and report.passed, report.text()


def test_h15_the_split_in_64_bits_still_passes():
    key, fn = load_attack(H15)
    report = _grade(key, fn, only=lambda label: "N_k=1 " in label or "N_q=309" in label)
    assert report.results and report.passed, report.text()


def _edits_split_base_times_a_stride():
    """The split's first key times a row stride given at run time, in 32 bits: ``lo * STRIDE_KN``."""
    load = "{p}_ptr + head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]"
    new = "{p}_ptr + head * N_K * HEAD_DIM + lo * STRIDE_KN + (keys - lo)[:, None] * HEAD_DIM + dims[None, :]"
    return [(load.format(p=p), new.format(p=p)) for p in "kv"] + [
        ("KEYS_PER_SPLIT, SPLITS,\n", "KEYS_PER_SPLIT, SPLITS, STRIDE_KN,\n"),
        ("per_split, splits, HEAD_DIM=head_dim,", "per_split, splits, head_dim, HEAD_DIM=head_dim,")]


def _deciding_case():
    """The CPU's interpreted case of 309 queries (how the queries are split); on a GPU, where its label names no
    case (other sizes, and interpreted only with GPUPERF_GRADING_INTERPRET_ON_GPU=1: an H200, 2026-12-06), every
    case: the 32-bit rules read each compiled kernel's TTIR there too."""
    import torch

    return (lambda label: "N_q=309" in label) if not torch.cuda.is_available() else None


def test_the_split_start_times_a_stride_in_32_bits_is_refused():
    key, fn = load_attack_variant(H11, *_edits_split_base_times_a_stride())
    _refused(_grade(key, fn, only=_deciding_case()), "32-bit product")


def test_the_split_start_times_a_stride_in_64_bits_passes():
    """The control of the test above: the same kernel with the split's first key widened before the stride."""
    edits = _edits_split_base_times_a_stride()
    edits[0] = (edits[0][0], edits[0][1].replace("lo * STRIDE_KN", "lo.to(tl.int64) * STRIDE_KN"))
    edits[1] = (edits[1][0], edits[1][1].replace("lo * STRIDE_KN", "lo.to(tl.int64) * STRIDE_KN"))
    key, fn = load_attack_variant(H11, *edits)
    report = _grade(key, fn, only=_deciding_case())
    assert report.results and report.passed, report.text()


def test_a_head_offset_in_32_bits_is_refused():
    """``head = tl.program_id(1)`` in 32 bits: ``head * N_Q`` passes in a launch where N_k is longer than all
    heads' queries, and is refused in the grade's cases of two heads or more of N_q >= N_k queries."""
    edit = ("    head = tl.program_id(1).to(tl.int64)\n    split", "    head = tl.program_id(1)\n    split")
    key, fn = load_attack_variant(H11, edit)
    _refused(_grade(key, fn), "32-bit product")
