"""Triton softmax kernels against a float64 reference (interpreter on the CPU, compiled on a GPU)."""

import math

import pytest
import torch
import triton
import triton.language as tl

from gpuperf.kernels import softmax as sm

DTYPES = [torch.float32, torch.float16] + ([torch.bfloat16] if torch.cuda.is_available() else [])
# Unit roundoff of the storage dtype: the output is rounded once from an fp32 value within a few fp32 ulps.
TOL = {torch.float32: 1e-6, torch.float16: 2 ** -11 * 2, torch.bfloat16: 2 ** -8 * 2}


def _check(y, x, seed):
    ref = sm.softmax_reference(x)
    assert not torch.isnan(y).any(), f"NaN left in output (seed {seed})"
    rel = ((y.double().cpu() - ref).abs() / ref.clamp_min(1e-30)).max().item()
    err = (y.double().cpu() - ref).abs().max().item()
    tol = TOL[x.dtype]
    assert err <= tol * ref.max().item() + 1e-7 or rel <= tol, f"max error {err}, tol {tol} (seed {seed})"
    assert torch.allclose(y.double().cpu().sum(-1), torch.ones(x.shape[0], dtype=torch.float64),
                          atol=tol * 2 * x.shape[1] ** 0.5 + 1e-6), f"rows do not sum to 1 (seed {seed})"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("method", ["fused", "online", "three_pass", "split", "auto"])
@pytest.mark.parametrize("shape", [(1, 1), (3, 97), (2, 1025), (5, 64), (2, 2048), (1, 3000)])
def test_softmax_matches_float64(device, gen, dtype, method, shape):
    x = (torch.randn(shape, generator=gen, device=device) * 4).to(dtype)
    y = torch.full_like(x, float("nan"))
    kwargs = {"block_cols": 256} if method in ("online", "three_pass", "split") else {}
    sm.softmax(x, out=y, method=method, **kwargs)
    _check(y, x, gen.initial_seed())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(9, 100), (5, 1001), (3, 4099), (2, 50257), (17, 3000), (9, 5000)])
def test_fused_rows_not_a_multiple_of_16_match_float64(device, gen, dtype, shape):
    # Rows whose length is not a multiple of 16 start at every offset modulo 16 bytes: the fused kernel
    # splits each into a head, a 16-byte aligned body and a tail (_fused_body_kernel). Every row checked.
    x = (torch.randn(shape, generator=gen, device=device) * 4).to(dtype)
    y = torch.full_like(x, float("nan"))
    sm.softmax(x, out=y, method="fused")
    _check(y, x, gen.initial_seed())


def test_rows_not_a_multiple_of_16_take_4_warps_up_to_4096_lanes():
    assert [sm._body_num_warps(b) for b in (64, 1024, 4096, 8192, 16384)] == [4, 4, 4, 8, 16]
    assert sm._body_num_warps(8192) == sm._fused_num_warps(8192)


@pytest.mark.parametrize("method", ["fused", "online", "three_pass", "split"])
def test_softmax_is_safe_for_large_logits(device, method):
    # exp(1000) overflows fp32: only a kernel that subtracts the max gets this right.
    x = torch.tensor([[1000.0, 999.0, -1000.0] + [0.0] * 97], device=device)
    y = sm.softmax(x, method=method, **({"block_cols": 32} if method != "fused" else {}))
    ref = sm.softmax_reference(x)
    assert torch.allclose(y.double().cpu(), ref, atol=1e-6)


def test_online_merges_blocks_whose_max_grows(device):
    # The maximum sits in the last block: earlier partial sums must be rescaled.
    x = torch.arange(300, dtype=torch.float32, device=device)[None, :] / 10
    y = sm.softmax(x, method="online", block_cols=16)
    assert torch.allclose(y.double().cpu(), sm.softmax_reference(x), atol=1e-7)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 65536), (2, 65537), (2, 4096), (7, 131075), (300, 40000)])
def test_softmax_long_rows_gpu(gen, dtype, shape):  # 300 x 40000: "auto" takes the Gluon kernel on Hopper
    x = torch.randn(shape, generator=gen, device="cuda").to(dtype)
    for method in ("auto", "online") + (("fused",) if shape[1] <= sm.FUSED_MAX_COLS else ()):
        y = torch.full_like(x, float("nan"))
        sm.softmax(x, out=y, method=method)
        _check(y, x, gen.initial_seed())


