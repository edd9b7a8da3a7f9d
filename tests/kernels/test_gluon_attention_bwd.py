"""The Gluon FlashAttention backward: its loop bounds on the CPU, its compile for sm_90 on the CPU (with
registers and spills), its gradients on a Hopper GPU against float64.

The kernel runs only on a Hopper GPU (Gluon does not run under the Triton interpreter); the GPU tests are
marked ``gpu`` and skipped unless :func:`gpuperf.kernels.gluon_attention_bwd.available`.
"""

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gpuperf.kernels import gluon_attention_bwd as gab


# ---- loop bounds (pure) ----------------------------------------------------------------------------------


def _visible(m_block, start_n, n_q, n_k, block_m, block_n, causal):
    """Does some query of block m_block see some key of the key block at start_n? (The last query of the
    block, min(end, n_q) - 1, sees the most keys: compare it with the first key.)"""
    last_query = min((m_block + 1) * block_m, n_q) - 1
    if m_block * block_m >= n_q or start_n >= n_k:
        return False
    return not causal or start_n <= last_query


def _whole(m_block, start_n, n_q, n_k, block_m, block_n, causal):
    """Is the block pair free of masking: every row and key in range and every pair visible?"""
    if (m_block + 1) * block_m > n_q or start_n + block_n > n_k:
        return False
    return not causal or m_block * block_m >= start_n + block_n - 1


