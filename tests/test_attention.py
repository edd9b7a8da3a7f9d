"""gpuperf.attention: outputs equal standard attention, counters equal the closed forms (Theorem 2)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf import attention as at


def _qkv(seed, n_q, n_k, d, spread=1.0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n_q, d)) * spread, rng.standard_normal((n_k, d)) * spread,
            rng.standard_normal((n_k, d)))


def _softmax_ref(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


shapes = st.tuples(st.integers(1, 40), st.integers(1, 40), st.sampled_from([1, 2, 3, 8]),
                   st.integers(1, 17), st.integers(1, 17))


@settings(max_examples=150, deadline=None)
@given(shape=shapes, causal=st.booleans(), order=st.sampled_from(at.LOOP_ORDERS), seed=st.integers(0, 2**31))
def test_flash_equals_standard_and_counters_equal_closed_form(shape, causal, order, seed):
    n_q, n_k, d, br, bc = shape
    q, k, v = _qkv(seed, n_q, n_k, d, spread=3.0)
    std = at.standard_attention(q, k, v, causal)
    fl = at.flash_attention_forward(q, k, v, causal, block_rows=br, block_cols=bc, loop_order=order)
    np.testing.assert_allclose(fl.output, std.output, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fl.lse, std.lse, rtol=1e-12, atol=1e-12)
    closed = at.flash_io(n_q, n_k, d, br, bc, order, causal)
    assert (fl.counter.reads, fl.counter.writes) == (closed.reads, closed.writes)
    s = at.standard_io(n_q, n_k, d)
    assert (std.counter.reads, std.counter.writes) == (s.reads, s.writes)


def test_standard_matches_direct_formula():
    q, k, v = _qkv(1, 13, 9, 4)
    for causal in (False, True):
        r = at.standard_attention(q, k, v, causal, scale=0.7)
        s = 0.7 * q @ k.T
        if causal:
            s = np.where(np.tril(np.ones((13, 9), dtype=bool)), s, -np.inf)
        np.testing.assert_allclose(r.output, _softmax_ref(s) @ v, rtol=1e-13)
        np.testing.assert_allclose(r.lse, np.log(np.exp(s).sum(axis=1)), rtol=1e-13)


def test_closed_forms_by_hand():
    # N = 4, d = 2, B_r = B_c = 2, dense: T_c = 2.
    assert at.flash_io(4, 4, 2, 2, 2, "kv_outer") == at.IOCount(2 * 4 * 2 + 2 * (2 * 8 + 8), 3 * (8 + 8))
    assert at.flash_io(4, 4, 2, 2, 2, "q_outer") == at.IOCount(8 + 2 * 16, 8 + 4)
    assert at.standard_io(4, 4, 2) == at.IOCount(8 + 16 + 32, 32 + 8)


def test_theorem2_scaling():
    # kv_outer traffic with B_c = M/4d grows as N^2 d^2 / M: doubling N quadruples it (for N >> B_c).
    d, m = 64, 100_000
    br, bc = at.flash_block_sizes(m, d)
    t = [at.flash_io(n, n, d, br, bc).total for n in (8192, 16384)]
    assert 3.9 < t[1] / t[0] < 4.1
    ratio = [at.flash_io(n, n, d, br, bc).total / at.theorem2_flash_accesses(n, d, m) for n in (8192, 16384)]
    assert abs(ratio[1] / ratio[0] - 1) < 0.03  # ceil(N / B_c) rounding
    # Doubling M roughly halves it.
    br2, bc2 = at.flash_block_sizes(2 * m, d)
    assert 0.45 < at.flash_io(16384, 16384, d, br2, bc2).total / t[1] < 0.56


def test_block_sizes():
    assert at.flash_block_sizes(100_000 // 4, 64) == (64, 98)  # ceil(25000 / 256) = 98, B_r = min(98, 64)
    assert at.flash_block_sizes(4096, 64, "q_outer") == (16, 16)
    assert at.flash_block_sizes(65536, 64, "q_outer") == (256, 64)
    for m in (1024, 8192, 100_000):
        br, bc = at.flash_block_sizes(m, 64)
        assert br <= 64 and br * bc <= math.ceil(m / 4) + 64 * 64  # S tile within ~M/4
    with pytest.raises(ValueError, match="loop_order"):
        at.flash_block_sizes(100, 4, "diagonal")


def test_on_chip_and_memory():
    assert at.on_chip_elements(2, 3, 4) == 2 * 2 * 4 + 2 * 3 * 4 + 6 + 4
    assert at.attention_memory_bytes(2048, 1, 96, 96, 2, "standard") == 96 * 96 * 2048**2 * 2
    assert at.attention_memory_bytes(2048, 1, 96, 96, 2, "flash") == 96 * 96 * 2048 * 4
    with pytest.raises(ValueError, match="method"):
        at.attention_memory_bytes(2, 1, 1, method="x")


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 60), block=st.integers(1, 20), seed=st.integers(0, 2**31), spread=st.sampled_from([1.0, 50.0]))
def test_softmax_variants(n, block, seed, spread):
    x = np.random.default_rng(seed).standard_normal(n) * spread
    ref = _softmax_ref(x[None])[0]
    safe, online = at.safe_softmax(x), at.online_softmax(x, block)
    np.testing.assert_allclose(safe.output, ref, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(online.output, ref, rtol=1e-12, atol=1e-300)
    assert (safe.counter.reads, safe.counter.writes) == (3 * n, n)
    assert (online.counter.reads, online.counter.writes) == (2 * n, n)
    assert len(online.trace) == math.ceil(n / block)
    assert online.row_max == x.max() and math.isclose(online.row_sum, np.exp(x - x.max()).sum(), rel_tol=1e-12)
    wrong = at.blockwise_softmax_wrong(x, block)
    assert math.isclose(wrong.sum(), math.ceil(n / block), rel_tol=1e-12)


def test_row_reduction_stages():
    # The fused softmax at 4096 columns with 8 warps: 16 values per thread, 5 shuffles in a warp, 8 warp
    # partials through shared memory, 3 more shuffles (Triton 3.9's PTX for sm_90 has 2 x (5 + 3)
    # shfl.sync.bfly for the max and the sum, bench/NOTES.md).
    r = at.row_reduction(4096, 8)
    assert (r.values_per_thread, r.in_thread_ops, r.shuffle_steps) == (16, 15, 5)
    assert (r.warp_partials, r.cross_warp_steps, r.combine_ops) == (8, 3, 23)
    one = at.row_reduction(64, 1)
    assert (one.values_per_thread, one.warp_partials, one.cross_warp_steps) == (2, 0, 0)
    assert at.row_reduction(16, 4).values_per_thread == 1  # fewer values than threads
    with pytest.raises(ValueError, match="num_warps must be a power of two, got 3"):
        at.row_reduction(4096, 3)
    with pytest.raises(ValueError, match="n_values"):
        at.row_reduction(0, 4)


def test_online_trace_rescales():
    r = at.online_softmax([1.0, 2.0, 5.0, 0.0], 2)
    assert r.trace[0].rescale == 0.0 and r.trace[0].row_max == 2.0
    assert math.isclose(r.trace[1].rescale, math.exp(2.0 - 5.0))
    assert math.isclose(r.trace[1].row_sum, (math.exp(-1) + 1) * math.exp(-3) + 1 + math.exp(-5))


@settings(max_examples=60, deadline=None)
@given(n_q=st.integers(1, 10), n_a=st.integers(1, 12), n_b=st.integers(1, 12), seed=st.integers(0, 2**31))
def test_merge_states(n_q, n_a, n_b, seed):
    q, k, v = _qkv(seed, n_q, n_a + n_b, 4, spread=3.0)
    a = at.partial_state(q, k[:n_a], v[:n_a])
    b = at.partial_state(q, k[n_a:], v[n_a:])
    whole = at.standard_attention(q, k, v)
    for merged in (at.merge_states(a, b), at.merge_states(b, a)):
        np.testing.assert_allclose(merged.normalized(), whole.output, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(merged.lse, whole.lse, rtol=1e-12)


def test_block_sparse_equals_masked_standard():
    q, k, v = _qkv(3, 20, 24, 4)
    block_mask = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 1], [0, 0, 1]], dtype=bool)  # B_r = 5, B_c = 8
    elem = np.repeat(np.repeat(block_mask, 5, axis=0), 8, axis=1)
    std = at.standard_attention(q, k, v, mask=elem)
    for order in at.LOOP_ORDERS:
        fl = at.flash_attention_forward(q, k, v, block_rows=5, block_cols=8, block_mask=block_mask,
                                        loop_order=order)
        np.testing.assert_allclose(fl.output, std.output, rtol=1e-12, atol=1e-12)
        assert fl.blocks_visited == block_mask.sum() and fl.blocks_total == 12


def test_causal_skips_blocks_and_trace():
    q, k, v = _qkv(4, 8, 8, 2)
    fl = at.flash_attention_forward(q, k, v, True, block_rows=2, block_cols=2, trace=True)
    assert fl.blocks_visited == 10 and fl.blocks_total == 16  # 4 diagonal + 6 below
    assert len(fl.trace) == 10 and fl.kv_passes == 1
    fl2 = at.flash_attention_forward(q, k, v, True, block_rows=2, block_cols=2, loop_order="q_outer", trace=True)
    assert fl2.kv_passes == 4 and fl2.trace[-1].reads == fl2.counter.reads


def test_sliding_window_mask():
    m = at.attention_mask(5, 5, causal=True, window=2)
    assert m.sum() == 9 and m[4, 3] and not m[4, 2]
    with pytest.raises(ValueError, match="window"):
        at.attention_mask(5, 5, causal=False, window=2)


def test_validation():
    q, k, v = _qkv(0, 4, 4, 2)
    with pytest.raises(ValueError, match="q must be a 2-D"):
        at.standard_attention(q[0], k, v)
    with pytest.raises(ValueError, match="k.shape\\[1\\]"):
        at.standard_attention(q, k[:, :1], v)
    with pytest.raises(ValueError, match="v.shape"):
        at.flash_attention_forward(q, k, v[:3], block_rows=2, block_cols=2)
    with pytest.raises(ValueError, match="sram_elements"):
        at.flash_attention_forward(q, k, v)
    with pytest.raises(ValueError, match="block_rows"):
        at.flash_attention_forward(q, k, v, block_rows=0, block_cols=2)
    with pytest.raises(ValueError, match="block_mask"):
        at.flash_attention_forward(q, k, v, block_rows=2, block_cols=2, block_mask=np.zeros((2, 2), bool))
    with pytest.raises(ValueError, match="block_mask.shape"):
        at.flash_attention_forward(q, k, v, block_rows=2, block_cols=2, block_mask=np.ones((3, 2), bool))
    with pytest.raises(ValueError, match="scale"):
        at.standard_attention(q, k, v, scale=0.0)
    with pytest.raises(ValueError, match="loop_order"):
        at.flash_attention_forward(q, k, v, block_rows=2, block_cols=2, loop_order="x")
    with pytest.raises(ValueError, match="x must be"):
        at.safe_softmax(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="mask must leave"):
        at.standard_attention(q, k, v, mask=np.zeros((4, 4), bool))


def test_standard_ledger_sums_to_closed_form():
    for shape in ((7, 9, 3), (4096, 4096, 64)):
        ledger = at.standard_ledger(*shape)
        total = at.standard_io(*shape)
        assert sum(r for _, r, _ in ledger) == total.reads and sum(w for _, _, w in ledger) == total.writes


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 100_000), d=st.integers(1, 256), m_over_d=st.integers(1, 2000))
def test_theorem2_constants_bracket_the_exact_counts(n, d, m_over_d):
    """Theorem 2 with explicit constants: with B_c = ceil(M / 4d), the exact K/V-outer count lies between
    12 N^2 d^2 / (M + 4d) (Q and O re-read at least N / B_c times) and (3Nd + 4N)(4Nd / M + 1) + 3Nd + 2N;
    the Q-outer order with resident query blocks of ceil(M / 4d) rows between 8 N^2 d^2 / (M + 4d) and
    2Nd (4Nd / M + 1) + 2Nd + N. Both are quadratic in N; the bounds fail if a term is miscounted."""
    m = d * m_over_d
    br, bc = at.flash_block_sizes(m, d)
    kv = at.flash_io(n, n, d, br, bc).total
    assert 12 * n**2 * d**2 / (m + 4 * d) <= kv * (1 + 1e-12)
    assert kv <= (3 * n * d + 4 * n) * (4 * n * d / m + 1) + 3 * n * d + 2 * n
    br_q, bc_q = at.flash_block_sizes(m, d, "q_outer")
    qo = at.flash_io(n, n, d, br_q, bc_q, "q_outer").total
    assert 8 * n**2 * d**2 / (m + 4 * d) <= qo * (1 + 1e-12)
    assert qo <= 2 * n * d * (4 * n * d / m + 1) + 2 * n * d + n
    assert at.standard_io(n, n, d).total == 4 * n * n + 4 * n * d