_REDUCTION_PTX = r"""
import re
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import gpuperf.kernels.softmax as sm
from gpuperf.attention import row_reduction

sig = {"X": "*fp16", "Y": "*fp16", "n_cols": "i32", "stride_x": "i32", "stride_y": "i32",
       "BLOCK": "constexpr", "EVEN": "constexpr"}
k = triton.compile(ASTSource(fn=sm._fused_kernel, signature=sig, constexprs={"BLOCK": 4096, "EVEN": True}),
                   target=GPUTarget("cuda", 90, 32), options={"num_warps": 8})
ptx = k.asm["ptx"]
plan = row_reduction(4096, 8)
shuffles = len(re.findall(r"shfl\.sync\.bfly", ptx))
assert shuffles == 2 * (plan.shuffle_steps + plan.cross_warp_steps), shuffles
assert len(re.findall(r"bar\.sync", ptx)) >= 2  # one exchange through shared memory per reduction
print("ok")
"""


def test_fused_reductions_compile_to_the_stages_chapter_13_counts(compiled_check):
    """The fused kernel's max and sum, compiled for sm_90 (no GPU needed): 5 butterfly shuffles inside each
    warp and 3 across the 8 warps' results per reduction, as ``gpuperf.attention.row_reduction`` says."""
    compiled_check(_REDUCTION_PTX, timeout_s=300, fp_fusion=True)


def test_softmax_bytes_moved():
    assert sm.softmax_bytes_moved(32768, 4096, 2, "fused") == 2 * 32768 * 4096 * 2
    assert sm.softmax_bytes_moved(4, 8, 4, "online") == 3 * 4 * 8 * 4
    assert sm.softmax_bytes_moved(4, 8, 4, "three_pass") == 4 * 4 * 8 * 4
    with pytest.raises(ValueError, match="method"):
        sm.softmax_bytes_moved(4, 8, 4, "magic")


def test_softmax_validation(device):
    x = torch.randn(4, 8, device=device)
    with pytest.raises(ValueError, match="x must be 2-D"):
        sm.softmax(x[None])
    with pytest.raises(ValueError, match="x.dtype"):
        sm.softmax(x.double())
    with pytest.raises(ValueError, match="contiguous"):
        sm.softmax(x.t())
    with pytest.raises(ValueError, match="method"):
        sm.softmax(x, method="fast")
    with pytest.raises(ValueError, match="block_cols"):
        sm.softmax(x, method="online", block_cols=100)
    with pytest.raises(ValueError, match="out must"):
        sm.softmax(x, out=torch.empty(4, 9, device=device))
    with pytest.raises(ValueError, match="overlap"):
        sm.softmax(x, out=x)
    with pytest.raises(ValueError, match="x.shape\\[1\\]"):
        sm.softmax(torch.empty(1, sm.FUSED_MAX_COLS + 1, device=device), method="fused")
    if sm.INTERPRETED:
        with pytest.raises(ValueError, match="bfloat16"):
            sm.softmax(x.bfloat16())


def test_softmax_out_may_neighbour_x_but_not_overlap_it(device, gen):
    # x and out carved from one buffer: a partial overlap (one row apart) is refused, a clear neighbour taken
    buf = torch.randn(3 * 97, generator=gen, device=device)
    x = buf[:2 * 97].view(2, 97)
    with pytest.raises(ValueError, match="overlap"):
        sm.softmax(x, out=buf[97:].view(2, 97))
    with pytest.raises(ValueError, match="overlap"):
        sm.softmax(buf[97:].view(2, 97), out=x)
    x1, out1 = buf[:97].view(1, 97), buf[97:2 * 97].view(1, 97)
    _check(sm.softmax(x1, out=out1), x1, gen.initial_seed())


def test_softmax_empty(device):
    x = torch.empty(0, 5, device=device)
    assert sm.softmax(x).shape == (0, 5)