@pytest.mark.parametrize("n_q, n_k", [(333, 333), (200, 333), (1000, 1000), (64, 64), (128, 512),
                                      (513, 130), (1, 1), (257, 257)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("block_m, block_n", [(64, 128), (64, 64)])
def test_query_block_ranges_cover_every_visible_pair(n_q, n_k, causal, block_m, block_n):
    n_blocks = -(-n_q // block_m)
    for start_n in range(0, n_k, block_n):
        masked1, whole, masked2 = gab.query_block_ranges(start_n, n_q, n_k, block_m, block_n, causal)
        visited = list(masked1) + list(whole) + list(masked2)
        assert visited == sorted(set(visited))  # contiguous, in order, no block twice
        assert visited == list(range(visited[0], visited[-1] + 1)) if visited else True
        for m in range(n_blocks):
            if _visible(m, start_n, n_q, n_k, block_m, block_n, causal):
                assert m in visited, (start_n, m)
        for m in whole:  # the unmasked loop only gets blocks that need no mask
            assert _whole(m, start_n, n_q, n_k, block_m, block_n, causal), (start_n, m)


def test_availability_says_why_not():
    status = gab.available()
    if not status:
        assert status.reason
    assert not gab.usable_for(*(torch.zeros(1, 1, 8, 64),) * 4)  # CPU tensors


def test_launch_options():
    assert gab.launch_options(False, 8) == {"num_warps": 8}
    opts = gab.launch_options(True, 8)
    assert opts["num_warps"] == 8
    # 8 consumer warps + the producer's warpgroup at the register limit fit the SM's 65536 registers,
    # and leave the consumers 240 after the producer gives back all but PRODUCER_REGS.
    assert opts["maxnreg"] * (8 + 4) * 32 <= 65536
    assert gab.consumer_registers() == 240 == gab.consumer_registers(opts["maxnreg"], 8)


# ---- compiled for sm_90 on the CPU ------------------------------------------------------------------------

_COMPILE = r'''
import re, subprocess, tempfile
import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.runtime.jit import mangle_type
from triton.experimental.gluon import GluonASTSource
import gpuperf.kernels.gluon_attention_bwd as g
from gpuperf.benchmark.compiled import cuda_tool
from gpuperf.hardware import get_sm_limits

smem_max = get_sm_limits("H200 SXM").max_shared_memory_per_block_bytes
cases = [(64, True, False, torch.bfloat16, False), (64, False, True, torch.float16, False),
         (128, True, False, torch.bfloat16, False), (128, False, True, torch.bfloat16, False),
         (128, True, True, torch.bfloat16, True)]
for d, causal, ws, dtype, dqt in cases:
    bn, bm, st, w, _, dqp, lv = g.CONFIGS[d]
    if dqt:  # dQ^T = K^T dS^T with 32-query blocks: (almost) no spills at d = 128
        bm, dqp = 32, True
    name = {torch.float16: "fp16", torch.bfloat16: "bf16"}[dtype]
    x = torch.empty(2, 2, 256, d, dtype=dtype)
    descs = g.make_descriptors(x, x, x, x, bm, bn)
    const = dict(HEAD_DIM=d, BLOCK_M=bm, BLOCK_N=bn, STAGES=st, CAUSAL=causal, WARPS=w, SPECIALISE=ws,
                 WS_LIST_API=g._WS_LIST_API, PRODUCER_REGS=g.PRODUCER_REGS, DQ_T=dqp, LSE_VEC=lv, DS_SWIZZLE=g.ds_swizzle(bm))
    sig = {"q_desc": mangle_type(descs[0]), "k_desc": mangle_type(descs[1]),
           "v_desc": mangle_type(descs[2]), "do_desc": mangle_type(descs[3]), "lse_ptr": "*fp32",
           "delta_ptr": "*fp32", "dq_ptr": "*fp32", "dk_ptr": f"*{name}", "dv_ptr": f"*{name}",
           "n_q": "i32", "n_k": "i32", "qk_scale_log2": "fp32", "softmax_scale": "fp32",
           **{k: "constexpr" for k in const}}
    attrs = {(i,): [["tt.divisibility", 16]] for i in (4, 5, 6, 7, 8)}
    k = triton.compile(GluonASTSource(fn=g._bwd_kernel, signature=sig, constexprs=const, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=g.launch_options(ws, w))
    ptx = k.asm["ptx"]
    assert "cp.async.bulk.tensor.2d" in ptx and "wgmma.mma_async" in ptx and "mbarrier.try_wait" in ptx
    assert "red.global" in ptx and "membar.gl" not in ptx  # relaxed fp32 reductions of dQ, no fences
    assert k.metadata.shared <= smem_max, k.metadata.shared
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(k.asm["cubin"])
        f.flush()
        res = subprocess.run([cuda_tool("cuobjdump"), "-res-usage", f.name], capture_output=True,
                             text=True, check=True).stdout
        sass = subprocess.run([cuda_tool("cuobjdump"), "-sass", f.name], capture_output=True,
                              text=True, check=True).stdout
    regs = int(re.search(r"REG:(\d+)", res).group(1))
    stack = int(re.search(r"STACK:(\d+)", res).group(1))
    limits = sorted({int(v, 16) for v in re.findall(r"USETMAXREG\.\w+(?:\.\w+)*\s+(?:UP\d,\s*)?0x([0-9a-f]+)",
                                                     sass)})
    if ws:  # consumers raise their limit to 240, the producer drops to PRODUCER_REGS
        assert limits == [g.PRODUCER_REGS, g.consumer_registers()], limits
    print(f"d={d} causal={causal} ws={ws} {name}: {regs} registers, {stack} bytes of stack (spills), "
          f"partition limits {limits}, {k.metadata.shared} bytes of shared memory")
    if d == 64 or (dqt and ws):
        assert stack == 0, stack
print("ok")
'''


@pytest.mark.redundant_on_gpu  # a CPU compile check; on a Hopper GPU the GPU tests run the kernel itself
def test_kernel_compiles_for_sm90():
    """The Gluon backward compiles for sm_90 with this machine's Triton (whose Gluon may differ from the
    H200's 3.6): TMA loads, wgmma, mbarrier waits, relaxed dQ reductions, shared memory within the
    per-block limit; d = 64 without spills; the warp-specialised variant's register limits per
    partition. Prints registers and spills of each case (``pytest -s``)."""
    gluon = pytest.importorskip("triton.experimental.gluon")
    if not hasattr(gluon, "GluonASTSource"):  # Triton 3.6 has no offline compile entry point for Gluon
        pytest.skip(f"triton {getattr(__import__('triton'), '__version__', '?')}: triton.experimental.gluon "
                    f"has no GluonASTSource, which compiling without a GPU needs")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "TRITON_INTERPRET": "0", "PYTHONPATH": str(root / "lib"),
           "TRITON_DEFAULT_FP_FUSION": "1"}
    out = subprocess.run([sys.executable, "-c", _COMPILE], capture_output=True, text=True, env=env,
                         timeout=900)
    if out.returncode != 0 and ("ptxas" in out.stderr or "cuobjdump" in out.stderr) and (
            "not found" in out.stderr or "No such file" in out.stderr):
        pytest.skip("this Triton build has no ptxas / cuobjdump")
    print(out.stdout)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]


@pytest.mark.parametrize("region", ["gluon-bwd-step", "gluon-bwd-producer"])
def test_listings_fit_the_page(region):
    """Chapter 15 shows these regions from the module's source (so also where Gluon does not import)."""
    from gpuperf.plotting.listing import longest_line, source_region

    assert longest_line(source_region(gab, region)) <= 88


# ---- on a Hopper GPU ------------------------------------------------------------------------------------

needs_hopper = pytest.mark.skipif(not gab.available(),
                                  reason=f"needs the Gluon kernel: {gab.available().reason}")
#: name -> (warp-specialised, dQ transposed); dQ transposed runs 32-query blocks at d = 128.
VARIANTS = {"plain": (False, False), "specialised": (True, False), "plain-dqt": (False, True),
            "specialised-dqt": (True, True)}


def _variant_config(d, variant):
    block_n, block_m, stages, warps, _, _, lse_vec = gab.CONFIGS[d]
    specialise, dq_t = VARIANTS[variant]
    if dq_t and d == 128:
        block_m = 32
    return (block_n, block_m, stages, warps, specialise, dq_t, lse_vec)


def _reference(q, k, v, do, causal):
    q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
    s = q64 @ k64.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:  # top-left aligned: query i sees keys j <= i
        keep = torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~keep, float("-inf"))
    o = torch.softmax(s, dim=-1) @ v64
    lse = torch.logsumexp(s, dim=-1)
    grads = torch.autograd.grad(o, (q64, k64, v64), do.double())
    return o.detach(), lse.detach(), grads


