"""Tests of gpuperf.attention_backward: counters equal the closed forms; gradients equal float64 autograd."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf import attention_backward as ab
from gpuperf.results import attention as attention_results

torch = pytest.importorskip("torch")


def _inputs(seed, n_q, n_k, d):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n_q, d)), rng.standard_normal((n_k, d)), rng.standard_normal((n_k, d)),
            rng.standard_normal((n_q, d)))


def _autograd(q, k, v, do, causal, scale=None):
    tq, tk, tv = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (q, k, v))
    scale = 1 / math.sqrt(q.shape[1]) if scale is None else scale
    s = scale * tq @ tk.T
    if causal:
        s = s.masked_fill(torch.ones(s.shape, dtype=torch.bool).triu(1), float("-inf"))
    o = torch.softmax(s, dim=-1) @ tv
    grads = torch.autograd.grad(o, (tq, tk, tv), torch.tensor(do))
    return o.detach().numpy(), [g.numpy() for g in grads]


shapes = st.tuples(st.integers(1, 40), st.integers(1, 40), st.sampled_from([1, 2, 3, 4, 8, 16]))


@settings(max_examples=60, deadline=None)
@given(shapes=shapes, block_rows=st.integers(1, 12), block_cols=st.integers(1, 12), causal=st.booleans(),
       seed=st.integers(0, 2**31))
def test_flash_backward_equals_autograd_and_its_closed_form(shapes, block_rows, block_cols, causal, seed):
    n_q, n_k, d = shapes
    q, k, v, do = _inputs(seed, n_q, n_k, d)
    o_ref, grads_ref = _autograd(q, k, v, do, causal)
    fwd = ab.flash_forward(q, k, v, causal, block_rows=block_rows, block_cols=block_cols)
    np.testing.assert_allclose(fwd.o, o_ref, rtol=0, atol=1e-12)
    assert fwd.io == ab.flash_forward_io(n_q, n_k, d, block_rows=block_rows, block_cols=block_cols,
                                         causal=causal)
    g = ab.flash_backward(q, k, v, fwd.o, do, fwd.row_max, fwd.row_sum, causal, block_rows=block_rows,
                          block_cols=block_cols)
    for got, ref in zip((g.dq, g.dk, g.dv), grads_ref):
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-11 * max(1.0, np.abs(ref).max()))
    assert g.io == ab.flash_backward_io(n_q, n_k, d, block_rows=block_rows, block_cols=block_cols,
                                        causal=causal)


@settings(max_examples=40, deadline=None)
@given(shapes=shapes, causal=st.booleans(), seed=st.integers(0, 2**31))
def test_standard_backward_equals_autograd_and_its_closed_form(shapes, causal, seed):
    n_q, n_k, d = shapes
    q, k, v, do = _inputs(seed, n_q, n_k, d)
    o_ref, grads_ref = _autograd(q, k, v, do, causal)
    fwd = ab.standard_forward(q, k, v, causal)
    np.testing.assert_allclose(fwd.o, o_ref, rtol=0, atol=1e-12)
    assert fwd.io == ab.standard_forward_io(n_q, n_k, d)
    g = ab.standard_backward(q, k, v, fwd.p, do)
    for got, ref in zip((g.dq, g.dk, g.dv), grads_ref):
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-11 * max(1.0, np.abs(ref).max()))
    assert g.io == ab.standard_backward_io(n_q, n_k, d)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 70), d=st.sampled_from([2, 4, 8]), sram=st.integers(8, 400), causal=st.booleans())
def test_counters_equal_closed_forms_with_blocks_from_sram(n, d, sram, causal):
    q, k, v, do = _inputs(0, n, n, d)
    fwd = ab.flash_forward(q, k, v, causal, sram_elements=sram)
    g = ab.flash_backward(q, k, v, fwd.o, do, fwd.row_max, fwd.row_sum, causal, sram_elements=sram)
    assert g.io == ab.flash_backward_io(n, n, d, sram_elements=sram, causal=causal)
    assert fwd.io == ab.flash_forward_io(n, n, d, sram_elements=sram, causal=causal)


def test_closed_forms_by_hand():
    # N = 8, d = 2, B_r = 2, B_c = 4: T_c = 2 key blocks, each visits all 8 query rows.
    io = ab.flash_backward_io(8, 8, 2, block_rows=2, block_cols=4)
    assert io.elements_read == 2 * 8 * 2 + 2 * (4 * 8 * 2 + 2 * 8)  # 32 + 2 * 80
    assert io.elements_written == 8 * 2 + 2 * 8 * 2 + 2 * 8 * 2
    # Causal: block 1 (keys 4..7) starts at query block floor(4/2) = 2, i.e. rows 4..7 only.
    io_c = ab.flash_backward_io(8, 8, 2, block_rows=2, block_cols=4, causal=True)
    assert io_c.elements_read == 32 + (8 + 4) * (4 * 2 + 2)
    s = ab.standard_backward_io(8, 8, 2)
    assert s.elements_moved == 7 * 64 + 8 * 16
    assert ab.standard_forward_io(8, 8, 2).elements_moved == 4 * 64 + 4 * 16


def test_block_sizes_follow_the_paper():
    # A100: M = 98,304 elements (192 KiB of 16-bit numbers); d = 64 -> B_c = 384, B_r = 64.
    assert ab.block_sizes(64, 98_304) == (64, 384)
    assert ab.block_sizes(128, 98_304) == (128, 192)
    assert ab.block_sizes(64, 100) == (1, 1)
    with pytest.raises(ValueError, match="sram_elements"):
        ab.block_sizes(64, 32)


def test_flash_traffic_is_quadratic_in_n_and_inverse_in_m():
    # Theta(N^2 d^2 / M): doubling N quadruples it (asymptotically), doubling M halves it.
    a = ab.flash_backward_io(2**14, 2**14, 64, sram_elements=2**16).elements_moved
    b = ab.flash_backward_io(2**15, 2**15, 64, sram_elements=2**16).elements_moved
    c = ab.flash_backward_io(2**15, 2**15, 64, sram_elements=2**17).elements_moved
    assert 3.9 < b / a < 4.0
    assert 1.9 < b / c < 2.0


def test_ratio_shrinks_with_head_dim():
    m = 98_304
    r64 = ab.traffic_point(8192, 64, m).backward_ratio
    r128 = ab.traffic_point(8192, 128, m).backward_ratio
    assert r64 > 3 * r128 > 3


def test_flop_and_memory():
    f = ab.matmul_flop(1024, 1024, 64, recompute=False)
    g = ab.matmul_flop(1024, 1024, 64, recompute=True)
    assert f["total"] == 12 * 1024**2 * 64 and g["total"] == 14 * 1024**2 * 64
    assert ab.matmul_flop(8, 8, 2, recompute=True, causal=True)["total"] == 7 * 64 * 2
    assert ab.saved_for_backward_elements(4096, 4096, 64, flash=False) == 4096**2
    assert ab.saved_for_backward_elements(4096, 4096, 64, flash=True) == 4096


def test_lse_equals_log_sum_exp():
    q, k, v, _ = _inputs(3, 9, 11, 4)
    fwd = ab.flash_forward(q, k, v, block_rows=2, block_cols=3)
    s = q @ k.T / 2
    np.testing.assert_allclose(fwd.lse, np.log(np.exp(s).sum(1)), atol=1e-12)


def test_validation():
    q, k, v, do = _inputs(0, 4, 4, 2)
    with pytest.raises(ValueError, match="v.shape"):
        ab.flash_forward(q, k, v[:3], block_rows=1, block_cols=1)
    with pytest.raises(ValueError, match="q must be"):
        ab.standard_forward(q[0], k, v)
    with pytest.raises(ValueError, match="softmax_scale"):
        ab.standard_forward(q, k, v, softmax_scale=0)
    with pytest.raises(ValueError, match="not both"):
        ab.flash_forward(q, k, v, sram_elements=16, block_rows=1)
    with pytest.raises(ValueError, match="block_rows"):
        ab.flash_forward(q, k, v)
    with pytest.raises(ValueError, match="p.shape"):
        ab.standard_backward(q, k, v, np.zeros((4, 3)), do)
    with pytest.raises(ValueError, match="row_max"):
        ab.flash_backward(q, k, v, q, do, np.zeros(3), np.ones(4), block_rows=1, block_cols=1)
    with pytest.raises(ValueError, match="n_q"):
        ab.standard_backward_io(0, 4, 2)
    with pytest.raises(ValueError, match="head_dim"):
        ab.flash_backward_io(4, 4, True, block_rows=1, block_cols=1)


def test_comparison_rows():
    rows = []
    for impl, rate in (("triton", 300e12), ("sdpa-flash", 250e12), ("sdpa-cudnn", 400e12)):
        for n in (2048, 1024):
            rows.append({"impl": impl, "pass": "bwd", "dtype": "fp16", "head_dim": 64, "mask": "causal",
                         "n_seq": n, "flop_per_s": rate})
            rows.append({"impl": impl, "pass": "fwd+bwd", "dtype": "fp16", "head_dim": 64, "mask": "full",
                         "n_seq": n, "flop_per_s": rate / 2})
    out = attention_results.comparison_rows(rows)
    assert [r["n_seq"] for r in out] == [1024, 2048]
    assert out[0]["vs_flash"] == pytest.approx(1.2) and out[0]["vs_cudnn"] == pytest.approx(0.75)
    assert attention_results.comparison_rows(rows, "fwd+bwd")[0]["triton"] == pytest.approx(150)
    with pytest.raises(ValueError, match="lacks"):
        attention_results.comparison_rows([r for r in rows if r["impl"] != "sdpa-cudnn"])
    with pytest.raises(ValueError, match="pass_name"):
        attention_results.comparison_rows(rows, "fwd")