@pytest.mark.parametrize("method", ["fused", "online", "three_pass", "split"])
def test_softmax_masked_logits(device, method):
    # -inf at the same position of every block (a mask): that lane never sees a finite value.
    x = torch.randn(3, 200, device=device)
    x[:, ::32] = float("-inf")
    y = sm.softmax(x, method=method, **({"block_cols": 32} if method != "fused" else {}))
    ref = sm.softmax_reference(x)
    assert not torch.isnan(y).any()
    assert torch.allclose(y.double().cpu(), ref, atol=1e-7)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("stages", [1, 3])
def test_online_persistent_grid_loops_over_rows_gpu(gen, stages):
    # 1 program per SM: each program handles several rows; a row length that is not a multiple of the block.
    x = torch.randn(1000, 70001, generator=gen, device="cuda").to(torch.float16)
    y = torch.full_like(x, float("nan"))
    sm.softmax(x, out=y, method="online", programs_per_sm=1, num_stages=stages)
    _check(y, x, gen.initial_seed())


def test_online_launch_validation(device):
    x = torch.randn(2, 100, device=device)
    with pytest.raises(ValueError, match="num_stages"):
        sm.softmax(x, method="online", num_stages=0)
    with pytest.raises(ValueError, match="programs_per_sm"):
        sm.softmax(x, method="online", programs_per_sm=True)


def test_split_merges_chunks_whose_max_differs(device):
    # Chunks of 16 columns: the maximum sits in the last chunk, two chunks hold -inf only (a masked
    # stretch: partial state m = -inf, l = 0), and the last chunk is partial (300 = 18 x 16 + 12).
    x = torch.arange(300, dtype=torch.float32, device=device)[None, :].repeat(2, 1) / 10
    x[:, 32:64] = float("-inf")
    x[1] = x[1].flip(0)
    y = sm.softmax(x, method="split", block_cols=16)
    assert torch.allclose(y.double().cpu(), sm.softmax_reference(x), atol=1e-7)
    assert (y[0, 32:64] == 0).all() and (y[1, 236:268] == 0).all()


def test_split_plan_on_the_interpreter_is_two_launches():
    if not sm.INTERPRETED:
        pytest.skip("the interpreter's plan")
    plan = sm.split_plan(torch.empty(3, 3000), block_cols=256)
    assert (plan.n_chunks, plan.cooperative, plan.chunk) == (12, False, 256)


def test_split_group_count():
    # 2048 rows of 8 chunks, 396 resident programs: 49 groups fit, 42 rounds; 49 groups leave the last
    # round partly idle, 49 -> ceil(2048 / 42) = 49; 512 rows of 32 chunks: 12 fit, 43 rounds, 12 groups.
    assert sm._n_groups(2048, 8, 396) == 49 and sm._n_groups(512, 32, 396) == 12
    assert sm._n_groups(100, 8, 528) == 50  # 66 fit: 2 rounds either way, so 50 groups of 2 rows
    assert sm._n_groups(3, 8, 528) == 3 and sm._n_groups(1, 64, 63) == 0
    for rows in (1, 7, 97, 1000):
        for chunks in (2, 9, 64):
            g = sm._n_groups(rows, chunks, 396)
            assert g * chunks <= 396 and g <= rows
            if g:
                assert -(-rows // g) == -(-rows // min(396 // chunks, rows))  # as few rounds as possible


def test_split_validation(device):
    x = torch.randn(2, 100, device=device)
    with pytest.raises(ValueError, match="cooperative"):
        sm.softmax(x, method="split", cooperative="yes")
    with pytest.raises(ValueError, match="prefetch"):
        sm.softmax(x, method="split", prefetch=1)
    with pytest.raises(ValueError, match="block_cols"):
        sm.softmax(x, method="split", block_cols=2 * sm.FUSED_MAX_COLS)
    if sm.INTERPRETED:
        with pytest.raises(ValueError, match="cooperative=True needs a GPU"):
            sm.softmax(x, method="split", cooperative=True)


# The cooperative split kernel runs only on a GPU (its programs wait for each other; the interpreter runs
# them one after another). A bug in its barrier shows as a hang, which the GPU job's time limit catches.
GPU = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 65536), (2, 65537), (7, 131075), (1, 16385), (5, 262144), (1000, 70001)])
@pytest.mark.parametrize("launch", [{}, {"block_cols": 8192, "num_warps": 8, "prefetch": True}])
def test_split_cooperative_gpu(gen, dtype, shape, launch):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    x = (torch.randn(shape, generator=gen, device="cuda") * 4).to(dtype)
    plan = sm.split_plan(x, **{k: v for k, v in launch.items()})
    assert plan.cooperative and plan.n_chunks >= 2
    grid = plan.n_groups * plan.n_chunks
    assert grid <= plan.programs_per_sm * torch.cuda.get_device_properties(0).multi_processor_count
    assert plan.n_groups <= shape[0]  # rows fewer than, or many more than, the groups
    y = torch.full_like(x, float("nan"))
    sm.softmax(x, out=y, method="split", cooperative=True, **launch)
    _check(y, x, gen.initial_seed())


