"""Tests for gpuperf.ledger: FLOP against the 2N / 6N rules, bytes against hand counts, the PaLM numbers."""

import itertools
import json
import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf import hardware, ledger as L
from gpuperf import records as recorded

TINY = L.ModelConfig(name="tiny", n_layers=2, d_model=4, n_heads=2, n_kv_heads=1, head_dim=2, d_ff=6,
                     vocab_size=10, gated_mlp=True, norm="rmsnorm", rope=True, tied_embeddings=False)


def op(ops, name):
    (found,) = [o for o in ops if o.name == name]
    return found


@st.composite
def configs(draw):
    kv = draw(st.integers(1, 4))
    group = draw(st.integers(1, 4))
    gated = draw(st.booleans())
    return L.ModelConfig(
        name="random", n_layers=draw(st.integers(1, 6)), d_model=draw(st.integers(1, 96)),
        n_heads=kv * group, n_kv_heads=kv, head_dim=draw(st.integers(1, 64)), d_ff=draw(st.integers(1, 256)),
        vocab_size=draw(st.integers(1, 1000)), gated_mlp=gated, norm="rmsnorm" if gated else "layernorm",
        rope=gated, tied_embeddings=draw(st.booleans()),
    )


PROJECTIONS = {"QKV proj", "out proj", "gate+up proj", "down proj", "fc1", "fc2",
               "out proj + residual", "down proj + residual", "fc2 + residual", "fc1 + GELU"}


# --- parameter counts -------------------------------------------------------------------------------


def test_llama3_8b_has_the_released_parameter_count():
    # 8,030,261,248: the count of the released Llama-3-8B weights (embedding and lm head untied).
    assert L.LLAMA3_8B.n_params == 8_030_261_248


def test_gpt3_is_175b_within_a_percent():
    assert abs(L.GPT3_175B.n_params / 175e9 - 1) < 0.01


def test_tiny_parameter_count_by_hand():
    # QKV 4 x (4 + 2 + 2), out 4 x 4, MLP 3 x 4 x 6, norms 2 x 4 -> 32 + 16 + 72 + 8 = 128 per layer.
    assert TINY.matmul_params_per_layer == 120
    assert TINY.n_params == 2 * 128 + 4 + 2 * 10 * 4


