"""Every interpreted kernel goes through Triton's front end (TTIR) before it runs (gpuperf.grading.frontend):
the course's kernels lower, a kernel that computes with NumPy on a block's ``.handle`` does not.

On a machine with a GPU the kernels compile anyway; the front end is checked there by running this file
with ``TRITON_INTERPRET=1`` (the CPU's path). Where this Triton lays out its front end differently, the
tests skip and say why (``frontend.unavailable()``)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
import gpuperf.kernels  # noqa: E402,F401  (before triton: without a GPU it switches on the interpreter)

triton = pytest.importorskip("triton")
import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton.language as tl  # noqa: E402

from gpuperf import grading  # noqa: E402,F401  (takes the snapshot of triton.language)
from gpuperf.grading import frontend, kernel_ir  # noqa: E402


def _fn(kernel):
    return getattr(kernel, "fn", kernel)


def _lower(kernel, *args, **kwargs) -> str:
    message = frontend.lowering_error(_fn(kernel), args, kwargs)
    if frontend.unavailable():
        pytest.skip(f"Triton's front end cannot be run by the grader here: {frontend.unavailable()}")
    return message


@triton.jit
def _numpy_body(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    x.handle.data = np.exp(x.handle.data)  # runs under the interpreter only
    tl.store(y_ptr + offs, x, mask=offs < n)


def test_the_course_kernels_lower_and_numpy_in_a_kernel_does_not():
    from gpuperf.kernels.labs import l2, l3, l4, l5, l6

    x, y = torch.randn(3, 100), torch.empty(3, 100)
    v = torch.randn(100)
    assert _lower(l2.add_kernel, v, v, torch.empty(100), 100, BLOCK_SIZE=64) == ""
    assert _lower(l2.chain_kernel, v, torch.empty(100), 100, 1.5, 0.25, K_OPS=3, BLOCK_SIZE=64) == ""
    assert _lower(l3.softmax_row_kernel, x, y, 100, 100, 100, BLOCK=128) == ""
    assert _lower(l3.online_softmax_kernel, x, y, 100, 100, 100, BLOCK=32) == ""
    a, b, c = torch.randn(40, 50), torch.randn(50, 30), torch.empty(40, 30)
    assert _lower(l4.matmul_kernel, a, b, c, 40, 30, 50, 50, 1, 30, 1, 30, 1, BLOCK_M=32, BLOCK_N=32,
                  BLOCK_K=32, GROUP_M=8, PRECISION="ieee") == ""
    q, lse = torch.randn(1, 2, 64, 16), torch.empty(1, 2, 64)
    assert _lower(l5.attention_forward_kernel, q, q, q, q, lse, 64, 64, 0.25, CAUSAL=True, HEAD_DIM=16,
                  BLOCK_M=32, BLOCK_N=32, PRECISION="ieee") == ""
    assert _lower(l6.dq_kernel, q, q, q, q, lse, lse, q, 64, 64, 0.25, CAUSAL=True, HEAD_DIM=16, BLOCK_M=32,
                  BLOCK_N=32, PRECISION="ieee") == ""
    assert _lower(_numpy_body, torch.randn(100), torch.empty(100), 100, BLOCK=64) != ""


def test_the_grader_refuses_numpy_in_a_kernel_with_what_to_change():
    def softmax_rows(x):
        y = torch.empty_like(x)
        _numpy_body[(x.shape[0],)](x, y, x.numel(), BLOCK=triton.next_power_of_2(x.numel()))
        return y

    _lower(_numpy_body, torch.randn(100), torch.empty(100), 100, BLOCK=64)  # skips where unavailable
    report = grading.grade_report("L3.softmax", softmax_rows, seed=3, stop_at_first_failure=True)
    assert not report.passed
    assert "does not compile with Triton" in report.text() and "operations on blocks" in report.text()
    assert "tl." not in report.text()  # never code


@triton.jit
def _rows_and_keys(q_ptr, k_ptr, o_ptr, N, sq, sk, MODE: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    # MODE 0: the program's rows in 64 bits, the loop's key index (start + arange) in 32 bits times the key
    # stride, as Triton's tutorials write it; 1: the loop starts at the program's block (keys made from the
    # program id); 2: the program's rows in 32 bits times the row stride
    pid = tl.program_id(0)
    rows = pid * BM + tl.arange(0, BM)
    if MODE != 2:
        rows = rows.to(tl.int64)
    q = tl.load(q_ptr + rows * sq, mask=rows < N, other=0.0)
    acc = tl.zeros((BM,), dtype=tl.float32) + q  # the loop carries a value loaded at the program's rows
    lo = pid * BM if MODE == 1 else 0
    for start in range(lo, N, BN):
        keys = start + tl.arange(0, BN)
        k = tl.load(k_ptr + keys * sk, mask=keys < N, other=0.0)
        acc += tl.sum(k, axis=0)
    tl.store(o_ptr + rows, acc, mask=rows < N)


@pytest.mark.parametrize("mode, wraps", [(0, False), (1, True), (2, True)])
def test_a_loops_key_index_is_not_made_from_the_program_id_by_what_the_loop_carries(mode, wraps):
    """Round 7's h04: the TTIR rule read scf.for's induction variable as one of the values the loop carries, so
    a yielded value loaded at the program's rows made the key index ``start + arange`` an index of the
    program id's. The induction variable takes the taint of its lower bound only."""
    x = torch.randn(64)
    assert _lower(_rows_and_keys, x, x, torch.empty(64), 64, 3, 5, MODE=mode, BM=16, BN=16) == ""
    problem, ttir = frontend.lower(_fn(_rows_and_keys), (x, x, torch.empty(64), 64, 3, 5),
                                   dict(MODE=mode, BM=16, BN=16))
    assert problem == "" and frontend.wrapping_offsets(ttir) is wraps