test_split_cooperative_gpu = pytest.mark.gpu(test_split_cooperative_gpu)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_split_barrier_counters_survive_many_launches_gpu(gen):
    # The barrier counters are zeroed once and reused: launches with different chunk counts, group counts
    # and dtypes in a row must each leave them ready for the next (a wrong count would hang or give garbage).
    for i, (rows, n) in enumerate([(3, 9 * 8192), (1500, 2 * 8192 + 5), (2, 262144), (64, 40000)] * 3):
        x = (torch.randn(rows, n, generator=gen, device="cuda") * 4).to(
            [torch.float16, torch.bfloat16, torch.float32][i % 3])
        y = torch.full_like(x, float("nan"))
        sm.softmax(x, out=y, method="split", cooperative=True)
        _check(y, x, gen.initial_seed())


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_split_masked_chunks_and_two_launch_path_gpu(gen):
    x = (torch.randn(6, 50000, generator=gen, device="cuda") * 4).to(torch.bfloat16)
    x[:, 8192:3 * 8192] = float("-inf")  # whole chunks of -inf (chunks of 4096 or 8192)
    for coop, prefetch in ((True, False), (True, True), (False, False)):
        y = torch.full_like(x, float("nan"))
        sm.softmax(x, out=y, method="split", cooperative=coop, prefetch=prefetch)
        _check(y, x, gen.initial_seed())
        assert (y[:, 8192:3 * 8192] == 0).all()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_split_occupancy_matches_the_driver_gpu():
    # Our count of resident programs from the compiled kernel's registers must agree with CUDA's calculator.
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        sm.split_plan(torch.randn(4, 65536, device="cuda").to(dtype))
    assert sm._OCCUPANCY
    for key, (ours, theirs) in sm._OCCUPANCY.items():
        assert ours >= 1 and ours == theirs, (key, ours, theirs)


SM90_SCRIPT = r"""
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import gpuperf.kernels.softmax as sm

assert not sm.INTERPRETED
target = GPUTarget("cuda", 90, 32)
for unit in (False, True):  # the integer arguments run-time values, or the constant 1
    ints = ("n_cols", "stride_x", "stride_y")
    kinds = {n: "constexpr" if unit else "i32" for n in ints}
    consts = {n: 1 for n in ints} if unit else {}
    sig = {"X": "*bf16", "Y": "*bf16", "PM": "*fp32", "PL": "*fp32", "SEM": "*i32", "n_rows": "i32",
           **kinds, "n_chunks": "i32", "n_groups": "i32", "CHUNK": "constexpr", "PB": "constexpr",
           "PREFETCH": "constexpr"}
    for prefetch in (False, True):
        c = {"CHUNK": 1024, "PB": 8, "PREFETCH": prefetch, **consts}
        k = triton.compile(ASTSource(fn=sm._split_coop_kernel, signature=sig, constexprs=c), target=target,
                           options={"num_warps": 4, "num_stages": 1})
        ptx = k.asm["ptx"]
        assert "atom.global.gpu.release.add" in ptx and ".acquire" in ptx, "the barrier lost its ordering"
    sig = {"X": "*fp16", "Y": "*fp16", "PM": "*fp32", "PL": "*fp32", **kinds, "n_chunks": "i32",
           "CHUNK": "constexpr", "PB": "constexpr"}
    triton.compile(ASTSource(fn=sm._split_normalize_kernel, signature=sig,
                             constexprs={"CHUNK": 256, "PB": 4, **consts}), target=target)
print("ok")
"""


