"""Round 5 of issue 30, the fixes of F12, F13, F14 and h07 (tests/grading_attacks_round5/REPORT's flaws): the
attacker's files are graded in tests/test_grading_domain.py; here, variants of them that the same fixes must
refuse whatever the seed, and correct solutions written the way the fixes must still accept."""

from __future__ import annotations

import math
import sys

import pytest

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before the kernels below are defined)
import torch
import triton
import triton.language as tl

from attack_files import find_attack, load_attack_variant
from gpuperf import grading

SEEDS = (7, 20261205)


def _interpreted_here() -> bool:
    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


def _interpreter_only(what):
    if not _interpreted_here():
        pytest.skip(f"{what}: counted by the Triton interpreter only (the CPU run of this test)")


def _variant(stem: str, *edits: tuple[str, str]):
    """The exercise and the function of attack file ``stem`` with each (old, new) replaced once."""
    return load_attack_variant(find_attack(5, stem), *edits)


def _rejected(key, fn, needle, seed, only=None):
    report = grading.grade_report(key, fn, seed=seed, only=only, stop_at_first_failure=True)
    text = report.text()
    assert not report.passed, f"{key} accepted (seed {seed}):\n{text}"
    assert needle in text, f"{key} (seed {seed}) does not say {needle!r}:\n{text}"


def _passes(key, fn, seed, only=None):
    report = grading.grade_report(key, fn, seed=seed, only=only)
    assert report.passed, f"{key} refused (seed {seed}):\n{report.text()}"


# ---- F13: scratch written with atomics --------------------------------------------------------------------


_DS = ("tl.atomic_add(ds_ptr + head * N_Q * N_K + rows.to(tl.int64)[:, None] * N_K + keys[None, :], ds, "
       "mask=visible)")


@pytest.mark.parametrize("seed", SEEDS)
def test_f13_ds_kept_in_scratch_by_two_atomic_adds_is_refused(seed):
    """37 with dS added in two halves (even keys, odd keys): the elements updated are counted once each."""
    _interpreter_only("scratch written by atomics")
    where = "ds_ptr + head * N_Q * N_K + rows.to(tl.int64)[:, None] * N_K + keys[None, :]"
    key, fn = _variant("37", (_DS, f"tl.atomic_add({where}, ds, mask=visible & (keys[None, :] % 2 == 0))\n"
                                   f"        tl.atomic_add({where}, ds, mask=visible & (keys[None, :] % 2 == 1))"))
    _rejected(key, fn, "neither an input nor an output", seed)


_HALF = "tl.atomic_add(s_ptr + head * N_Q * N_K + rows[:, None] * N_K + keys[None, :], s, mask=inside)"


@pytest.mark.parametrize("seed", SEEDS[:1])
def test_f13_scores_kept_half_by_atomics_half_by_stores_are_refused(seed):
    """38 with even keys added atomically and odd keys stored: the two kinds of write add up."""
    _interpreter_only("scratch written by atomics")
    where = "s_ptr + head * N_Q * N_K + rows[:, None] * N_K + keys[None, :]"
    key, fn = _variant("38", (_HALF, f"tl.atomic_add({where}, s, mask=inside & (keys[None, :] % 2 == 0))\n"
                                     f"        tl.store({where}, s, mask=inside & (keys[None, :] % 2 == 1))"))
    _rejected(key, fn, "neither an input nor an output", seed)


_BUFFERS = ("    o = torch.empty_like(q)\n    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, "
            "device=q.device)\n    s = torch.zeros((batch * heads, n_q, n_k), dtype=torch.float32, "
            "device=q.device)\n")


def test_f13_scores_kept_in_the_rest_of_an_outputs_storage_are_refused():
    """38 with S in the same storage as o, past o's end: only the output itself is not scratch."""
    _interpreter_only("scratch written by atomics")
    key, fn = _variant("38", (_BUFFERS, "    buf = torch.zeros(q.numel() + batch * heads * n_q * n_k, "
                                        "dtype=torch.float32, device=q.device)\n"
                                        "    o = buf[:q.numel()].view(q.shape)\n"
                                        "    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, "
                                        "device=q.device)\n"
                                        "    s = buf[q.numel():].view(batch * heads, n_q, n_k)\n"))
    _rejected(key, fn, "neither an input nor an output", SEEDS[0], only=lambda label: "fp32" in label)