@pytest.mark.gpu
@needs_hopper
@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("dtype", list(gab.DTYPES))
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", list(gab.HEAD_DIMS))
@pytest.mark.parametrize("b, h, n_q, n_k", [(1, 2, 333, 333), (2, 1, 200, 333), (1, 1, 1000, 1000),
                                            (1, 3, 64, 64), (1, 1, 1, 7)])
def test_matches_float64_gpu(gen, b, h, n_q, n_k, d, causal, dtype, variant):
    if causal and n_q != n_k:
        pytest.skip("top-left causal with N_q != N_k is covered by the Triton tests")
    q = torch.randn((b, h, n_q, d), generator=gen, device="cuda").to(dtype)
    k, v = (torch.randn((b, h, n_k, d), generator=gen, device="cuda").to(dtype) for _ in range(2))
    do = torch.randn((b, h, n_q, d), generator=gen, device="cuda").to(dtype)
    o64, lse64, ref = _reference(q, k, v, do, causal)
    config = _variant_config(d, variant)
    grads = gab.gluon_attention_backward(q, k, v, o64.to(dtype), lse64.float(), do, causal, config=config)
    unit = {torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}[dtype]
    for name, x, r in zip(("dq", "dk", "dv"), grads, ref):
        assert x.dtype == dtype and x.shape == r.shape
        err = float((x.double() - r).abs().max() / r.abs().max().clamp_min(1e-30))
        assert err <= 16 * unit, f"{name}: relative error {err:.2e} (seed {gen.initial_seed()})"


# ---- dispatch --------------------------------------------------------------------------------------------


def test_dispatch_is_off_until_measured_and_cpu_falls_back(monkeypatch):
    from gpuperf.kernels import flash_attention_bwd as fab

    assert isinstance(fab.GLUON_CASES, frozenset)
    q = torch.zeros(1, 1, 8, 64)
    assert fab._gluon_backward(q, q, q, q, torch.zeros(1, 1, 8), q, False, None) is None
    monkeypatch.setattr(fab, "GLUON_CASES", frozenset({(64, False)}))
    # named, but CPU tensors (or fp32, or the interpreter): the Triton kernels run
    assert fab._gluon_backward(q, q, q, q, torch.zeros(1, 1, 8), q, False, None) is None


