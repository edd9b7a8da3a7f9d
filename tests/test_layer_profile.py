"""Tests for gpuperf.benchmark.layer_profile on the CPU: the layer's two attention forms agree with a float64
reference, decode matches the last row of prefill, and the trace parser attributes kernels."""

import json

import pytest

torch = pytest.importorskip("torch")

from gpuperf.benchmark import layer_profile as lp  # noqa: E402

CFG = {"d_model": 64, "n_heads": 4, "head_dim": 16, "d_ff": 96, "seq_len": 97, "batch": 1}


def _inputs(dtype, T=97, seed=0):
    g = torch.Generator().manual_seed(seed)
    print("seed", seed)
    w = lp.make_weights(CFG, dtype, "cpu", seed=seed)
    x = torch.randn(T, CFG["d_model"], generator=g).to(dtype)
    cos, sin = lp.rope_tables(torch.arange(T), CFG["head_dim"], dtype, "cpu")
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    return w, x, cos[:, None], sin[:, None], mask


@pytest.mark.parametrize("T", [1, 97])
def test_naive_and_sdpa_attention_agree_with_float64(T):
    w, x, cos, sin, mask = _inputs(torch.float32, T)
    ref = lp.layer_prefill(x.double(), {k: v.double() for k, v in w.items()}, cos.double(), sin.double(),
                           mask, CFG, "naive", False)
    for form in ("naive", "sdpa"):
        out = lp.layer_prefill(x, w, cos, sin, mask, CFG, form, True)
        assert lp.max_rel_error(out, ref) < 1e-5


def test_decode_matches_prefill_attention_over_the_cache():
    # The decode step attends to the C cached keys only; build the same thing with prefill's pieces.
    T = 9
    w, x, cos, sin, mask = _inputs(torch.float64, T)
    h, dh = CFG["n_heads"], CFG["head_dim"]
    hn = lp.rmsnorm_primitives(x, w["norm1"])
    qkv = torch.nn.functional.linear(hn, w["w_qkv"])
    k = lp.rope_primitives(qkv[:, h * dh:2 * h * dh].view(T, h, dh), cos, sin)
    v = qkv[:, 2 * h * dh:].view(T, h, dh)
    kc, vc = k.transpose(0, 1)[None].contiguous(), v.transpose(0, 1)[None].contiguous()
    cd, sd = lp.rope_tables(torch.tensor([T]), dh, torch.float64, "cpu")
    xd = torch.randn(1, CFG["d_model"], dtype=torch.float64)
    out = lp.layer_decode(xd, w, cd[:, None], sd[:, None], kc, vc, CFG, False)
    # Reference: append the new token to the sequence, give it full attention over the T cached keys.
    q = lp.rope_primitives(torch.nn.functional.linear(lp.rmsnorm_primitives(xd, w["norm1"]), w["w_qkv"])
                           [:, :h * dh].view(1, h, dh), cd[:, None], sd[:, None])
    att = torch.softmax(torch.einsum("qhd,khd->hqk", q, k) / dh ** 0.5, -1)
    o = torch.einsum("hqk,khd->qhd", att, v).reshape(1, h * dh)
    x1 = xd + torch.nn.functional.linear(o, w["w_o"])
    gu = torch.nn.functional.linear(lp.rmsnorm_primitives(x1, w["norm2"]), w["w_gate_up"])
    gate, up = gu.chunk(2, -1)
    ref = x1 + torch.nn.functional.linear(torch.nn.functional.silu(gate) * up, w["w_down"])
    assert torch.allclose(out, ref, rtol=1e-12, atol=1e-12)


def test_trace_parser_attributes_kernels_to_the_innermost_range(tmp_path):
    events = [
        {"cat": "user_annotation", "name": "iter:0", "ts": 0, "dur": 100},
        {"cat": "user_annotation", "name": "ledger:qkv_proj", "ts": 10, "dur": 20},
        {"cat": "user_annotation", "name": "ledger:rope", "ts": 40, "dur": 20},
        {"cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 15, "args": {"correlation": 1}},
        {"cat": "cuda_driver", "name": "cuLaunchKernelEx", "ts": 45, "args": {"correlation": 2}},
        {"cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 46, "args": {"correlation": 3}},
        {"cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 200, "args": {"correlation": 4}},
        {"cat": "kernel", "name": "gemm", "dur": 7.0, "args": {"correlation": 1}},
        {"cat": "kernel", "name": "mul", "dur": 2.0, "args": {"correlation": 2}},
        {"cat": "kernel", "name": "mul", "dur": 4.0, "args": {"correlation": 3}},
        {"cat": "kernel", "name": "warmup", "dur": 9.0, "args": {"correlation": 4}},
    ]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    kernels = lp.kernels_from_trace(path, 1)
    assert [(k["name"], k["op"], k["iter"]) for k in kernels] == [
        ("gemm", "qkv_proj", 0), ("mul", "rope", 0), ("mul", "rope", 0), ("warmup", None, None)]
    rows = lp.summarize_kernels(kernels, 1)
    assert rows == [
        {"op": "qkv_proj", "kernel": "gemm", "launches_per_iter": 1.0, "time_s": pytest.approx(7e-6)},
        {"op": "rope", "kernel": "mul", "launches_per_iter": 2.0, "time_s": pytest.approx(6e-6)},
    ]


def test_chapter_profile_without_a_gpu_loads_the_record(monkeypatch):
    from gpuperf import records as recorded

    monkeypatch.setattr(recorded, "cuda_available", lambda: False)
    profile = lp.chapter_profile()
    assert not profile.live and profile.device == "H200 SXM"
    assert profile.config == lp.CONFIG
    assert {r["variant"] for r in profile.run["results"]} >= {"eager", "eager_sdpa", "compiled"}
    text = profile.describe()
    assert "H200" in text and all(len(line) <= 88 for line in text.splitlines())