def test_split_kernels_compile_for_sm90(compiled_check):
    # The cooperative kernel never runs under the interpreter: compile it for an H100/H200 here, and check
    # that the barrier's release add and acquire loads survive into the PTX (see test_compile_sm90.py).
    compiled_check(SM90_SCRIPT)


# ---- review (issue 15): masked chunks far below 0, rows of -inf only, "auto", the occupancy fallback --------


@triton.jit
def _scale_probe(S, M, L, E, Y):
    i = tl.arange(0, 4)
    scale = sm._chunk_scale(tl.load(S + i), tl.load(M + i), tl.load(L + i))
    tl.store(Y + i, tl.load(E + i) * scale)


def test_chunk_scale_of_a_masked_chunk_is_zero_not_nan(device):
    # The cooperative kernel writes e * _chunk_scale(shift, m_row, l_row). A chunk of -inf only has shift 0 and
    # e = 0; with m_row = -100 the unclamped exp(0 - m_row) is inf and 0 * inf = NaN (the bug this guards).
    # Columns: that chunk; an ordinary chunk (shift <= m_row, must be exp(shift - m_row) * e / l exactly); a
    # row of -inf only (m_row = -inf, l_row = 0: NaN, as torch.softmax); the shift of the row's own max.
    inf = float("inf")
    s, m, l, e = ([0.0, -3.0, 0.0, 2.0], [-100.0, 2.0, -inf, 2.0], [1.0, 5.0, 0.0, 4.0], [0.0, 0.5, 0.0, 1.0])
    t = [torch.tensor(v, device=device) for v in (s, m, l, e)]
    y = torch.full((4,), 7.0, device=device)
    _scale_probe[(1,)](*t, y)
    y = y.cpu()
    assert y[0] == 0 and torch.isnan(y[2])
    assert torch.allclose(y[[1, 3]], torch.tensor([0.5 * math.exp(-5.0) / 5, 0.25]), rtol=1e-6)
    unclamped = torch.tensor(0.0) * (torch.exp(torch.tensor(0.0) - torch.tensor(-100.0)) / 1.0)
    assert torch.isnan(unclamped)  # the check above can fail: the old formula gives NaN


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_split_masked_chunk_in_a_row_of_very_negative_logits(device, gen, dtype):
    # Every finite logit below -88 (where exp(-m) overflows fp32) and whole chunks of -inf between them.
    x = (torch.randn(3, 1000, generator=gen, device=device) - 120).to(dtype)
    x[:, 256:512] = float("-inf")
    y = torch.full_like(x, float("nan"))
    sm.softmax(x, out=y, method="split", block_cols=256)
    _check(y, x, gen.initial_seed())
    assert (y[:, 256:512] == 0).all()


def test_split_row_of_minus_inf_only_is_nan_like_torch(device):
    x = torch.randn(3, 700, device=device)
    x[1] = float("-inf")
    y = sm.softmax(x, method="split", block_cols=128)
    assert torch.isnan(y[1]).all() and torch.isnan(torch.softmax(x[1].cpu(), -1)).all()
    ref = sm.softmax_reference(x)
    assert torch.allclose(y[[0, 2]].double().cpu(), ref[[0, 2]], atol=1e-6)