# --- FLOP rules ----------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(configs(), st.integers(1, 4), st.integers(1, 64), st.booleans())
def test_forward_projections_do_2_flop_per_parameter_per_token(model, batch, seq_len, fused):
    ops = L.layer_operators(model, "prefill", batch, seq_len, "bf16", fused)
    proj = sum(o.matrix_flop for o in ops if o.name in PROJECTIONS)
    assert proj == pytest.approx(2 * model.matmul_params_per_layer * batch * seq_len, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(configs(), st.integers(1, 4), st.integers(1, 64), st.booleans())
def test_training_projections_do_6_flop_per_parameter_per_token(model, batch, seq_len, fused):
    ops = L.layer_operators(model, "training", batch, seq_len, "bf16", fused)
    proj = sum(o.matrix_flop for o in ops if o.name.removesuffix(" bwd") in PROJECTIONS)
    assert proj == pytest.approx(6 * model.matmul_params_per_layer * batch * seq_len, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(configs(), st.integers(1, 4), st.integers(1, 64))
def test_training_matmul_flop_per_token_is_palms_6n_plus_12lhqt(model, batch, seq_len):
    # Whole model, naive attention (all N x N scores, as PaLM's formula counts them): matrix FLOP per
    # token = 6 x (matmul parameters incl. the lm head) + 12 L H Q T.
    ops = L.model_operators(model, "training", batch, seq_len, "bf16", fused=False)
    per_token = sum(o.matrix_flop for o in ops) / (batch * seq_len)
    n_matmul = model.n_layers * model.matmul_params_per_layer + model.vocab_size * model.d_model
    expected = L.palm_model_flop_per_token(n_matmul, model.n_layers, model.n_heads, model.head_dim, seq_len)
    assert per_token == pytest.approx(expected, rel=1e-12)


def test_decode_projections_do_2_flop_per_parameter_per_sequence():
    ops = L.layer_operators(L.LLAMA3_8B, "decode", 16, 4096, "bf16")
    proj = sum(o.matrix_flop for o in ops if o.name in PROJECTIONS)
    assert proj == 2 * L.LLAMA3_8B.matmul_params_per_layer * 16


def test_flash_attention_counts_the_causal_half_and_naive_all_pairs():
    b, t, m = 2, 10, TINY
    naive = L.layer_operators(m, "prefill", b, t, fused=False)
    flash = L.layer_operators(m, "prefill", b, t, fused=True)
    qk_pv = op(naive, "attn scores QK^T").matrix_flop + op(naive, "attn PV").matrix_flop
    assert qk_pv == 4 * b * m.n_heads * t * t * m.head_dim
    assert op(flash, "attention (flash)").matrix_flop == 4 * b * m.n_heads * m.head_dim * t * (t + 1) / 2


# --- bytes against hand counts ---------------------------------------------------------------------


def test_bytes_by_hand_tiny_prefill_bf16():
    # n = 3 tokens, d = 4, q_dim = 4, kv_dim = 2, d_ff = 6, b = 2 bytes.
    u = L.layer_operators(TINY, "prefill", 1, 3, "bf16", fused=False)
    f = L.layer_operators(TINY, "prefill", 1, 3, "bf16", fused=True)
    assert op(u, "QKV proj").bytes_moved == (3 * 4 + 4 * 8 + 3 * 8) * 2
    # RMSNorm fused: read x (12) and w (4), write y (12). Unfused: 6 passes, reads 4rc+3r+c, writes 3rc+3r.
    assert op(f, "attn norm").bytes_moved == (12 + 4 + 12) * 2
    assert op(u, "attn norm").bytes_moved == ((48 + 9 + 4) + (36 + 9)) * 2
    assert op(u, "attn norm").kernels == 6
    # RoPE: q has e = 12 elements, k 6; tables 3 x 2 each. Fused: 2e + 2 table per tensor.
    assert op(f, "RoPE").bytes_moved == ((24 + 12) + (12 + 12)) * 2
    # Unfused: 10e + 2 table per tensor.
    assert op(u, "RoPE").bytes_moved == ((120 + 12) + (60 + 12)) * 2
    # Scores: read Q (2 heads x 3 x 2) and K (1 kv head x 3 x 2), write 2 x 3 x 3 scores.
    assert op(u, "attn scores QK^T").bytes_moved == (12 + 6 + 18) * 2
    assert op(u, "attn mask").bytes_moved == 2 * 18 * 2 + 9  # plus the 3 x 3 bool mask
    assert op(u, "attn PV").bytes_moved == (18 + 6 + 12) * 2
    # Flash: read Q, K, V, write O.
    assert op(f, "attention (flash)").bytes_moved == (12 + 6 + 6 + 12) * 2
    # Residual: read two n x d, write one. Fused into the projection: one extra n x d read.
    assert op(u, "residual add").bytes_moved == 3 * 12 * 2
    assert op(f, "out proj + residual").bytes_moved == op(u, "out proj").bytes_moved + 12 * 2
    # SiLU * up: read gate and up (3 x 6 each), write 3 x 6.
    assert op(f, "SiLU * up").bytes_moved == 3 * 18 * 2
    assert op(u, "SiLU").bytes_moved + op(u, "gate * up").bytes_moved == (2 * 18 + 3 * 18) * 2


def test_decode_reads_the_kv_cache_once_per_kv_head():
    m, b, c = L.LLAMA3_8B, 4, 1000
    ops = L.layer_operators(m, "decode", b, c, "bf16", fused=True)
    flash = op(ops, "attention (flash)")
    q_o = 2 * b * m.q_dim
    assert flash.bytes_moved == (q_o + 2 * b * c * m.kv_dim) * 2


def test_layernorm_is_one_kernel_even_unfused_and_matches_the_roofline_catalog():
    from gpuperf import roofline

    ops = L.layer_operators(L.GPT2_MEDIUM, "prefill", 2, 16, "fp16", fused=False)
    ln = op(ops, "attn norm")
    ref = roofline.layernorm(32, 1024, "fp16", fused=True)
    assert ln.kernels == 1 and ln.bytes_moved == ref.bytes_moved and ln.flop == ref.flop


def test_fp8_halves_the_bytes_of_bf16():
    a = L.layer_operators(L.LLAMA3_8B, "decode", 1, 512, "bf16", fused=True)
    b = L.layer_operators(L.LLAMA3_8B, "decode", 1, 512, "fp8", fused=True)
    for x, y in zip(a, b):
        assert y.bytes_moved == pytest.approx(x.bytes_moved / 2)


# --- pricing ----------------------------------------------------------------------------------------


def test_price_is_the_largest_roof_time():
    roofs = L.device_roofs("H200 SXM", "bf16")
    o = L.Operator("x", "matmul", 989.4e12, 66.9e12, 3.9e12, 4.8e12 * 2)
    p = L.price(o, roofs)
    assert (p.matrix_time_s, p.vector_time_s, p.special_time_s) == pytest.approx((1, 1, 1))
    assert p.memory_time_s == pytest.approx(2) and p.time_s == p.memory_time_s and p.bound == "memory"


def test_device_roofs_use_the_hardware_table():
    r = L.device_roofs("H200 SXM", "fp8")
    acc = hardware.get_accelerator("H200 SXM")
    assert r.matrix_flop_per_s == acc.peak_flop_per_s("fp8", "matrix")
    assert r.vector_flop_per_s == acc.peak_flop_per_s("fp32", "vector")
    assert r.special_ops_per_s == hardware.special_function_ops_per_s("H200 SXM")
    assert L.device_roofs("A100 80GB SXM", "fp32").matrix_flop_per_s == 156e12  # TF32


@settings(max_examples=60, deadline=None)
@given(configs(), st.sampled_from(L.PHASES), st.integers(1, 8), st.integers(1, 256))
def test_fused_is_never_slower_and_shares_add_up(model, phase, batch, seq_len):
    u = L.ledger(model, phase, batch, seq_len, "H100 SXM", "bf16", fused=False)
    f = L.ledger(model, phase, batch, seq_len, "H100 SXM", "bf16", fused=True)
    assert f.time_s <= u.time_s * (1 + 1e-12)
    assert f.kernels < u.kernels
    for led in (u, f):
        assert sum(led.share("time", group=g) for g in L.GROUPS) == pytest.approx(1)
        assert sum(led.share("flop", group=g) for g in L.GROUPS) == pytest.approx(1)
        assert led.time_s == pytest.approx(sum(r.time_s for r in led.rows))
        assert sum(led.group_times_s().values()) == pytest.approx(led.time_s)


def test_decode_at_batch_1_is_reading_the_weights():
    led = L.ledger("Llama-3-8B", "decode", 1, 1024, "H200 SXM", "bf16", fused=True, scope="model")
    weights = (L.LLAMA3_8B.n_layers * L.LLAMA3_8B.matmul_params_per_layer
               + L.LLAMA3_8B.vocab_size * L.LLAMA3_8B.d_model) * 2
    assert all(r.bound == "memory" for r in led.rows)
    assert weights / 4.8e12 < led.time_s < 1.05 * weights / 4.8e12


def test_decode_compute_bound_batch_is_the_first_batch_at_the_ridge():
    for device in ("A100 80GB SXM", "H100 SXM", "H200 SXM"):
        acc = hardware.get_accelerator(device)
        ridge = acc.ridge_point_flop_per_byte("bf16")
        batch = L.decode_compute_bound_batch(device, "bf16", 4096, 4096)

        def intensity(bb):
            return 2 * bb * 4096 * 4096 / ((bb * 4096 * 2 + 4096 * 4096) * 2)

        assert intensity(batch) >= ridge > intensity(batch - 1)
    # Intensity ~ batch in bf16, so the batch sits a little above the ridge point.
    assert L.decode_compute_bound_batch("H200 SXM") == pytest.approx(
        hardware.get_accelerator("H200 SXM").ridge_point_flop_per_byte("bf16"), rel=0.15)


# --- utilization: PaLM, MBU ----------------------------------------------------------------------


def test_palm_540b_mfu_and_hfu_from_table_22():
    # Chowdhery et al. 2022: Table 1 (540.35B parameters, 118 layers, 48 heads), Appendix B (238.3K
    # tokens/s, 6144 TPU v4 at 275 TFLOP/s), Table 22 (3.28 and 4.10 TFLOP per token).
    per_token = L.palm_model_flop_per_token(540.35e9, 118, 48, 256, 2048)
    assert round(per_token / 1e12, 2) == 3.28
    mfu = L.flops_utilization(238.3e3, per_token, 6144, 275e12)
    assert round(mfu * 100, 1) == 46.2
    assert round(L.flops_utilization(238.3e3, 6 * 540e9, 6144, 275e12) * 100, 1) == 45.7
    assert round(L.flops_utilization(238.3e3, 4.10e12, 6144, 275e12) * 100, 1) == 57.8


def test_mbu_of_the_databricks_example_shape():
    assert L.bandwidth_utilization(14e9, 14e-3, 2e12) == pytest.approx(0.5)


def test_training_days():
    assert L.training_days(86400 * 10.0, 1, 1.0, 1.0) == pytest.approx(10)
    assert L.training_days(2 * 86400.0, 2, 1.0, 0.5) == pytest.approx(2)


# --- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, word", [
    ({"phase": "train"}, "phase"), ({"batch": 0}, "batch"), ({"seq_len": 1.5}, "seq_len"),
    ({"dtype": "int8"}, "dtype"), ({"fused": 1}, "fused"), ({"attention": "sparse"}, "attention"),
])
def test_layer_operators_bad_input_names_the_argument(kwargs, word):
    with pytest.raises(ValueError, match=word):
        L.layer_operators("Llama-3-8B", **kwargs)