@triton.jit
def _row_dot(o_ptr, do_ptr, delta_ptr, N_Q, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    offsets = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
    o = tl.load(o_ptr + offsets, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + offsets, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    tl.store(delta_ptr + head * N_Q + rows, tl.sum(o * do, axis=1), mask=rows < N_Q)


@triton.jit
def _fused_backward(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, dq_acc_ptr, N_Q, N_K,
                    scale, CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
    # one program per block of keys: dK and dV stored, its share of dQ added atomically to an fp32 buffer
    head = tl.program_id(1).to(tl.int64)
    block_n = tl.program_id(0)
    keys = block_n * BLOCK_N + tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    kv_offsets = head * N_K * HEAD_DIM + keys[:, None] * HEAD_DIM + dims[None, :]
    k = tl.load(k_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
    v = tl.load(v_ptr + kv_offsets, mask=keys[:, None] < N_K, other=0.0)
    dk = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    start = 0
    if CAUSAL:
        start = (block_n * BLOCK_N // BLOCK_M) * BLOCK_M
    for m0 in range(start, N_Q, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        q_offsets = head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
        q = tl.load(q_ptr + q_offsets, mask=rows[:, None] < N_Q, other=0.0)
        do = tl.load(do_ptr + q_offsets, mask=rows[:, None] < N_Q, other=0.0)
        lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
        delta = tl.load(delta_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
        visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision=PRECISION)
        dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)
        ds = p * (dp - delta[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision=PRECISION)
        dq_part = tl.dot(ds.to(k.dtype), k, input_precision=PRECISION) * scale
        tl.atomic_add(dq_acc_ptr + q_offsets, dq_part, mask=rows[:, None] < N_Q)
    tl.store(dk_ptr + kv_offsets, (dk * scale).to(dk_ptr.dtype.element_ty), mask=keys[:, None] < N_K)
    tl.store(dv_ptr + kv_offsets, dv.to(dv_ptr.dtype.element_ty), mask=keys[:, None] < N_K)


@triton.jit
def _convert(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src_ptr + offsets, mask=offsets < n, other=0.0)
    tl.store(dst_ptr + offsets, x.to(dst_ptr.dtype.element_ty), mask=offsets < n)


def backward_dq_by_atomics(q, k, v, o, lse, do, causal=False):
    """A fused backward: dQ accumulated by every block of keys with atomics into an fp32 buffer of dQ's
    size (scratch within the budget), converted to dq's type by a second launch."""
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))
    lse = lse.float().contiguous()
    delta = torch.empty_like(lse)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    dq_acc = torch.zeros(q.shape, dtype=torch.float32, device=q.device)
    block = 32
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    scale = 1.0 / math.sqrt(head_dim)
    _row_dot[(triton.cdiv(n_q, block), batch * heads)](o, do, delta, n_q, HEAD_DIM=head_dim, BLOCK_M=block)
    _fused_backward[(triton.cdiv(n_k, block), batch * heads)](
        q, k, v, do, lse, delta, dk, dv, dq_acc, n_q, n_k, scale, CAUSAL=causal, HEAD_DIM=head_dim,
        BLOCK_M=block, BLOCK_N=block, PRECISION=precision)
    _convert[(triton.cdiv(dq.numel(), 1024),)](dq_acc, dq, dq.numel(), BLOCK=1024)
    return dq, dk, dv


def test_f13_a_backward_accumulating_dq_by_atomics_in_an_fp32_buffer_passes():
    """The fp32 dQ buffer (B H N_q d elements, dq fp16 or fp32) stays within the scratch budget, 1.5 times
    the outputs' elements: the atomics count the elements they update once, not once per block of keys."""
    _passes("L6.backward", backward_dq_by_atomics, SEEDS[0])


# ---- F14: sizes and strides given as tl.constexpr ---------------------------------------------------------

_ROW = "    row = tl.program_id(0)\n"


@pytest.mark.parametrize("seed", SEEDS)
def test_f14_a_constexpr_stride_copied_to_a_local_with_a_32_bit_row_is_refused(seed):
    """40 with the stride passed through a local (``stride = x_row_stride * 1``) and given by keyword."""
    key, fn = _variant("40", (_ROW, _ROW + "    stride = x_row_stride * 1\n"),
                       ("x_ptr + row * x_row_stride", "x_ptr + row * stride"),
                       ("x.stride(0), y.stride(0), BLOCK=block", "x_row_stride=x.stride(0), "
                                                                "y_row_stride=y.stride(0), BLOCK=block"))
    _rejected(key, fn, "as a tl.constexpr", seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_f14_a_constexpr_stride_with_a_64_bit_row_passes(seed):
    """40 with the row widened before the product: a constant stride is fine then (and BLOCK, a block's
    shape, multiplies nothing)."""
    key, fn = _variant("40", (_ROW, "    row = tl.program_id(0).to(tl.int64)\n"))
    _passes(key, fn, seed)


def test_f14_the_outer_product_with_64_bit_rows_and_a_constexpr_stride_passes():
    key, fn = _variant("41", ("rows = tl.program_id(0) * BLOCK_M", "rows = tl.program_id(0).to(tl.int64) * BLOCK_M"))
    _passes(key, fn, SEEDS[0])


@triton.jit
def _tile_rows(start, BLOCK: tl.constexpr):
    return start + tl.arange(0, BLOCK)


@triton.jit
def _shapes_through_a_helper(x_ptr, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr, WIDE: tl.constexpr,
                             HALF: tl.constexpr):
    rows = _tile_rows(tl.program_id(0) * BLOCK, BLOCK)
    twice: tl.constexpr = HALF * 2
    cols = tl.arange(0, twice)
    tl.store(x_ptr + rows[:, None] * STRIDE + cols[None, :], tl.zeros((BLOCK, twice), tl.float32),
             mask=tl.sum(tl.zeros((BLOCK, WIDE), tl.int32), axis=1)[:, None] < n)


def test_f14_block_shapes_are_told_from_strides_through_helpers_and_locals():
    from gpuperf.grading import frontend

    assert frontend.shape_names(_shapes_through_a_helper.fn) == {"BLOCK", "WIDE", "HALF"}
    x = torch.zeros(64)
    strides = frontend.stride_constexprs(_shapes_through_a_helper.fn, (x, 64, 32),
                                         {"BLOCK": 16, "WIDE": 4, "HALF": 8})
    assert strides == {"STRIDE": 32}


# ---- h07: prose that names the grader is not a way into it ------------------------------------------------


def test_h07_prose_naming_the_grader_is_no_way_in_but_names_still_are():
    import importlib

    from gpuperf.grading import watch

    def documented(x, y, out):
        """Checked by gpuperf.grading.exercises; it never touches _ACTIVE or sys._getframe."""
        print(f"graded by gpuperf.grading.exercises ({x.numel()} elements)")
        return out

    def by_name(x, y, out):
        return getattr(importlib.import_module("gpuperf.grading.watch"), "_ACTIVE")

    def by_padded_name(x, y, out):
        return getattr(importlib.import_module(" gpuperf.grading.watch ".strip()), "_ACTIVE ".strip())

    def by_frame(x, y, out):
        return sys._getframe(1)

    assert watch.reaches_grader(documented) == ""
    assert watch.reaches_grader(by_name) == "gpuperf.grading.watch"
    assert watch.reaches_grader(by_padded_name) == "gpuperf.grading.watch"
    assert watch.reaches_grader(by_frame) == "_getframe"


# ---- F12: CUDA's 65,535 programs on a grid's axes 1 and 2 -------------------------------------------------

_LAUNCH_34 = "softmax_row_kernel[(1, n_rows)]"
_ROW_34 = "    row = tl.program_id(1).to(tl.int64)\n"


@pytest.mark.parametrize("seed", SEEDS)
def test_f12_rows_on_the_third_axis_are_refused(seed):
    key, fn = _variant("34", (_LAUNCH_34, "softmax_row_kernel[(1, 1, n_rows)]"),
                       (_ROW_34, "    row = tl.program_id(2).to(tl.int64)\n"))
    _rejected(key, fn, "put the rows on the grid's first axis", seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_f12_rows_split_over_two_axes_are_refused(seed):
    """Two rows per column of the grid: axis 1 holds half the rows, still past 65,535 for 131,072 rows."""
    key, fn = _variant("34", (_LAUNCH_34, "softmax_row_kernel[(2, triton.cdiv(n_rows, 2))]"),
                       (_ROW_34, "    row = (tl.program_id(1) * 2 + tl.program_id(0)).to(tl.int64)\n"
                                 "    if row >= n_rows:\n        return\n"),
                       ("def softmax_row_kernel(x_ptr, y_ptr, n_cols,", "def softmax_row_kernel(x_ptr, y_ptr, "
                                                                       "n_cols, n_rows,"),
                       ("](x, y, n_cols,", "](x, y, n_cols, n_rows,"))
    _rejected(key, fn, "put the rows on the grid's first axis", seed)


def test_f12_a_grid_past_65535_on_axis_1_is_refused_and_one_program_per_row_on_axis_0_passes():
    """The limit itself, on recorded grids (a 70,000-program axis is too slow to interpret here)."""
    from gpuperf.grading import _grid_limit_check

    class Runner:
        watch = type("W", (), {"counters": type("C", (), {"grids": [("k", (3, 70_000, 1))]})})

    assert "at most 65,535 programs on axes 1 and 2" in _grid_limit_check(Runner, "case")[0].message
    Runner.watch.counters.grids = [("k", (3_000_000, 65_535, 1))]
    assert _grid_limit_check(Runner, "case") == []
    key, fn = _variant("34", (_LAUNCH_34, "softmax_row_kernel[(n_rows,)]"),
                       (_ROW_34, "    row = tl.program_id(0).to(tl.int64)\n"))
    _passes(key, fn, SEEDS[0])