@triton.jit
def _atomics(x_ptr, y_ptr, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.atomic_add(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=0.0), mask=offs < n)
    tl.atomic_xchg(y_ptr + offs, 1.0, mask=offs < n)


def test_the_atomics_of_a_kernel_are_read_from_its_ttir():
    """On a GPU a NaN output after atomics is explained from the kernel's TTIR (an add onto torch.empty
    memory?): the accumulating atomics are told from an exchange."""
    from gpuperf.grading import watch

    x = torch.randn(16)
    assert _lower(_atomics, x, x, 16, B=16) == ""
    problem, ttir = frontend.lower(_fn(_atomics), (x, x, 16), dict(B=16))
    assert watch._atomic_ops(ttir) == ["fadd", "exch"]


def test_the_kernels_function_ends_at_its_own_closing_line():
    """Round 8's bh01: Triton 3.9 ends a function with ``} loc(#loc)``, so the kernel's lines ran on into the
    helper functions of tl.max and tl.sum, whose %a, %b, %0 took the kernel's names' taints."""
    ttir = "\n".join(("module {",
                      "  tt.func public @k(%b: i32 loc(\"b\"(#loc))) attributes {noinline = false} {",
                      "    tt.return loc(#loc2)",
                      "  } loc(#loc)",
                      "  tt.func private @max(%a: f32, %b: f32) -> f32 attributes {noinline = false} {",
                      "    %0 = arith.maxnumf %a, %b : f32 loc(#loc3)",
                      "  } loc(#loc3)",
                      "} loc(#loc)"))
    lines = kernel_ir.kernel_lines(ttir)
    assert len(lines) == 3 and lines[-1].strip().startswith("}")


@triton.jit
def _grouped_rows(x_ptr, o_ptr, M, group, stride, MODE: tl.constexpr, BM: tl.constexpr):
    # the first tile of a group, (pid // group) * group, a 32-bit product of the program id and an argument;
    # MODE 0: the rows made from it widened before the stride multiplies them; 1: rows times the stride in 32
    # bits; 2: the group's first tile added to the address as it is
    pid = tl.program_id(0)
    first = (pid // group) * group
    tile = first + pid % group
    rows = tile * BM + tl.arange(0, BM)
    if MODE == 0:
        offs = rows.to(tl.int64) * stride
    elif MODE == 1:
        offs = rows * stride
    else:
        offs = first.to(tl.int64) + tl.arange(0, BM)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=rows < M, other=0.0), mask=rows < M)


@pytest.mark.parametrize("mode, wraps", [(0, False), (1, True), (2, True)])
def test_an_index_widened_before_a_stride_multiplies_it_is_not_an_offset(mode, wraps):
    """Round 8's ah02: the course's grouped L4 kernel makes the group's first tile row ``(pid // per_group) *
    GROUP_M`` in 32 bits, an index of tiles; widened and multiplied by the stride in 64 bits, it is not a
    wrapping offset. Rows times the stride in 32 bits, or the product added as it is, still are."""
    x = torch.randn(64)
    args, kwargs = (x, torch.empty(64), 64, 3, 5), dict(MODE=mode, BM=16)
    assert _lower(_grouped_rows, *args, **kwargs) == ""
    problem, ttir = frontend.lower(_fn(_grouped_rows), args, kwargs)
    assert problem == "" and frontend.wrapping_offsets(ttir) is wraps


@triton.jit
def _head_rows(q_ptr, o_ptr, N, D, MODE: tl.constexpr, BM: tl.constexpr, BD: tl.constexpr):
    # a block's rows in 32 bits times the head dimension D (a run-time size); MODE 0: the head's offset in 64
    # bits; 1: the head's offset in 32 bits; 2: no head offset (rows counted over every head)
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    dims = tl.arange(0, BD)
    base = q_ptr
    out = o_ptr
    if MODE == 0:
        head = tl.program_id(1).to(tl.int64)
        base = q_ptr + head * N * D
        out = o_ptr + head * N * D
    elif MODE == 1:
        head = tl.program_id(1)
        base = q_ptr + head * N * D
        out = o_ptr + head * N * D
    mask = (rows[:, None] < N) & (dims[None, :] < D)
    x = tl.load(base + rows[:, None] * D + dims[None, :], mask=mask, other=0.0)
    tl.store(out + rows[:, None] * D + dims[None, :], x, mask=mask)


@pytest.mark.parametrize("mode, inside", [(0, True), (1, False), (2, False)])
def test_a_blocks_rows_stay_inside_one_head_where_a_64_bit_head_offset_is_added(mode, inside):
    """Round 8's bh03 (L5 with the head dimension padded to a power of two): ``rows * HEAD_DIM`` in 32 bits, as
    the course's kernel computes it, stays inside one head like a loop's keys, where the address adds the
    head's offset in 64 bits. A head offset in 32 bits, or rows with no head offset, still count; outside
    attention (``within_head`` off) the rows count too."""
    x = torch.randn(2 * 40 * 24)
    args, kwargs = (x, torch.empty_like(x), 40, 24), dict(MODE=mode, BM=16, BD=32)
    assert _lower(_head_rows, *args, **kwargs) == ""
    problem, ttir = frontend.lower(_fn(_head_rows), args, kwargs)
    assert problem == ""
    assert frontend.wrapping_offsets(ttir)
    assert frontend.wrapping_offsets(ttir, within_head=True) is not inside
