"""Tests of gpuperf.decoding: the split-KV merge is exact; counters equal the closed form; the time model."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf import decoding as dec


def _reference(q, k, v, scale):
    s = scale * np.atleast_2d(q) @ k.T
    p = np.exp(s - s.max(1, keepdims=True))
    return (p / p.sum(1, keepdims=True)) @ v


@settings(max_examples=80, deadline=None)
@given(n_q=st.integers(1, 4), n_k=st.integers(1, 200), d=st.sampled_from([1, 4, 16]),
       n_splits=st.integers(1, 64), seed=st.integers(0, 2**31), spread=st.floats(0.1, 30.0))
def test_split_kv_equals_attention_and_counts(n_q, n_k, d, n_splits, seed, spread):
    n_splits = min(n_splits, n_k)
    rng = np.random.default_rng(seed)
    q, k, v = spread * rng.standard_normal((n_q, d)), rng.standard_normal((n_k, d)), rng.standard_normal((n_k, d))
    res = dec.split_kv_attention(q, k, v, n_splits)
    np.testing.assert_allclose(res.out, _reference(q, k, v, 1 / math.sqrt(d)), rtol=0, atol=1e-12)
    assert res.io == dec.split_kv_io(n_q, n_k, d, n_splits)
    assert len(res.states) == len(dec.split_bounds(n_k, n_splits))


def test_merge_is_commutative_and_associative():
    rng = np.random.default_rng(5)
    q, k, v = rng.standard_normal((2, 8)), rng.standard_normal((30, 8)), rng.standard_normal((30, 8))
    a, b, c = (dec.partial_state(q, k[s], v[s]) for s in (slice(0, 7), slice(7, 20), slice(20, 30)))
    ab_c = dec.merge_states(dec.merge_states(a, b), c)
    a_bc = dec.merge_states(a, dec.merge_states(b, c))
    c_ba = dec.merge_states(c, dec.merge_states(b, a))
    for other in (a_bc, c_ba):
        np.testing.assert_allclose(ab_c.out, other.out, atol=1e-14)
        np.testing.assert_allclose(ab_c.lse, other.lse, atol=1e-14)
    full = dec.partial_state(q, k, v)
    np.testing.assert_allclose(ab_c.lse, full.lse, atol=1e-13)


def test_merge_of_the_sources_example():
    # Scores [1, 3] and [5, 2] merged: l relative to m = 5 is e^-4 + e^-2 + 1 + e^-3 = 1.203438.
    a = dec.PartialState(np.array([3.0]), np.array([math.exp(-2) + 1]), np.zeros((1, 1)))
    b = dec.PartialState(np.array([5.0]), np.array([1 + math.exp(-3)]), np.ones((1, 1)))
    m = dec.merge_states(a, b)
    assert m.row_max[0] == 5.0 and round(float(m.row_sum[0]), 6) == 1.203438


def test_io_by_hand():
    io = dec.split_kv_io(1, 1000, 128, 4)
    assert io.elements_read == 4 * 128 + 2 * 1000 * 128 + 4 * (128 + 2)
    assert io.elements_written == 4 * (128 + 2) + 128
    assert len(dec.split_bounds(10, 4)) == 4 and dec.split_bounds(10, 4)[-1] == (9, 10)
    assert len(dec.split_bounds(10, 6)) == 5  # ceil(10/6) = 2 keys per chunk: 5 chunks


def test_time_model_saturates_with_splits():
    kw = dict(batch=1, kv_heads=8, n_k=131072, head_dim=128, sm_count=132, hbm_bytes_per_s=4.8e12)
    one = dec.decode_time_model(n_splits=1, **kw)
    many = dec.decode_time_model(n_splits=32, **kw)
    assert one.busy_fraction == pytest.approx(8 / 132) and many.busy_fraction == 1.0
    assert one.time_s / many.time_s > 10
    kv_bytes = 8 * 2 * 131072 * 128 * 2
    assert many.time_s == pytest.approx(kv_bytes / 4.8e12, rel=0.01)


def test_validation():
    q, k = np.zeros((1, 4)), np.zeros((5, 4))
    with pytest.raises(ValueError, match="v.shape"):
        dec.split_kv_attention(q, k, k[:4], 2)
    with pytest.raises(ValueError, match="n_splits"):
        dec.split_bounds(5, 6)
    with pytest.raises(ValueError, match="n_splits"):
        dec.split_bounds(5, 0)
    with pytest.raises(ValueError, match="states"):
        dec.merge_all([])
    with pytest.raises(ValueError, match="b must be"):
        dec.merge_states(dec.partial_state(q, k, k), None)
    with pytest.raises(ValueError, match="hbm_bytes_per_s"):
        dec.decode_time_model(1, 1, 10, 4, 1, sm_count=1, hbm_bytes_per_s=0)