@pytest.mark.gpu
@needs_hopper
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", list(gab.HEAD_DIMS))
def test_autograd_through_the_dispatch_gpu(gen, monkeypatch, d, causal):
    from gpuperf.kernels import flash_attention_bwd as fab

    monkeypatch.setattr(fab, "GLUON_CASES", frozenset({(d, causal)}))
    q, k, v, do = (torch.randn((2, 3, 257, d), generator=gen, device="cuda").bfloat16() for _ in range(4))
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
    fab.flash_attention(qg, kg, vg, causal=causal).backward(do)
    _, _, ref = _reference(q, k, v, do, causal)
    for x, r in zip((qg.grad, kg.grad, vg.grad), ref):
        err = float((x.double() - r).abs().max() / r.abs().max())
        assert err <= 16 * 2.0**-8, err


# ---- the schedule drawn in chapter 15 ---------------------------------------------------------------------


@pytest.mark.parametrize("n_blocks, stages", [(4, 2), (5, 3), (1, 1), (3, 1)])
def test_schedule_events_respect_the_ring(n_blocks, stages):
    events = gab.schedule_events(n_blocks, stages)
    loads = {b: (s, e) for lane, _, b, s, e in events if lane.startswith("slot")}
    assert sorted(loads) == list(range(n_blocks))
    first_use = {}
    last_read = {}  # dK: the last product reading Q_i and dO_i
    for lane, label, b, s, e in events:
        if lane == "tensor cores":
            first_use[b] = min(first_use.get(b, s), s)
            if label == "dK":
                last_read[b] = e
    for b in range(n_blocks):
        assert first_use[b] >= loads[b][1]  # the consumers wait for the load
        if b >= stages:
            assert loads[b][0] >= last_read[b - stages]  # the slot was handed back first
    for lane in {ev[0] for ev in events}:  # one thing at a time per lane
        spans = sorted((s, e) for ln, _, _, s, e in events if ln == lane)
        assert all(a[1] <= b[0] + 1e-12 for a, b in zip(spans, spans[1:]))
    with pytest.raises(ValueError):
        gab.schedule_events(0, 2)


# ---- the kernel's arithmetic, emulated block by block on the CPU -----------------------------------------


def _lse64(q, k, causal):
    s = q.double() @ k.double().transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        keep = torch.ones(s.shape[-2:], dtype=torch.bool).tril()
        s = s.masked_fill(~keep, float("-inf"))
    return torch.logsumexp(s, dim=-1)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("b, h, n_q, n_k, d, block_n, block_m", [
    (1, 2, 333, 333, 64, 128, 64),   # ragged: the last blocks read the next head's rows
    (2, 1, 200, 333, 64, 128, 64),   # N_q != N_k
    (1, 3, 64, 64, 128, 128, 64),    # one key block larger than the head
    (2, 2, 130, 130, 16, 64, 64),    # two key blocks, the second ragged (past the tensor's end)
    (1, 1, 1, 7, 16, 64, 64),
])
def test_emulated_kernel_matches_float64(b, h, n_q, n_k, d, block_n, block_m, causal):
    """The kernel's indexing, masks and sums, step by step in float64, give the exact gradients (the
    test of the schedule that can run without a GPU; the Gluon code itself runs only on Hopper)."""
    if causal and n_q != n_k:
        pytest.skip("top-left causal with N_q != N_k: covered by the Triton tests")
    gen = torch.Generator().manual_seed(b * 1000 + n_q + n_k + d + causal)
    q = torch.randn((b, h, n_q, d), generator=gen, dtype=torch.float64)
    k, v = (torch.randn((b, h, n_k, d), generator=gen, dtype=torch.float64) for _ in range(2))
    do = torch.randn((b, h, n_q, d), generator=gen, dtype=torch.float64)
    o64, lse64, ref = _reference(q, k, v, do, causal)
    got = gab.emulate(q, k, v, o64, lse64, do, causal, block_n=block_n, block_m=block_m)
    for name, x, r in zip(("dq", "dk", "dv"), got, ref):
        assert torch.allclose(x, r, rtol=1e-10, atol=1e-10), (name, float((x - r).abs().max()))
    # and with P^T and dS^T rounded to bf16, as the kernel feeds them to the tensor cores: errors near
    # bf16's unit relative to the largest gradient
    got16 = gab.emulate(q, k, v, o64, lse64, do, causal, block_n=block_n, block_m=block_m,
                        operand_dtype=torch.bfloat16)
    for x, r in zip(got16, ref):
        assert float((x - r).abs().max() / r.abs().max().clamp_min(1e-30)) <= 4 * 2.0**-8