def test_auto_picks_fused_then_split_then_online(monkeypatch):
    x_short, x_long = torch.empty(2, sm.AUTO_FUSED_MAX_COLS), torch.empty(2, sm.AUTO_FUSED_MAX_COLS + 16)
    monkeypatch.setattr(sm, "INTERPRETED", True)  # the interpreter (on a GPU, such rows stream: below)
    assert sm._auto_method(x_short) == "fused"
    # a row not a multiple of 16 long stays fused (aligned body) as long as the fused kernel holds it
    assert sm._auto_method(torch.empty(2, sm.AUTO_FUSED_MAX_COLS + 1)) == "fused"
    assert sm._auto_method(torch.empty(2, sm.FUSED_MAX_COLS - 1)) == "fused"
    monkeypatch.setattr(sm, "INTERPRETED", False)  # a GPU: split only when the cooperative plan exists
    for coop, expected in ((True, "split"), (False, "online")):
        plan = sm.SplitPlan(1024, 8, False, 33, coop)
        monkeypatch.setattr(sm, "split_plan", lambda x, plan=plan: plan)
        assert sm._auto_method(x_long) == expected
        assert sm._auto_method(x_short) == "fused"
        assert sm._auto_method(torch.empty(2, sm.FUSED_MAX_COLS + 4)) == expected
        # on a GPU, long rows that do not all start 16-byte aligned stream (aligned bodies)
        assert sm._auto_method(torch.empty(2, sm.FUSED_MAX_COLS + 1)) == "stream"
        assert sm._auto_method(torch.empty(2, 50257, dtype=torch.float16)) == "stream"
        wide = torch.empty(2, 50304, dtype=torch.float16)[:, :50257]  # aligned rows, a contiguous out that is not
        assert sm._auto_method(wide, torch.empty(2, 50257, dtype=torch.float16)) == "stream"
        assert sm._auto_method(wide, torch.empty(2, 50304, dtype=torch.float16)[:, :50257]) == "fused"
        assert sm._auto_method(torch.empty(2, sm.STREAM_AUTO_UNALIGNED_MIN_COLS - 1)) == "fused"
    monkeypatch.setattr(sm, "INTERPRETED", True)  # the interpreter: always the two-launch split
    assert sm._auto_method(x_long) == "split"
    assert sm._auto_method(torch.empty(2, 50257, dtype=torch.float16)) == "fused"


def test_auto_gives_aligned_16_bit_rows_of_the_gluon_range_to_gluon_on_hopper(monkeypatch):
    from gpuperf.kernels import gluon_softmax

    lo, hi = sm.GLUON_AUTO_COLS

    class FakeCuda(torch.Tensor):  # a CPU tensor that claims to live on a GPU; the probe is patched
        is_cuda = True

    def fake(cols, dtype=torch.float16, stride=None, rows=sm.GLUON_AUTO_MIN_ROWS):
        return torch.empty(rows, stride or cols, dtype=dtype)[:, :cols].as_subclass(FakeCuda)

    monkeypatch.setattr(sm, "INTERPRETED", False)
    monkeypatch.setattr(sm, "split_plan", lambda x: sm.SplitPlan(1024, 8, False, 33, True))
    monkeypatch.setattr(gluon_softmax, "usable_for", lambda x: gluon_softmax.Availability(True, ""))
    for cols in (lo + 16, 32000, 65536, hi):
        assert sm.gluon_takes(fake(cols)) and sm._auto_method(fake(cols)) == "gluon", cols
        assert sm.gluon_takes(fake(cols, torch.bfloat16))
    assert not sm.gluon_takes(fake(lo)) and sm._auto_method(fake(lo)) == "fused"
    assert not sm.gluon_takes(fake(hi + 16)) and sm._auto_method(fake(hi + 16)) == "split"
    assert not sm.gluon_takes(fake(32000, torch.float32))  # fp32: not measured
    assert not sm.gluon_takes(fake(32000, rows=sm.GLUON_AUTO_MIN_ROWS - 1))  # a decoding step's few rows
    assert not sm.gluon_takes(fake(50257))  # a row stride of 100514 bytes: not 16-byte aligned
    assert sm.gluon_takes(fake(50257, stride=50264))  # the same rows padded to an aligned stride
    misaligned_out = fake(32000)
    monkeypatch.setattr(gluon_softmax, "usable_for",  # an out the kernel cannot write: the Triton kernels
                        lambda t: gluon_softmax.Availability(t is not misaligned_out, "misaligned"))
    assert sm._auto_method(fake(32000), fake(32000)) == "gluon"
    assert sm._auto_method(fake(32000), misaligned_out) == "fused"
    padded = fake(50257, stride=50264)  # aligned rows: Gluon, unless out is not aligned (then "stream")
    assert sm._auto_method(padded, fake(50257, stride=50264)) == "gluon"
    assert sm._auto_method(padded, fake(50257)) == "stream"
    monkeypatch.setattr(gluon_softmax, "usable_for", lambda x: gluon_softmax.Availability(False, "Ampere"))
    assert not sm.gluon_takes(fake(32000)) and sm._auto_method(fake(32000)) == "fused"
    monkeypatch.setattr(sm, "INTERPRETED", True)
    monkeypatch.setattr(gluon_softmax, "usable_for", lambda x: gluon_softmax.Availability(True, ""))
    assert not sm.gluon_takes(fake(32000))


