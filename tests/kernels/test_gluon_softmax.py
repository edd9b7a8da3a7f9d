"""The Gluon softmax: its host-side plan on the CPU, its compile for sm_90 on the CPU, its results on a GPU.

The kernel runs only on a Hopper GPU (Gluon does not run under the Triton interpreter); the GPU tests are
marked ``gpu`` and skipped unless :func:`gpuperf.kernels.gluon_softmax.available`.
"""

import math

import numpy as np
import pytest
import torch

from gpuperf.hardware import get_sm_limits
from gpuperf.kernels import gluon_softmax as gs

KiB = 1024
H200 = get_sm_limits("H200 SXM")


# ---- the plan (pure functions) ---------------------------------------------------------------------------


@pytest.mark.parametrize("n_cols, b, chunks, slots, programs", [
    (32000, 2, 8, 13, 2),     # 64 KB rows: 8 chunks of 8 KiB (the last one 3328 values); 2 rings of 13
    (65536, 2, 16, 28, 1),
    (4096, 2, 1, 6, 4),       # short rows: four rings per SM, each with the row and five more in flight
    (100000, 2, 25, 28, 1),   # one ring of 28: 3 chunks ahead
    (114688, 2, 28, 28, 1),   # the longest fp16 row: the ring holds exactly one row, nothing ahead
    (32000, 4, 16, 28, 1),    # fp32: chunks of 2048 values
    (16384, 2, 4, 9, 3),
])
def test_plan_of_the_probe_shapes(n_cols, b, chunks, slots, programs):
    plan = gs.chunk_plan(n_cols, b)
    assert (plan.chunks_per_row, plan.slots, plan.programs_per_sm) == (chunks, slots, programs)
    assert plan.chunk_bytes == gs.CHUNK_BYTES
    assert plan.chunks_per_row * plan.chunk_cols >= n_cols > (plan.chunks_per_row - 1) * plan.chunk_cols
    assert plan.lookahead_chunks == plan.slots - plan.chunks_per_row
    if programs > 1:  # the most programs whose rings keep a row plus max(4, half a row) ahead
        assert plan.lookahead_chunks >= max(gs.MIN_LOOKAHEAD_CHUNKS, chunks // 2)
        assert gs.chunk_plan(n_cols, b, programs_per_sm=programs + 1).lookahead_chunks < max(
            gs.MIN_LOOKAHEAD_CHUNKS, chunks // 2) or programs == gs.MAX_PROGRAMS_PER_SM


@pytest.mark.parametrize("n_cols, b, chunk_cols, programs, warps, ahead", [
    (32000, 2, 4096, 2, 4, 5),    # measured best: 2 programs of 4 warps, 8 KiB chunks
    (16384, 2, 4096, 3, 4, 5),
    (4096, 2, 4096, 4, 4, 5),
    (65536, 2, 8192, 1, 8, 6),    # one program: 16 KiB chunks, 96 KiB ahead
    (40000, 2, 8192, 1, 8, 9),    # measured best: 16 KiB chunks (32 KiB: 0.80, 16 KiB: 0.87)
    (100000, 2, 4096, 1, 8, 3),   # near the limit: the chunk that keeps the most ahead (24 KiB)
    (32000, 4, 4096, 1, 8, 6),    # fp32: 16 KiB chunks of 4096 values
])
def test_default_launch_follows_the_measured_rule(n_cols, b, chunk_cols, programs, warps, ahead):
    plan = gs.default_launch(n_cols, b)
    assert (plan.chunk_cols, plan.programs_per_sm, plan.num_warps, plan.lookahead_chunks) == (
        chunk_cols, programs, warps, ahead)


def test_flat_view_allows_for_the_values_in_front_of_the_row():
    # 50257 fp16 values: the first chunk starts at the 16-byte boundary at or before the row, up to 7 values
    # early, so the row spans ceil((50257 + 7) / 4096) = 13 chunks, as it does without the view.
    assert gs.chunk_plan(50257, 2, flat=True).chunks_per_row == 13
    # 4096 + 1 values fit 2 chunks either way; 8192 exactly fits 2 chunks aligned, 3 through the flat view.
    assert gs.chunk_plan(8192, 2).chunks_per_row == 2
    assert gs.chunk_plan(8192, 2, flat=True).chunks_per_row == 3


@pytest.mark.parametrize("programs", [1, 2, 3, 4])
def test_rings_fit_the_shared_memory_of_an_sm(programs):
    plan = gs.chunk_plan(1000, 2, programs_per_sm=programs)
    per_block = plan.shared_bytes + gs.SCRATCH_BYTES
    assert per_block <= H200.max_shared_memory_per_block_bytes
    per_sm = programs * (per_block + H200.reserved_shared_memory_per_block_bytes)
    assert per_sm <= H200.shared_memory_per_sm_bytes
    # and not far below: less than one more slot is left over
    spare = gs.shared_bytes_per_program(programs) - plan.shared_bytes
    assert 0 <= spare < plan.chunk_bytes + gs.MBARRIER_BYTES


def test_one_program_gets_the_per_block_maximum_less_scratch():
    assert gs.shared_bytes_per_program(1) == 227 * KiB - gs.SCRATCH_BYTES
    assert gs.shared_bytes_per_program(2) == 114 * KiB - 1 * KiB - gs.SCRATCH_BYTES


@pytest.mark.parametrize("n_cols, b, flat", [(4096, 2, False), (32000, 2, False), (65536, 2, False),
                                              (50257, 2, True), (32000, 4, False)])
def test_bytes_in_flight_beat_littles_law(n_cols, b, flat):
    # Little's law for an H200 SM: ~4.1 TB/s / 132 SMs x ~1 us = ~31 KB of reads and writes in flight.
    plan = gs.chunk_plan(n_cols, b, flat=flat)
    assert gs.bytes_in_flight_per_sm(plan) >= 31e3


def test_rows_that_do_not_fit_are_refused_with_the_limit():
    with pytest.raises(ValueError, match=r"n_cols: a row of 131072 values .*rows up to 114688 values"):
        gs.chunk_plan(131072, 2)
    with pytest.raises(ValueError, match="n_cols"):
        gs.chunk_plan(114689, 2)
    with pytest.raises(ValueError, match="n_cols"):
        gs.chunk_plan(57345, 4)
    with pytest.raises(ValueError, match="n_cols"):  # two programs per SM halve the room
        gs.chunk_plan(65536, 2, programs_per_sm=2)


@pytest.mark.parametrize("kwargs, name", [
    ({"n_cols": 0, "bytes_per_element": 2}, "n_cols"),
    ({"n_cols": 10, "bytes_per_element": 1}, "bytes_per_element"),
    ({"n_cols": 10, "bytes_per_element": 2, "chunk_cols": 3000}, "chunk_cols"),
    ({"n_cols": 10, "bytes_per_element": 2, "chunk_cols": 1024}, "chunk_cols"),  # < 8 x 32 x 8 values
    ({"n_cols": 10, "bytes_per_element": 2, "num_warps": 3}, "num_warps"),
    ({"n_cols": 10, "bytes_per_element": 2, "programs_per_sm": 0}, "programs_per_sm"),
    ({"n_cols": True, "bytes_per_element": 2}, "n_cols"),
])
def test_bad_plan_arguments_name_themselves(kwargs, name):
    with pytest.raises(ValueError, match=name):
        gs.chunk_plan(**kwargs)


def test_chunks_follow_the_warps():
    # 16 warps x 32 threads x 8 fp16 values: chunks of at least 4096 values; 32 warps: 8192.
    assert gs.chunk_plan(32000, 2, num_warps=16).chunk_cols == 4096
    assert gs.chunk_plan(32000, 2, num_warps=32).chunk_cols == 8192
    assert gs.chunk_plan(32000, 2, num_warps=4, chunk_cols=1024).chunks_per_row == 32


def test_grid_is_persistent():
    assert gs.grid_size(32768, 132, 4) == 528
    assert gs.grid_size(100, 132, 1) == 100
    with pytest.raises(ValueError, match="sm_count"):
        gs.grid_size(10, 0, 1)


def test_flat_view_only_for_strides_tma_cannot_take():
    assert not gs.uses_flat_view(32000, 2) and not gs.uses_flat_view(4096, 4)
    assert gs.uses_flat_view(50257, 2) and gs.uses_flat_view(1007, 2) and gs.uses_flat_view(1002, 4)


def _emulate(x: np.ndarray, stride: int, plan: gs.ChunkPlan, pipelined: bool) -> np.ndarray:
    """The kernel's addressing and three passes in numpy: chunks fetched as TMA would (zeros past the
    descriptor's end), columns masked as the kernel masks them."""
    n_rows, n_cols = x.shape
    flat = np.zeros((n_rows - 1) * stride + n_cols, dtype=np.float64)
    for r in range(n_rows):
        flat[r * stride:r * stride + n_cols] = x[r]
    vec, chunk = plan.vector_cols, plan.chunk_cols
    out = np.empty_like(x, dtype=np.float64)
    for r in range(n_rows):
        start = r * stride
        head = start % vec if plan.flat else 0
        first = start - head if plan.flat else start
        chunks, cols = [], []
        for j in range(plan.chunks_per_row):
            lo = first + j * chunk
            box = np.zeros(chunk)
            if plan.flat:
                got = flat[lo:lo + chunk]
            else:  # the 2-D descriptor stops at the row's end
                got = flat[lo:start + n_cols][:chunk]
            box[:len(got)] = got
            c = np.arange(chunk) + j * chunk - head
            chunks.append(np.where((c >= 0) & (c < n_cols), box, -np.inf))
            cols.append(c)
        if pipelined:  # running statistics per vector position, rescaled chunk by chunk, then merged
            m_run = np.full(chunk // vec, -np.inf)
            l_run = np.zeros(chunk // vec)
            for v in chunks:
                xg = v.reshape(-1, vec)
                m_new = np.maximum(m_run, xg.max(1))
                shift = np.where(m_new > -np.inf, m_new, 0.0)
                l_run = l_run * np.exp(m_run - shift) + np.exp(xg - shift[:, None]).sum(1)
                m_run = m_new
            m = m_run.max()
            inv = 1.0 / (l_run * np.exp(m_run - m)).sum()
        else:
            m = max(v.max() for v in chunks)
            inv = 1.0 / sum(np.exp(v - m).sum() for v in chunks)
        for v, c in zip(chunks, cols):
            keep = (c >= 0) & (c < n_cols)
            out[r, c[keep]] = np.exp(v[keep] - m) * inv
    return out


@pytest.mark.parametrize("n_rows, n_cols, stride", [(5, 1007, 1007), (4, 9000, 9000), (3, 4096, 4100),
                                                    (6, 5003, 5005), (2, 8192, 8192)])
@pytest.mark.parametrize("pipelined", [False, True])
def test_emulated_addressing_covers_every_column_once(n_rows, n_cols, stride, pipelined):
    rng = np.random.default_rng(n_cols)
    x = rng.standard_normal((n_rows, n_cols)) * 3
    x[0, rng.random(n_cols) < 0.9] = -np.inf  # whole vectors of -inf too
    x[0, 1] = 0.0
    plan = gs.chunk_plan(n_cols, 2, flat=gs.uses_flat_view(stride, 2), num_warps=8)
    y = _emulate(x, stride, plan, pipelined)
    ref = np.exp(x - x.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    np.testing.assert_allclose(y, ref, rtol=1e-12, atol=0)


# ---- the module on a machine without the kernel ----------------------------------------------------------


def test_availability_says_why_not():
    status = gs.available()
    assert bool(status) == status.ok
    assert status.ok == (status.reason == "")
    if gs.INTERPRETED:
        assert not status and "interpreter" in status.reason


def test_cpu_tensor_is_refused():
    with pytest.raises(ValueError, match="x must be a CUDA tensor"):
        gs.softmax(torch.randn(4, 64))


def test_usable_for_answers_without_raising():
    status = gs.usable_for(torch.randn(4, 64))
    assert not status and "CUDA" in status.reason
    assert not gs.usable_for(torch.zeros(3, dtype=torch.float16))


def test_bad_inputs_are_refused_before_the_device_is_asked():
    with pytest.raises(ValueError, match="x must be a 2-D matrix"):
        gs.softmax(torch.randn(2, 3, 4))
    with pytest.raises(ValueError, match=r"x.dtype"):
        gs.softmax(torch.zeros(4, 64, dtype=torch.int32))
    with pytest.raises(ValueError, match="x must be a torch.Tensor"):
        gs.softmax([[1.0, 2.0]])


# ---- compiled for sm_90 on the CPU ------------------------------------------------------------------------

_COMPILE = r'''
import re
import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.runtime.jit import mangle_type
from triton.experimental.gluon import GluonASTSource
import gpuperf.kernels.gluon_softmax as gs
from gpuperf.hardware import get_sm_limits

smem_max = get_sm_limits("H200 SXM").max_shared_memory_per_block_bytes
results = {}
f16, b16 = torch.float16, torch.bfloat16
cases = [("three_pass", 32000, 32000, f16, False), ("three_pass", 65536, 65536, b16, False),
         ("three_pass", 50257, 50257, f16, False), ("three_pass", 4096, 4096, f16, False),
         ("three_pass", 32000, 32000, b16, True), ("three_pass", 50257, 50257, f16, True),
         ("pipelined", 32000, 32000, f16, False), ("pipelined", 65536, 65536, b16, False),
         ("pipelined", 50257, 50257, f16, False), ("pipelined", 4096, 4096, f16, False)]
for kernel, n_cols, stride, dtype, store_exp in cases:
    n_rows = 64
    b = torch.empty(0, dtype=dtype).element_size()
    flat = gs.uses_flat_view(stride, b)
    plan = gs.chunk_plan(n_cols, b, flat=flat)
    x = torch.empty(n_rows * stride, dtype=dtype).as_strided((n_rows, n_cols), (stride, 1))
    const = dict(CHUNK=plan.chunk_cols, CHUNKS=plan.chunks_per_row, SLOTS=plan.slots,
                 CHUNK_BYTES_=plan.chunk_bytes, VEC=plan.vector_cols, FLAT=flat,
                 EVEN=not flat and n_cols % plan.chunk_cols == 0, WARPS=gs.NUM_WARPS,
                 **({"STORE_EXP": store_exp} if kernel == "three_pass" else {"FAST": b == 2}))
    name = {torch.float16: "fp16", torch.bfloat16: "bf16"}[dtype]
    sig = {"x_desc": mangle_type(gs.make_descriptor(x, plan)), "Y": f"*{name}", "n_rows": "i32",
           "n_cols": "i32", "stride_x": "i32", "stride_y": "i32", **{k: "constexpr" for k in const}}
    attrs = {(1,): [["tt.divisibility", 16]]}  # as a launch specialises a 16-byte-aligned pointer
    if stride % 16 == 0:
        attrs.update({(3,): [["tt.divisibility", 16]], (4,): [["tt.divisibility", 16]],
                      (5,): [["tt.divisibility", 16]]})
    fn = gs._softmax_kernel if kernel == "three_pass" else gs._pipelined_kernel
    k = triton.compile(GluonASTSource(fn=fn, signature=sig, constexprs=const, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options={"num_warps": gs.NUM_WARPS})
    ptx = k.asm["ptx"]
    assert k.metadata.shared <= smem_max, (n_cols, k.metadata.shared)
    assert k.metadata.shared >= plan.shared_bytes, (n_cols, k.metadata.shared, plan.shared_bytes)
    assert k.metadata.shared <= plan.shared_bytes + gs.SCRATCH_BYTES, (n_cols, k.metadata.shared)
    assert "cp.async.bulk.tensor.2d" in ptx and "mbarrier.try_wait" in ptx
    vector_stores = len(re.findall(r"st\.global(\.\w+)*\.v4\.b32", ptx))
    assert (vector_stores == 0) == flat, (n_cols, vector_stores)
    assert "ld.global" not in ptx  # every read of x goes through TMA
    exps = len(re.findall(r"ex2\.approx", ptx))
    assert not store_exp or "st.shared.v4" in ptx, n_cols  # exp(x - m) written back, 16 bytes a lane
    results[(kernel, n_cols, flat, store_exp)] = exps
# storing exp(x - m) halves the exponentials (each pass's loop is unrolled the same way)
for n_cols, flat in ((32000, False), (50257, True)):
    assert results[("three_pass", n_cols, flat, True)] * 2 == results[("three_pass", n_cols, flat, False)]
print("ok")
'''


@pytest.mark.redundant_on_gpu  # a CPU compile check; on a Hopper GPU the GPU tests run the kernel itself
def test_kernel_compiles_for_sm90(compiled_check):
    """The Gluon kernel compiles for sm_90 (with this machine's Triton, whose Gluon may differ from the
    H200's 3.6): shared memory within the plan and the per-block limit, TMA loads, 16-byte stores exactly
    when the rows are aligned, and no plain global loads."""
    gluon = pytest.importorskip("triton.experimental.gluon")
    if not hasattr(gluon, "GluonASTSource"):  # Triton 3.6 has no offline compile entry point for Gluon
        pytest.skip(f"triton {getattr(__import__('triton'), '__version__', '?')}: triton.experimental.gluon "
                    f"has no GluonASTSource, which compiling without a GPU needs")
    compiled_check(_COMPILE, fp_fusion=True)


# ---- on a Hopper GPU ------------------------------------------------------------------------------------

needs_hopper = pytest.mark.skipif(not gs.available(),
                                  reason=f"needs the Gluon kernel: {gs.available().reason}")
DTYPES = [torch.float16, torch.bfloat16]
UNIT = {torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8, torch.float32: 2.0**-24}


def _check(y, x, seed):
    ref = gs.softmax_reference(x)
    err = (y.double().cpu() - ref).abs()
    # The output is one rounding of an fp32 value a few fp32 ulps off; fp16's subnormals below 6e-5 have
    # an absolute spacing of 6e-8.
    # fp32 output: exp2.approx (2 ulp) of an exponent rounded once, |x - m| 2^-24 relative: about 1e-6.
    rel = 8e-6 if x.dtype == torch.float32 else 4 * UNIT[x.dtype]
    bound = rel * ref + (1e-7 if x.dtype == torch.float16 else 1e-37)
    bad = ~(err <= bound)
    if bad.any():
        i, j = (int(v) for v in bad.nonzero()[0])
        pytest.fail(f"{int(bad.sum())} values off, first at row {i}, column {j}: {float(y[i, j])} vs "
                    f"{float(ref[i, j])} (bound {float(bound[i, j]):.3g}; seed {seed})")


@pytest.mark.gpu
@needs_hopper
@pytest.mark.parametrize("schedule", gs.SCHEDULES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(64, 32000), (40, 50000), (24, 65536), (12, 100000), (300, 1007),
                                   (20, 50257), (700, 4096), (1, 4097), (3, 1), (133, 114688)])
def test_matches_float64_gpu(gen, dtype, shape, schedule):
    x = (torch.randn(shape, generator=gen, device="cuda") * 3).to(dtype)
    y = torch.full_like(x, float("nan"))
    gs.softmax(x, out=y, schedule=schedule)
    _check(y, x, gen.initial_seed())


@pytest.mark.gpu
@needs_hopper
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(64, 32000), (20, 50257), (700, 4096), (300, 1007)])
def test_store_exp_matches_float64_gpu(gen, dtype, shape):
    # exp(x - m) rounded to the dtype, then scaled and rounded again: still within 4 units of roundoff.
    x = (torch.randn(shape, generator=gen, device="cuda") * 3).to(dtype)
    y = torch.full_like(x, float("nan"))
    gs.softmax(x, out=y, schedule="three_pass", store_exp=True)
    _check(y, x, gen.initial_seed())


@pytest.mark.gpu
@needs_hopper
@pytest.mark.parametrize("schedule", gs.SCHEDULES)
@pytest.mark.parametrize("dtype", DTYPES + [torch.float32])
def test_neg_inf_offsets_and_strides_gpu(gen, dtype, schedule):
    for width in (20024, 20021):  # row strides of a multiple of 16 bytes (fp16), and not (the flat view)
        x = torch.randn(96, width, generator=gen, device="cuda")
        drop = torch.rand(32, width, generator=gen, device="cuda") < 0.3
        x[:32] = x[:32].masked_fill(drop, float("-inf"))
        x[:32, 5] = 0.0  # no row of -inf only
        x[32:64] += torch.linspace(-1000, 1000, 32, device="cuda")[:, None]
        x = x.to(dtype)
        # strided rows; a start 16 or 32 bytes in; the whole matrix
        for view in (x[:, :20000], x[:, 8:20008], x):
            y = torch.full(view.shape, float("nan"), dtype=dtype, device="cuda")
            gs.softmax(view, out=y, schedule=schedule)
            _check(y, view, gen.initial_seed())
    with pytest.raises(ValueError, match="16-byte-aligned address"):
        gs.softmax(x[:, 1:100])


@pytest.mark.gpu
@needs_hopper
@pytest.mark.parametrize("programs, warps", [(1, 4), (2, 8), (3, 16), (None, 32)])
def test_launch_options_gpu(gen, programs, warps):
    x = (torch.randn(517, 12345, generator=gen, device="cuda") * 3).half()
    y = torch.full_like(x, float("nan"))
    gs.softmax(x, out=y, programs_per_sm=programs, num_warps=warps)
    _check(y, x, gen.initial_seed())


@pytest.mark.gpu
@needs_hopper
def test_errors_gpu():
    with pytest.raises(ValueError, match="n_cols"):
        gs.softmax(torch.randn(2, 131072, device="cuda").half())
    with pytest.raises(ValueError, match="contiguous rows"):
        gs.softmax(torch.randn(64, 64, device="cuda").half()[:, ::2])
    x = torch.randn(8, 64, device="cuda").half()
    with pytest.raises(ValueError, match="out must not overlap"):
        gs.softmax(x, out=x)
    with pytest.raises(ValueError, match="schedule"):
        gs.softmax(x, schedule="online")
    with pytest.raises(ValueError, match="store_exp"):
        gs.softmax(x, store_exp=True)  # only with the three-pass schedule
    assert math.isclose(float(gs.softmax(x).float().sum()), 8.0, rel_tol=1e-2)
    assert gs.usable_for(x) and not gs.usable_for(torch.randn(2, 131072, device="cuda").half())


@pytest.mark.parametrize("region", ["gluon-pipeline", "gluon-fold", "gluon-normalise", "gluon-issue"])
def test_listings_fit_the_page(region):
    """Chapter 13 shows these regions from the module's source (so also where Gluon does not import)."""
    from gpuperf.plotting.listing import longest_line, source_region

    assert longest_line(source_region(gs, region)) <= 88
