"""Tests of gpuperf.kernels.matmul_splitk: the split-K kernel and the dispatch against a float64 reference.

Fresh random inputs every run (the seed is in failure messages). The bound per element: fp32 sums of k
products (k u32 sum |a||b|, doubled for slack), plus one rounding to the output format (u_D |c|). Under the
interpreter (no GPU): fp16 and fp32 at small shapes with a 32-wide (or 16-wide) tile and splits of 1-4; on
a GPU: full-size shapes through the dispatch in fp16 and bf16. Speed is never asserted here.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from gpuperf.kernels import matmul_splitk as mks  # noqa: E402

HAS_CUDA = torch.cuda.is_available()
gpu_only = [pytest.mark.gpu, pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")]
U = {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}
CPU_DTYPES = [torch.float16, torch.float32]


def _plan(bm=32, bn=32, bk=32, split=1):
    return mks.MatmulPlan("splitk", bm, bn, bk, split, 4, 1 if not HAS_CUDA else 3, 2)


def _inputs(m, n, k, dtype, device, gen, layout="rows"):
    """a (m, k), b (k, n): row-major, transposed (column-major storage) or a strided slice."""
    if layout == "rows":
        a = torch.randn(m, k, generator=gen, device=device).to(dtype)
        b = torch.randn(k, n, generator=gen, device=device).to(dtype)
    elif layout == "transposed":
        a = torch.randn(k, m, generator=gen, device=device).to(dtype).t()
        b = torch.randn(n, k, generator=gen, device=device).to(dtype).t()  # a Linear's weight, W.T
    else:  # every other column of wider matrices
        a = torch.randn(m, 2 * k, generator=gen, device=device).to(dtype)[:, ::2]
        b = torch.randn(k, 2 * n + 3, generator=gen, device=device).to(dtype)[:, 1:2 * n + 1:2]
    return a, b


def _check(c, a, b, gen):
    a64, b64 = a.double().cpu(), b.double().cpu()
    ref = a64 @ b64
    bound = 2 * a.shape[1] * U[torch.float32] * (a64.abs() @ b64.abs()) + U[a.dtype] * ref.abs() + 1e-300
    c64 = c.double().cpu()
    assert not torch.isnan(c64).any(), f"unwritten elements (seed {gen.initial_seed()})"
    bad = (c64 - ref).abs() > bound
    if bad.any():
        i, j = (int(v) for v in bad.nonzero()[0])
        pytest.fail(f"seed {gen.initial_seed()}: C[{i},{j}] = {c64[i, j].item()!r}, expected {ref[i, j].item()!r}")


@pytest.mark.parametrize("dtype", CPU_DTYPES)
@pytest.mark.parametrize("m,n,k,split,layout", [
    (1, 1, 1, 1, "rows"),        # one element
    (7, 33, 65, 1, "transposed"),  # ragged everything, unsplit
    (37, 70, 129, 3, "rows"),    # three slices, the last one partial
    (1, 40, 100, 4, "sliced"),   # a decoding row, strided operands
    (33, 1, 31, 2, "transposed"),
])
def test_splitk_within_rounding_bound(m, n, k, split, layout, dtype, device, gen):
    a, b = _inputs(m, n, k, dtype, device, gen, layout)
    out = torch.full((m, n), float("nan"), dtype=dtype, device=device)
    precision = "ieee" if dtype == torch.float32 else None
    c = mks.matmul_splitk(a, b, out, plan=_plan(split=split), input_precision=precision)
    assert c is out
    _check(c, a, b, gen)


@pytest.mark.parametrize("m,n,k,programs,layout", [
    (37, 70, 129, 4, "rows"),         # tiles shared between neighbours
    (20, 33, 300, 7, "transposed"),   # one tile's k spread over several programs
    (1, 40, 100, 3, "sliced"),
])
def test_streamk_within_rounding_bound(m, n, k, programs, layout, device, gen):
    a, b = _inputs(m, n, k, torch.float16, device, gen, layout)
    out = torch.full((m, n), float("nan"), dtype=torch.float16, device=device)
    first = mks.matmul_streamk(a, b, out, plan=_plan(16, 32, 16), programs=programs).clone()
    _check(first, a, b, gen)
    assert torch.equal(first, mks.matmul_streamk(a, b, plan=_plan(16, 32, 16), programs=programs))
    assert int(mks._lock_buffer(a.device, 1).abs().sum()) == 0


@pytest.mark.parametrize("m,n,k,kind,split", [
    (37, 72, 136, "splitk", 3),   # ragged m and n edges, three slices: TMA zero-fills past the edges
    (1, 40, 200, "splitk", 4),    # a decoding row, the last slice partial
    (20, 24, 296, "streamk", 1),  # one tile's k over several programs
])
def test_tma_variants_within_rounding_bound(m, n, k, kind, split, device, gen):
    a, b = _inputs(m, n, k, torch.float16, device, gen)
    if not mks.tma_operands_ok(a, b):
        pytest.skip("needs a Hopper-or-later GPU (or the interpreter)")
    plan = mks.MatmulPlan(kind, 16, 32, 32, split, 4, 1 if not HAS_CUDA else 3, 2, tma=True)
    out = torch.full((m, n), float("nan"), dtype=torch.float16, device=device)
    if kind == "splitk":
        first = mks.matmul_splitk(a, b, out, plan=plan).clone()
        again = mks.matmul_splitk(a, b, plan=plan)
    else:
        first = mks.matmul_streamk(a, b, out, plan=plan, programs=7).clone()
        again = mks.matmul_streamk(a, b, plan=plan, programs=7)
    _check(first, a, b, gen)
    assert torch.equal(first, again)
    with pytest.raises(ValueError, match="tma"):
        mks.matmul_splitk(a, b.t().contiguous().t(), plan=plan)  # column-major B: no descriptor


def test_splitk_is_deterministic_and_leaves_counters_zeroed(device, gen):
    a, b = _inputs(20, 40, 150, torch.float16, device, gen)
    plan = _plan(16, 32, 16, 4)
    first = mks.matmul_splitk(a, b, plan=plan)
    again = mks.matmul_splitk(a, b, plan=plan)
    assert torch.equal(first, again)
    assert int(mks._lock_buffer(a.device, 1).abs().sum()) == 0
    _check(first, a, b, gen)


def test_auto_and_empty_dimensions(device, gen):
    a, b = _inputs(5, 9, 40, torch.float16, device, gen)
    _check(mks.matmul_auto(a, b), a, b, gen)
    z = mks.matmul_splitk(torch.empty(3, 0, device=device), torch.empty(0, 4, device=device),
                          input_precision="ieee")
    assert torch.equal(z, torch.zeros(3, 4, device=device))


def test_bad_inputs_raise_value_error(device):
    a = torch.randn(4, 5, device=device)
    b = torch.randn(5, 3, device=device)
    with pytest.raises(ValueError, match="input_precision"):
        mks.matmul_splitk(a, b)
    with pytest.raises(ValueError, match=r"b.shape\[0\]"):
        mks.matmul_splitk(a, torch.randn(4, 3, device=device), input_precision="ieee")
    with pytest.raises(ValueError, match="out.shape"):
        mks.matmul_splitk(a, b, torch.empty(4, 4, device=device), input_precision="ieee")
    with pytest.raises(ValueError, match="plan"):
        mks.matmul_splitk(a, b, plan=mks.MatmulPlan("tma"), input_precision="ieee")
    with pytest.raises(ValueError, match="power of two"):
        mks.matmul_splitk(a, b, plan=mks.MatmulPlan("splitk", 24), input_precision="ieee")


# ---- the dispatch (pure) --------------------------------------------------------------------------------


def test_plan_decoding_rows_split_the_weight():
    for m in (1, 7, 16):
        plan = mks.plan_matmul(m, 4096, 4096, 132)
        assert plan.kernel == "splitk" and plan.block_m == 16
        tiles = 4096 // plan.block_n  # 32 tiles: split 8 fills one wave of 2 x 132 blocks
        assert plan.split_k == 8 and tiles * plan.split_k <= mks.DECODE_BLOCKS_PER_SM * 132
    # 112 column tiles: split 2 (224 blocks, one wave), not 3 (336: a second wave a quarter full)
    assert mks.plan_matmul(1, 14336, 4096, 132).split_k == 2
    assert mks.plan_matmul(64, 14336, 4096, 132).block_m == 64
    assert mks.plan_matmul(33, 4096, 4096, 132).block_m == 64 or mks.plan_matmul(33, 4096, 4096, 132).block_m == 32


def test_plan_large_products_take_the_tma_kernel_small_ones_split():
    assert mks.plan_matmul(4096, 4096, 4096, 132).kernel == "tma"
    assert mks.plan_matmul(4096, 4096, 4096, 132, tma_ok=False).kernel in mks.SMALL_KERNELS
    small = mks.plan_matmul(1000, 1000, 8192, 132)
    tiles = -(-1000 // small.block_m) * -(-1000 // small.block_n)
    assert small.kernel in mks.SMALL_KERNELS  # few tiles, a long k: the steps spread over the GPU
    assert small.kernel == "streamk" or tiles * small.split_k >= 0.9 * 132
    # half a wave of 128 x 256 tiles or more: the TMA kernel (measured faster there than the small tiles)
    assert mks.plan_matmul(777, 4096, 4096, 132).kernel == "tma"  # 112 tiles
    assert mks.plan_matmul(1536, 1536, 1536, 132).kernel == "tma"  # 72 tiles
    assert mks.plan_matmul(1000, 1000, 1000, 132).kernel in mks.SMALL_KERNELS  # 32 tiles
    assert mks.plan_matmul(777, 4096, 4096, 132, tma_ok=False).kernel in mks.SMALL_KERNELS
    for bad in ((0, 1, 1, 132), (1, 1, 1, 0), (1.5, 1, 1, 132), (True, 1, 1, 132)):
        with pytest.raises(ValueError):
            mks.plan_matmul(*bad)


# ---- full size on a GPU ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [pytest.param(torch.float16, marks=gpu_only),
                                   pytest.param(torch.bfloat16, marks=gpu_only)])
@pytest.mark.parametrize("m,n,k,layout", [
    (1000, 1000, 1000, "rows"), (777, 4096, 4096, "rows"), (1, 4096, 4096, "rows"),
    (7, 14336, 4096, "transposed"), (64, 4096, 14336, "rows"), (1000, 1000, 8192, "sliced"),
])
def test_gpu_full_size_through_the_dispatch(m, n, k, layout, dtype, device, gen):
    a, b = _inputs(m, n, k, dtype, device, gen, layout)
    c = mks.matmul_auto(a, b)
    _check(c, a, b, gen)
    plan = mks.plan_matmul(m, n, k, torch.cuda.get_device_properties(0).multi_processor_count, tma_ok=False)
    plan = mks._loadable(plan, a, b, None)  # as matmul_auto does: pointer loads where TMA cannot take a or b
    if plan.split_k > 1:
        assert torch.equal(mks.matmul_splitk(a, b, plan=plan), mks.matmul_splitk(a, b, plan=plan))


@pytest.mark.parametrize("m,n,k", [pytest.param(777, 4096, 4096, marks=gpu_only),
                                   pytest.param(1000, 1000, 1000, marks=gpu_only)])
def test_gpu_streamk_full_size(m, n, k, device, gen):
    a, b = _inputs(m, n, k, torch.bfloat16, device, gen)
    plan = mks.MatmulPlan("splitk", 128, 128, 64, 1, 8, 3, 8)
    first = mks.matmul_streamk(a, b, plan=plan).clone()
    _check(first, a, b, gen)
    assert torch.equal(first, mks.matmul_streamk(a, b, plan=plan))


@pytest.mark.parametrize("m,n,k,kind,split", [pytest.param(1000, 1000, 1000, "splitk", 2, marks=gpu_only),
                                              pytest.param(1, 4096, 4096, "splitk", 8, marks=gpu_only),
                                              pytest.param(777, 4096, 4096, "streamk", 1, marks=gpu_only)])
def test_gpu_tma_variants(m, n, k, kind, split, device, gen):
    a, b = _inputs(m, n, k, torch.bfloat16, device, gen)
    if not mks.tma_operands_ok(a, b):
        pytest.skip("needs a Hopper-or-later GPU")
    bm = 16 if m < 16 else 128
    plan = mks.MatmulPlan(kind, bm, 128, 64, split, 4 if bm == 16 else 8, 3, 8, tma=True)
    run = mks.matmul_splitk if kind == "splitk" else mks.matmul_streamk
    first = run(a, b, plan=plan).clone()
    _check(first, a, b, gen)
    assert torch.equal(first, run(a, b, plan=plan))
    with pytest.raises(ValueError, match="tma"):
        run(a, b.t().contiguous().t(), plan=plan)  # column-major B: no TMA


def test_int32_limits_are_checked_on_the_host():
    a, b = torch.zeros(2, 3), torch.zeros(3, 2)
    plan = mks.MatmulPlan("streamk", 16, 16, 16)
    mks._check_int32(plan, a, b, 2**31 - 1)
    with pytest.raises(ValueError):
        mks._check_int32(plan, a, b, 2**31)
    class Wide:  # a stride along k of 2^27 elements: x BLOCK_K 16 = 2^31 (no storage needed)
        def stride(self, dim):
            return (1, 2**27)[dim]

    with pytest.raises(ValueError):
        mks._check_int32(plan, Wide(), b, 0)


def test_the_dispatch_remembers_each_shapes_plan():
    """matmul_auto prices a shape's tiles and splits once (the model costs 60-300 us of host time a call)."""
    from gpuperf.kernels import matmul_splitk as mks

    mks._planned.cache_clear()
    first = mks._planned(1000, 1000, 1000, 132, True)
    assert first == mks.plan_matmul(1000, 1000, 1000, 132, tma_ok=True)
    assert mks._planned(1000, 1000, 1000, 132, True) is first
    assert mks._planned.cache_info().hits == 1
