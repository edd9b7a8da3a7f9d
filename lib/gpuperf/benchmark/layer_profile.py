"""Profile one layer of a small Llama-shaped model kernel by kernel, on a CUDA GPU (chapter 10).

The layer (bf16, batch 1, no biases): RMSNorm -> fused QKV projection -> RoPE -> causal attention ->
output projection -> residual add -> RMSNorm -> fused gate/up projection -> SiLU * up -> down projection
-> residual add. Multi-head attention (kv heads = heads), so no key/value head is copied.

Variants (see :func:`run_layer_profile`):

* ``eager``: every operator written out of PyTorch primitives, one kernel each (RMSNorm as pow, mean,
  add, rsqrt, mul, mul; attention as QK^T, scale, mask, softmax, PV), each wrapped in
  ``record_function("ledger:<op>")`` so kernels can be attributed to the ledger's operators
  (:data:`gpuperf.ledger.PROFILE_OPERATORS`).
* ``eager_sdpa``: the same with ``F.scaled_dot_product_attention(is_causal=True)`` as the attention.
* ``compiled``: the ``eager`` function through ``torch.compile`` (default mode); its kernels are grouped
  by name (Inductor fuses across operators, so no per-operator attribution is possible).
* ``decode_eager`` at batch 1 and 32 with a KV cache of 4096 tokens (the ``eager`` attention).

Each kernel's time is its GPU duration in the profiler trace (CUPTI), averaged over the profiled
iterations; each wall time is measured on the same layer without the ``record_function`` ranges
(``annotate=False``), as the compiled variant runs (runs recorded before 2026-12-01 timed the eager
variants with the ranges in place: their provenance lacks ``wall_time_without_ranges``). Every variant is first checked against a float32 run of the same layer. torch is imported
inside the functions (``import gpuperf.benchmark.layer_profile`` works without it). ``bench/ledger_profile.py``
records a run with it.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

CONFIG = {"d_model": 2048, "n_heads": 16, "head_dim": 128, "d_ff": 5632, "seq_len": 2048, "batch": 1}
DECODE = {"context": 4096, "batches": [1, 32]}
ROPE_THETA = 10000.0


def make_weights(cfg, dtype, device, seed=0):
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    d, h, dh, ff = cfg["d_model"], cfg["n_heads"], cfg["head_dim"], cfg["d_ff"]

    def w(*shape, fan_in):
        return (torch.randn(*shape, generator=g) / math.sqrt(fan_in)).to(device=device, dtype=dtype)

    return {
        "norm1": (1.0 + 0.1 * torch.randn(d, generator=g)).to(device=device, dtype=dtype),
        "w_qkv": w(3 * h * dh, d, fan_in=d),
        "w_o": w(d, h * dh, fan_in=h * dh),
        "norm2": (1.0 + 0.1 * torch.randn(d, generator=g)).to(device=device, dtype=dtype),
        "w_gate_up": w(2 * ff, d, fan_in=d),
        "w_down": w(d, ff, fan_in=ff),
    }


def rope_tables(positions, head_dim, dtype, device):
    import torch

    inv = 1.0 / ROPE_THETA ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    ang = positions.to(torch.float64)[:, None] * inv[None, :]
    ang = torch.cat([ang, ang], dim=-1)  # (T, dh)
    return ang.cos().to(device=device, dtype=dtype), ang.sin().to(device=device, dtype=dtype)


def _ann(name, on):
    if not on:
        return _Null()
    from torch.profiler import record_function

    return record_function(f"ledger:{name}")


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def rmsnorm_primitives(x, w, eps=1e-5):
    sq = x.pow(2)
    ms = sq.mean(-1, keepdim=True)
    t = ms + eps
    rs = t.rsqrt()
    return x * rs * w


def rope_primitives(x, cos, sin):
    import torch

    # x: (T, H, dh); cos, sin: (T, 1, dh)
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    rotated = torch.cat((-x2, x1), dim=-1)
    return x * cos + rotated * sin


def _output_and_mlp(x, o, wts, annotate):
    """The layer after attention, the same for prefill and decode: output projection of the attention
    output ``o`` (rows, h dh), residual, RMSNorm, SwiGLU MLP, residual; each step in its ``ledger:`` range."""
    import torch.nn.functional as F

    with _ann("o_proj", annotate):
        a = F.linear(o, wts["w_o"])
    with _ann("residual_1", annotate):
        x = x + a
    with _ann("mlp_norm", annotate):
        hn = rmsnorm_primitives(x, wts["norm2"])
    with _ann("gate_up_proj", annotate):
        gu = F.linear(hn, wts["w_gate_up"])
    gate, up = gu.chunk(2, dim=-1)
    with _ann("silu", annotate):
        g = F.silu(gate)
    with _ann("gate_mul", annotate):
        m = g * up
    with _ann("down_proj", annotate):
        dn = F.linear(m, wts["w_down"])
    with _ann("residual_2", annotate):
        x = x + dn
    return x


def layer_prefill(x, wts, cos, sin, mask, cfg, attention="naive", annotate=True):
    """One layer on x of shape (T, d) (batch 1). ``attention``: "naive" or "sdpa"."""
    import torch
    import torch.nn.functional as F

    T = x.shape[0]
    h, dh = cfg["n_heads"], cfg["head_dim"]
    with _ann("attn_norm", annotate):
        hn = rmsnorm_primitives(x, wts["norm1"])
    with _ann("qkv_proj", annotate):
        qkv = F.linear(hn, wts["w_qkv"])
    q = qkv[:, : h * dh].view(T, h, dh)
    k = qkv[:, h * dh: 2 * h * dh].view(T, h, dh)
    v = qkv[:, 2 * h * dh:].view(T, h, dh)
    with _ann("rope", annotate):
        q = rope_primitives(q, cos, sin)
        k = rope_primitives(k, cos, sin)
    qh, kh, vh = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)  # (H, T, dh) views
    if attention == "naive":
        with _ann("attn_scores", annotate):
            s = torch.matmul(qh, kh.transpose(1, 2))
        with _ann("attn_scale", annotate):
            s = s * (1.0 / math.sqrt(dh))
        with _ann("attn_mask", annotate):
            s = s.masked_fill(mask, float("-inf"))
        with _ann("attn_softmax", annotate):
            p = torch.softmax(s, dim=-1)
        with _ann("attn_pv", annotate):
            o = torch.matmul(p, vh)
    else:
        with _ann("attention", annotate):
            o = F.scaled_dot_product_attention(qh[None], kh[None], vh[None], is_causal=True)[0]
    with _ann("o_layout", annotate):
        o = o.transpose(0, 1).reshape(T, h * dh)
    return _output_and_mlp(x, o, wts, annotate)


def layer_decode(x, wts, cos, sin, k_cache, v_cache, cfg, annotate=True):
    """One decode step: x (B, d), one new token per sequence at position C; caches (B, H, C, dh) hold the
    C earlier tokens. The new key/value are not appended (the append is one small copy; not profiled)."""
    import torch
    import torch.nn.functional as F

    B = x.shape[0]
    h, dh = cfg["n_heads"], cfg["head_dim"]
    with _ann("attn_norm", annotate):
        hn = rmsnorm_primitives(x, wts["norm1"])
    with _ann("qkv_proj", annotate):
        qkv = F.linear(hn, wts["w_qkv"])
    q = qkv[:, : h * dh].view(B, h, dh)
    k = qkv[:, h * dh: 2 * h * dh].view(B, h, dh)
    with _ann("rope", annotate):
        q = rope_primitives(q, cos, sin)
        k = rope_primitives(k, cos, sin)
    with _ann("attn_scores", annotate):
        s = torch.matmul(q[:, :, None, :], k_cache.transpose(2, 3))  # (B, H, 1, C)
    with _ann("attn_scale", annotate):
        s = s * (1.0 / math.sqrt(dh))
    with _ann("attn_softmax", annotate):
        p = torch.softmax(s, dim=-1)
    with _ann("attn_pv", annotate):
        o = torch.matmul(p, v_cache)  # (B, H, 1, dh)
    o = o.reshape(B, h * dh)
    return _output_and_mlp(x, o, wts, annotate)


# --------------------------------------------------------------------------------------------------
# Trace parsing: attribute each GPU kernel to the innermost "ledger:" range around its launch
# --------------------------------------------------------------------------------------------------


def kernels_from_trace(trace_path, n_iters):
    events = json.loads(Path(trace_path).read_text())["traceEvents"]
    anns = [e for e in events if e.get("cat") == "user_annotation" and "dur" in e]
    iters = sorted((e for e in anns if e["name"].startswith("iter:")), key=lambda e: e["ts"])
    ledger = [e for e in anns if e["name"].startswith("ledger:")]
    launches = {}
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launches[e["args"]["correlation"]] = e["ts"]
    out = []
    for e in events:
        if e.get("cat") != "kernel":
            continue
        corr = e.get("args", {}).get("correlation")
        ts = launches.get(corr)
        op, it = None, None
        if ts is not None:
            inside = [a for a in ledger if a["ts"] <= ts <= a["ts"] + a["dur"]]
            if inside:
                op = min(inside, key=lambda a: a["dur"])["name"][len("ledger:"):]
            for i, a in enumerate(iters):
                if a["ts"] <= ts <= a["ts"] + a["dur"]:
                    it = i
        out.append({"name": e["name"], "dur_us": float(e["dur"]), "op": op, "iter": it})
    return out


def summarize_kernels(kernels, n_iters):
    """Mean GPU time per (op, kernel name) per iteration, keeping the launch order of the first iteration."""
    rows, order = {}, []
    for k in kernels:
        if k["iter"] is None:
            continue
        key = (k["op"], k["name"])
        if key not in rows:
            rows[key] = []
            order.append(key)
        rows[key].append(k["dur_us"])
    result = []
    for key in order:
        durs = rows[key]
        result.append({
            "op": key[0],
            "kernel": key[1][:200],
            "launches_per_iter": len(durs) / n_iters,
            "time_s": sum(durs) / n_iters * 1e-6,
        })
    return result


def profile_variant(fn, n_warmup=3, n_iters=5):
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    for _ in range(n_warmup):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(n_iters):
            with record_function(f"iter:{i}"):
                fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        kernels = kernels_from_trace(path, n_iters)
    return summarize_kernels(kernels, n_iters)


def wall_time_s(fn, n=20):
    """Median wall time of one call (CUDA events). Pass a function without ``record_function`` ranges
    (``annotate=False``): the ranges cost Python dispatches even when no profiler runs."""
    import torch

    for _ in range(3):
        fn()
    times = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e-3)
    return statistics.median(times)


def max_rel_error(out, ref):
    return float((out.double() - ref.double()).abs().max() / ref.double().abs().max())


def run_layer_profile(compile_layer: bool = True, log=None, on_partial=None):
    """Profile every variant on the current CUDA GPU; return ``(results, checks)``.

    ``results`` is the list of result rows a recorded run holds (variant, phase, batch, seq_len or
    context, wall_time_s, kernels); ``checks`` maps each variant to its max error over max |ref| against
    a float32 run. ``log(str)`` receives progress lines; ``on_partial(results, checks)`` is called before
    the (slow) compile step, so a caller can save what it has. Raises ``ValueError`` without CUDA.
    """
    import torch

    if not torch.cuda.is_available():
        raise ValueError("run_layer_profile needs a CUDA GPU; torch.cuda.is_available() is False")
    log = log or (lambda line: None)
    t_start = time.time()
    dev, dt, cfg = "cuda", torch.bfloat16, CONFIG
    T, d, h, dh = cfg["seq_len"], cfg["d_model"], cfg["n_heads"], cfg["head_dim"]
    wts = make_weights(cfg, dt, dev)
    g = torch.Generator(device="cpu").manual_seed(1)
    x = torch.randn(T, d, generator=g).to(dev, dt)
    cos, sin = rope_tables(torch.arange(T), dh, dt, dev)
    cos, sin = cos[:, None, :], sin[:, None, :]
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool, device=dev), diagonal=1)

    # Correctness: every variant against a float32 run of the same layer.
    wts32 = {k: v.float() for k, v in wts.items()}
    ref = layer_prefill(x.float(), wts32, cos.float(), sin.float(), mask, cfg, "naive", False)
    checks = {}
    eager_fn = lambda: layer_prefill(x, wts, cos, sin, mask, cfg, "naive", True)  # noqa: E731
    sdpa_fn = lambda: layer_prefill(x, wts, cos, sin, mask, cfg, "sdpa", True)  # noqa: E731
    checks["eager"] = max_rel_error(eager_fn(), ref)
    checks["eager_sdpa"] = max_rel_error(sdpa_fn(), ref)
    log(f"max relative error vs float32: {checks}")

    results = []

    def add(variant, phase, batch, seq_or_ctx, rows, wall_s):
        results.append({
            "variant": variant, "phase": phase, "batch": batch,
            "seq_len" if phase == "prefill" else "context": seq_or_ctx,
            "wall_time_s": wall_s, "kernels": rows,
        })
        total = sum(r["time_s"] for r in rows)
        log(f"{variant} {phase} B={batch}: {len(rows)} kernel kinds, GPU sum {total*1e6:.1f} us, "
            f"wall {wall_s*1e6:.1f} us  [{time.time()-t_start:.1f}s]")

    # Wall times without the record_function ranges: each range dispatches from Python on entry and
    # exit even with no profiler running, a cost the compiled variant (no ranges) would not pay.
    eager_plain = lambda: layer_prefill(x, wts, cos, sin, mask, cfg, "naive", False)  # noqa: E731
    sdpa_plain = lambda: layer_prefill(x, wts, cos, sin, mask, cfg, "sdpa", False)  # noqa: E731
    add("eager", "prefill", 1, T, profile_variant(eager_fn), wall_time_s(eager_plain))
    add("eager_sdpa", "prefill", 1, T, profile_variant(sdpa_fn), wall_time_s(sdpa_plain))

    # Decode with a KV cache of C tokens.
    C = DECODE["context"]
    cosd, sind = rope_tables(torch.tensor([C]), dh, dt, dev)
    cosd, sind = cosd[:, None, :], sind[:, None, :]  # (1, 1, dh) broadcasts over (B, H, dh)
    for B in DECODE["batches"]:
        xd = torch.randn(B, d, generator=g).to(dev, dt)
        kc = torch.randn(B, h, C, dh, generator=g).to(dev, dt)
        vc = torch.randn(B, h, C, dh, generator=g).to(dev, dt)
        dec = lambda: layer_decode(xd, wts, cosd, sind, kc, vc, cfg, True)  # noqa: E731
        dec_plain = lambda: layer_decode(xd, wts, cosd, sind, kc, vc, cfg, False)  # noqa: E731
        add("decode_eager", "decode", B, C, profile_variant(dec), wall_time_s(dec_plain))
        del kc, vc

    if on_partial is not None:
        on_partial(results, dict(checks))
    if compile_layer:
        plain = lambda x_: layer_prefill(x_, wts, cos, sin, mask, cfg, "naive", False)  # noqa: E731
        compiled = torch.compile(plain)
        t0 = time.time()
        out = compiled(x)
        torch.cuda.synchronize()
        checks["compile_time_s"] = time.time() - t0
        checks["compiled"] = max_rel_error(out, ref)
        log(f"compiled in {checks['compile_time_s']:.1f} s; error {checks['compiled']:.3g}")
        comp_fn = lambda: compiled(x)  # noqa: E731
        add("compiled", "prefill", 1, T, profile_variant(comp_fn), wall_time_s(comp_fn))
    return results, checks


@dataclass
class ChapterProfile:
    """The layer profile a chapter shows: the run (provenance and result rows), the layer's shape, the
    device the ledger prices it on, whether it was profiled live, and lines saying where each part came
    from (:meth:`describe`)."""

    run: dict
    config: dict
    device: str
    live: bool
    sources: list = field(default_factory=list)

    def describe(self, width: int = 88) -> str:
        """Where the run came from, in lines of at most `width` characters (a page's code column)."""
        lines = [*self.sources, f"ledger bounds priced on the {self.device}"]
        return "\n".join(textwrap.fill(line, width) for line in lines)


def chapter_profile(record: str = "ledger_profile_h200", tolerance: float = 0.05) -> ChapterProfile:
    """Profile this GPU live when it can run a bf16 layer (CUDA, compute capability 8.0 or newer), with
    the compiled variant taken from the recorded run `record` (compiling takes minutes); otherwise load
    `record`. The ledger prices the run on its own device when the hardware table has all its roofs,
    else on the H200 SXM. Raises ValueError if a live variant differs from float32 by `tolerance` or more.
    """
    from gpuperf import hardware, ledger
    from gpuperf import records as recorded

    live = recorded.cuda_available()
    if live:
        import torch

        live = torch.cuda.get_device_capability() >= (8, 0)
    sources = []
    if live:
        results, checks = run_layer_profile(compile_layer=False)
        if not max(checks.values()) < tolerance:
            raise ValueError(f"tolerance: a variant differs from float32 by more than {tolerance}: {checks}")
        saved = recorded.load_run(record)
        run = {"provenance": recorded.provenance("live run in chapter 10"),
               "results": results + [r for r in saved["results"] if r["variant"] == "compiled"]}
        run["provenance"]["config"] = json.dumps(CONFIG)
        sources.append("compiled variant from the recorded run: " + recorded.describe_provenance(saved))
    else:
        run = recorded.load_run(record)
    sources.append(recorded.describe_provenance(run))
    try:
        device = hardware.get_accelerator(run["provenance"]["device"]).name
        ledger.device_roofs(device)
    except ValueError:
        device = "H200 SXM"
    return ChapterProfile(run, json.loads(run["provenance"]["config"]), device, live, sources)