def test_method_gluon_takes_no_tuning_options_and_says_where_it_cannot_run(device):
    x = torch.randn(2, 64, device=device)
    with pytest.raises(ValueError, match="takes only num_warps"):
        sm.softmax(x, method="gluon", block_cols=64)
    if device == "cpu" or sm.INTERPRETED:
        with pytest.raises(ValueError, match="Gluon softmax cannot run here|CUDA"):
            sm.softmax(x, method="gluon")


def test_auto_beyond_the_fused_limit_runs_split_correctly(device, gen):
    if not sm.INTERPRETED:
        pytest.skip("interpreter path (the GPU path is test_split_cooperative_gpu)")
    x = torch.randn(1, sm.AUTO_FUSED_MAX_COLS + 48, generator=gen, device=device) * 4
    y = torch.full_like(x, float("nan"))
    sm.softmax(x, out=y)  # "auto": 33 chunks of 1024, the last of 48 columns
    _check(y, x, gen.initial_seed())


def test_cooperative_launch_needs_the_drivers_occupancy():
    # No answer from the driver: 0 resident programs, so no cooperative launch on our own count alone.
    assert sm._resident_per_sm(3, None) == 0
    assert sm._resident_per_sm(3, 2) == 2 and sm._resident_per_sm(3, 4) == 3
    assert sm._n_groups(512, 32, sm._resident_per_sm(3, None) * 132) == 0


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_split_cooperative_masked_chunk_of_very_negative_row_gpu(gen):
    x = (torch.randn(4, 70001, generator=gen, device="cuda") - 120).to(torch.float16)
    x[:, 8192:3 * 8192] = float("-inf")
    for prefetch in (False, True):
        y = torch.full_like(x, float("nan"))
        sm.softmax(x, out=y, method="split", cooperative=True, prefetch=prefetch)
        _check(y, x, gen.initial_seed())
        assert (y[:, 8192:3 * 8192] == 0).all()


# ---- The PyTorch references chapter 13 lists before each kernel -------------------------------------------
REFERENCE_LOOPS = {"three_pass": sm.softmax_three_pass_torch, "fused": sm.softmax_fused_torch,
                   "online": sm.softmax_online_torch}


@pytest.mark.parametrize("name", sorted(REFERENCE_LOOPS))
@pytest.mark.parametrize("shape,block", [((1, 1), 4), ((3, 97), 16), ((2, 1025), 256), ((4, 3000), 1024)])
def test_reference_loops_match_float64(name, shape, block):
    gen = torch.Generator().manual_seed(shape[1] * 7 + block)
    x = torch.randn(shape, generator=gen) * 4
    fn = REFERENCE_LOOPS[name]
    y = fn(x) if name == "fused" else fn(x, block)
    assert y.dtype == torch.float32 and y.shape == x.shape
    assert (y.double() - sm.softmax_reference(x)).abs().max().item() < 1e-6


@pytest.mark.parametrize("name", sorted(REFERENCE_LOOPS))
def test_reference_loops_are_safe_for_large_logits_and_16_bit_input(name):
    # exp(x) overflows fp32 at 88.7: every loop subtracts the (running) maximum first. A row whose
    # maximum grows block after block exercises the online rescaling.
    x = torch.cat([torch.linspace(-50, 900, 700).reshape(1, -1),
                   torch.linspace(900, -50, 700).reshape(1, -1)]).to(torch.float16)
    fn = REFERENCE_LOOPS[name]
    y = fn(x) if name == "fused" else fn(x, 64)
    assert torch.isfinite(y).all()
    assert (y.double() - sm.softmax_reference(x)).abs().max().item() < 1e-6


# ---- Vocabulary rows: "rows", "stream", rows with a stride or at odd offsets, the out= plan ----------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("method", ["rows", "stream"])
@pytest.mark.parametrize("shape", [(1, 1), (3, 17), (5, 300), (4, 1000), (2, 3001)])
def test_vocab_methods_match_float64(device, gen, dtype, method, shape):
    x = (torch.randn(shape, generator=gen, device=device) * 4).to(dtype)
    y = torch.full_like(x, float("nan"))
    sm.softmax(x, out=y, method=method, **({"block_cols": 64} if method == "stream" else {}))
    _check(y, x, gen.initial_seed())