def test_bad_model_and_config():
    with pytest.raises(ValueError, match="model"):
        L.get_model("GPT-4")
    with pytest.raises(ValueError, match="n_kv_heads"):
        replace(TINY, n_kv_heads=3)
    with pytest.raises(ValueError, match="norm"):
        replace(TINY, norm="batchnorm")
    with pytest.raises(ValueError, match="scope"):
        L.ledger(TINY, scope="block")
    with pytest.raises(ValueError, match="special-function"):
        L.device_roofs("L4", "bf16")
    with pytest.raises(ValueError, match="TPU v4"):
        L.device_roofs("TPU v4", "bf16")
    with pytest.raises(ValueError, match="utilization"):
        L.training_days(1.0, 1, 1.0, 1.5)
    with pytest.raises(ValueError, match="group"):
        L.ledger(TINY).share("time", group="softmax")


# --- explorer model --------------------------------------------------------------------------------


def test_explorer_grid_is_small_and_every_state_works():
    keys = tuple(L.EXPLORER_GRID)
    states = list(itertools.product(*L.EXPLORER_GRID.values()))
    assert len(states) <= 400
    for values in states[::7]:
        s = L.explorer_state(**dict(zip(keys, values)))
        params = dict(zip(keys, values))
        if params["device"].startswith("A100") and params["dtype"] == "fp8":
            assert not s.available and "no fp8" in s.title
        else:
            assert s.available and s.time_s == pytest.approx(sum(s.group_times_s.values()))