@pytest.mark.parametrize("method", ["auto", "fused", "rows", "stream", "online", "split", "three_pass"])
@pytest.mark.parametrize("start", [0, 3])
def test_rows_with_a_stride_and_at_odd_offsets_as_torch_takes_them(device, gen, method, start):
    # A slice of wider logits (a row stride of 131 elements) starting `start` elements into its storage:
    # every row starts at another offset modulo 16 bytes; the result is contiguous, as torch.softmax's.
    wide = (torch.randn(5, 131, generator=gen, device=device) * 4).half()
    x = wide[:, start:start + 97]
    kw = {"block_cols": 32} if method in ("stream", "online", "split", "three_pass") else {}
    y = sm.softmax(x, method=method, **kw)
    assert y.is_contiguous() and y.shape == x.shape
    _check(y, x, gen.initial_seed())
    flat = (torch.randn(5 * 97 + 3, generator=gen, device=device) * 4).half()[3:].view(5, 97)  # contiguous
    _check(sm.softmax(flat, method=method, **kw), flat, gen.initial_seed())


def test_out_with_a_stride_is_written_only_in_its_rows(device, gen):
    x = (torch.randn(4, 50, generator=gen, device=device) * 4).half()
    wide = torch.zeros(4, 64, device=device, dtype=x.dtype)
    sm.softmax(x, out=wide[:, 5:55], method="stream", block_cols=16)
    _check(wide[:, 5:55], x, gen.initial_seed())
    assert not wide[:, :5].any() and not wide[:, 55:].any()


def test_rows_with_a_column_stride_are_refused(device):
    with pytest.raises(ValueError, match="contiguous rows"):
        sm.softmax(torch.randn(8, 4, device=device).t())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="plans exist for compiled kernels only")
def test_the_plan_cache_serves_repeated_calls_with_and_without_out():
    x = torch.randn(64, 1024, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    for out in (None, y):
        sm.softmax(x, out=out)  # the first call of each kind may build a plan
        built = sm.PLAN_BUILDS
        for _ in range(5):
            z = sm.softmax(x, out=out)
        assert sm.PLAN_BUILDS == built, "a repeated call built another plan"
        _check(z, x, 0)
    with pytest.raises(ValueError, match="overlap"):
        sm.softmax(x, out=x)  # the fast path still refuses an out that overlaps x


@pytest.mark.parametrize("cooperative", [True, None])
@pytest.mark.parametrize("shape, start", [((7, 5000), 0), ((5, 4099), 3), ((30, 2100), 1), ((2, 100), 0)])
def test_stream_with_a_row_over_cooperating_programs(device, gen, shape, start, cooperative):
    # cooperative=True: one launch whose programs meet at a barrier (a GPU only); None with chunk_cols: the
    # same kernel as two launches, before and after the barrier (the interpreter runs that).
    if cooperative and device != "cuda":
        pytest.skip("programs that wait for each other need a GPU")
    kw = {"cooperative": cooperative, "block_cols": 64 if device == "cpu" else 256, "chunk_cols": 1024}
    wide = (torch.randn(shape[0], shape[1] + 8, generator=gen, device=device) * 4).half()
    x = wide[:, start:start + shape[1]]
    y = sm.softmax(x, method="stream", programs_per_sm=2, **kw)
    _check(y, x, gen.initial_seed())
    big = torch.full((3, 3000), -200.0, device=device)
    big[:, 2500] = 1000.0  # the maximum in the last chunk only
    _check(sm.softmax(big, method="stream", **{**kw, "chunk_cols": 512}), big, 0)


@pytest.mark.parametrize("method", ["stream", "rows", "auto"])
def test_rows_starting_at_every_offset_modulo_16_bytes(device, gen, method):
    # A row's head (before its first 16-byte boundary) is 0 to 7 fp16 values long: every length once.
    buf = (torch.randn(8 + 3 * 61, generator=gen, device=device) * 4).half()
    for start in range(8):
        x = buf[start:start + 3 * 61].view(3, 61)
        y = sm.softmax(x, method=method, **({"block_cols": 16} if method == "stream" else {}))
        _check(y, x, gen.initial_seed())