# --- the recorded profile --------------------------------------------------------------------------


def test_classify_kernel():
    assert L.classify_kernel("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT") == "matmul"
    assert L.classify_kernel("triton_red_fused__softmax_exp_masked_fill_mul_2") == "attention"
    assert L.classify_kernel("cudnn_generated_fort_native_sdpa_sm90_flash_fprop") == "attention"
    assert L.classify_kernel("triton_red_fused_add_mean_mul_pow_rsqrt_0") == "norm"
    assert L.classify_kernel("triton_poi_fused_clone_transpose_3") == "layout"
    assert L.classify_kernel("triton_poi_fused_mul_silu_split_4") == "elementwise"
    with pytest.raises(ValueError, match="name"):
        L.classify_kernel("")


@pytest.mark.parametrize("name, expected", [
    ("ledger_profile_h200", {"eager", "eager_sdpa", "compiled", "decode_eager"}),
    ("ledger_profile_h200_repeat", {"eager", "eager_sdpa", "decode_eager"}),
])
def test_recorded_profile_against_the_ledger(name, expected):
    run = recorded.load_run(name)
    config = json.loads(run["provenance"]["config"])
    variants = {r["variant"] for r in run["results"]}
    assert variants == expected
    for result in run["results"]:
        total = sum(k["time_s"] for k in result["kernels"])
        groups = L.compare_groups(result, config)
        assert sum(m for m, _ in groups.values()) == pytest.approx(total)
        if result["variant"] == "compiled":
            with pytest.raises(ValueError, match="compiled"):
                L.compare_profile(result, config)
            continue
        rows = L.compare_profile(result, config)
        assert sum(r.measured_s for r in rows) == pytest.approx(total)
        led = L._profile_ledger(result, config, "H200 SXM", "bf16")
        assert sum(r.predicted_s for r in rows if r.predicted_s is not None) == pytest.approx(led.time_s)
        # No kernel beats its roofline bound (the bound is a lower bound on time).
        assert all(r.ratio is None or r.ratio > 1 for r in rows)
