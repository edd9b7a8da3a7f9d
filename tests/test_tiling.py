"""Tests of gpuperf.tiling: the counting tiled matmul against numpy and its closed forms, the L2 model
against a brute-force enumeration, and wave quantization against NVIDIA's example and hand counts."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf import tiling as t

dims = st.integers(min_value=1, max_value=40)
tiles = st.integers(min_value=1, max_value=17)


@settings(max_examples=60, deadline=None)
@given(m=dims, n=dims, k=dims, tm=tiles, tn=tiles, tk=tiles, seed=st.integers(0, 2**31 - 1))
def test_counted_product_is_exact_and_counts_equal_closed_form(m, n, k, tm, tn, tk, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((k, n))
    io = t.tiled_matmul_io(a, b, tm, tn, tk)
    np.testing.assert_allclose(io.product, a @ b, rtol=1e-12, atol=1e-12 * k)
    cf = t.tiled_io_closed_form(m, n, k, tm, tn, tk)
    assert (io.reads_a, io.reads_b, io.writes_c) == (cf.reads_a, cf.reads_b, cf.writes_c)
    assert io.fast_memory_elements == cf.fast_memory_elements
    assert io.reads_a == m * k * math.ceil(n / tn) and io.reads_b == k * n * math.ceil(m / tm)
    assert io.writes_c == m * n and io.flop == 2 * m * n * k


def test_naive_intensity_is_about_one_over_b():
    io = t.naive_io(512, 512, 512)
    assert io.reads_a + io.reads_b == 2 * 512**3
    assert io.intensity_flop_per_byte(2) == pytest.approx(0.5, rel=1e-3)
    tiled = t.tiled_io_closed_form(4096, 4096, 4096, 128, 128, 64)
    # 2 / (b (1/128 + 1/128 + 1/4096)) for divisible shapes
    assert tiled.intensity_flop_per_byte(2) == pytest.approx(2 / (2 * (2 / 128 + 1 / 4096)))


def test_tile_intensity_and_fast_memory():
    assert t.tile_intensity_flop_per_byte(128, 128, 4096, 2) == pytest.approx(
        2 * 128 * 128 * 4096 / (2 * (128 * 4096 * 2 + 128 * 128)))
    assert t.tile_fast_memory_bytes(128, 256, 64, 2, stages=3) == 128 * 256 * 4 + 3 * (128 * 64 + 64 * 256) * 2
    t_max = t.max_square_tile(100_000, 2, tile_k=32)
    assert t.tile_fast_memory_bytes(t_max, t_max, 32, 2) <= 100_000 < t.tile_fast_memory_bytes(
        t_max + 16, t_max + 16, 32, 2)
    assert t.max_square_tile(10, 2) == 0


@settings(max_examples=150, deadline=None)
@given(m=st.integers(1, 300), n=st.integers(1, 300), tm=st.sampled_from([8, 16, 32]),
       tn=st.sampled_from([8, 16, 32]), concurrent=st.integers(1, 70), order=st.sampled_from(t.ORDERS),
       group=st.integers(1, 9))
def test_l2_closed_form_equals_bruteforce(m, n, tm, tn, concurrent, order, group):
    assert t.l2_traffic(m, n, 7, tm, tn, concurrent, order, group) == \
        t.l2_traffic_bruteforce(m, n, 7, tm, tn, concurrent, order, group)


def test_grouped_order_loads_fewer_panels_than_row_major():
    # 32 x 32 tiles, 64 blocks at a time: row-major loads 2 A panels and all 32 B panels per wave;
    # grouped by 8 loads 8 A and 8 B panels per wave.
    row = t.l2_traffic(4096, 4096, 4096, 128, 128, 64, "row-major")
    grp = t.l2_traffic(4096, 4096, 4096, 128, 128, 64, "grouped", 8)
    assert (row.a_panels, row.b_panels) == (16 * 2, 16 * 32)
    assert (grp.a_panels, grp.b_panels) == (16 * 8, 16 * 8)
    assert grp.elements_read < row.elements_read


def test_block_order_is_a_permutation():
    for order in t.ORDERS:
        blocks = t.block_order(5, 7, order, 3)
        assert sorted(blocks) == [(i, j) for i in range(5) for j in range(7)]
    assert t.block_order(4, 2, "grouped", 2)[:4] == [(0, 0), (1, 0), (0, 1), (1, 1)]


def test_nvidia_wave_example():
    # NVIDIA's Matrix Multiplication Background User's Guide: A100 (108 SMs), 256 x 128 tiles.
    one = t.wave_quantization(2304, 1536, 4096, 256, 128, 108)
    two = t.wave_quantization(2304, 1544, 4096, 256, 128, 108)
    assert (one.tiles, one.waves, one.useful_fraction) == (108, 1, 1.0)
    assert (two.tiles, two.waves) == (117, 2)
    assert two.wave_useful_fraction == pytest.approx(117 / 216)
    assert two.tile_useful_fraction == pytest.approx(2304 * 1544 / (117 * 256 * 128))


@settings(max_examples=100, deadline=None)
@given(m=st.integers(1, 5000), n=st.integers(1, 5000), k=st.integers(1, 5000),
       tm=st.sampled_from([16, 64, 128, 256]), tn=st.sampled_from([16, 64, 128, 256]),
       sms=st.integers(1, 200), per_sm=st.integers(1, 4))
def test_wave_quantization_properties(m, n, k, tm, tn, sms, per_sm):
    w = t.wave_quantization(m, n, k, tm, tn, sms, per_sm, peak_flop_per_s=1e15)
    assert w.tiles == -(-m // tm) * -(-n // tn)
    assert (w.waves - 1) * sms * per_sm < w.tiles <= w.waves * sms * per_sm
    assert 0 < w.useful_fraction <= 1
    # predicted rate = peak x useful fraction (every wave as slow as a full one)
    assert w.predicted_flop_per_s == pytest.approx(1e15 * w.useful_fraction)


def test_decode_shaped_m_wastes_the_tile():
    w = t.wave_quantization(16, 4096, 4096, 128, 128, 132)
    assert w.tile_useful_fraction == pytest.approx(16 / 128)


def test_tile_choice_on_h200():
    c = t.tile_choice("H200 SXM", 4096, 4096, 4096, 128, 256, 64, "bf16", stages=3)
    assert c.shared_memory_bytes == 3 * (128 * 64 + 64 * 256) * 2
    assert c.fits and c.blocks_per_sm == 1
    assert c.quantization.tiles == 32 * 16 and c.quantization.waves == 4
    huge = t.tile_choice("H200 SXM", 4096, 4096, 4096, 256, 256, 128, "bf16", stages=4)
    assert not huge.fits


@pytest.mark.parametrize("tile_n, blocks", [(100, 0), (99, 1), (50, 1), (49, 2)])
def test_tile_choice_applies_the_occupancy_rules_at_the_edges(tile_n, blocks):
    # stages=1, tile_k=512, bf16: (128 or 64 + tile_n) x 1 KiB = 228, 227, 114, 113 KiB per block.
    # The H200 reserves 1 KiB per block and allows at most 227 KiB: 228 does not fit, 227 fits once,
    # 114 (+1) fits once in 228 KiB, 113 (+1) twice.
    tile_m = 128 if tile_n > 60 else 64
    c = t.tile_choice("H200 SXM", 4096, 4096, 4096, tile_m, tile_n, 512, "bf16", stages=1)
    assert c.shared_memory_bytes == (tile_m + tile_n) * 1024
    assert c.blocks_per_sm == blocks and c.fits == (blocks > 0)
    from gpuperf.memory import sm_occupancy

    if blocks:  # the same answer as the occupancy model of chapter 04
        occ = sm_occupancy("H200 SXM", 128, 0, int(c.shared_memory_bytes))
        assert occ.blocks_by_limit["shared_memory"] == blocks


def test_tile_choice_on_a100_edges():
    # A100: 164 KiB per SM, 163 KiB per block at most, 1 KiB reserved
    over = t.tile_choice("A100 80GB SXM", 4096, 4096, 4096, 128, 36, 512, "bf16", stages=1)
    assert over.shared_memory_bytes == 164 * 1024 and not over.fits and over.blocks_per_sm == 0
    edge = t.tile_choice("A100 80GB SXM", 4096, 4096, 4096, 128, 35, 512, "bf16", stages=1)
    assert edge.fits and edge.blocks_per_sm == 1


def test_tile_choice_needs_sm_limits():
    with pytest.raises(ValueError, match="device"):
        t.tile_choice("B200", 4096, 4096, 4096, 128, 128, 64)


def test_bad_inputs_raise_value_error():
    with pytest.raises(ValueError, match="tile_m"):
        t.tiled_io_closed_form(4, 4, 4, 0, 1, 1)
    with pytest.raises(ValueError, match="a and b"):
        t.tiled_matmul_io(np.ones((2, 3)), np.ones((2, 3)), 1, 1, 1)
    with pytest.raises(ValueError, match="order"):
        t.l2_traffic(4, 4, 4, 2, 2, 2, "column")
    with pytest.raises(ValueError, match="sm_count"):
        t.wave_quantization(4, 4, 4, 2, 2, 0)
    with pytest.raises(ValueError, match="peak_flop_per_s"):
        t.wave_quantization(4, 4, 4, 2, 2, 1, peak_flop_per_s=-1)
    with pytest.raises(ValueError, match="efficiency"):
        t.wave_quantization_on("H200 SXM", 4, 4, 4, 2, 2, efficiency=0)


def test_register_tile_intensity():
    assert t.register_tile_intensity_flop_per_byte(64, 64, 2) == pytest.approx(32.0)
    assert t.register_tile_intensity_flop_per_byte(64, 256, 2) == pytest.approx(2 * 64 * 256 / (2 * 320))
    with pytest.raises(ValueError, match="warp_m"):
        t.register_tile_intensity_flop_per_byte(0, 8, 2)


# ---- split-K and stream-K: what splitting k buys a product with too few tiles ---------------------------


def test_split_k_model_counts_programs_waves_and_the_reduction():
    one = t.split_k_model(1000, 1000, 1000, 128, 128, 64, 132)
    assert (one.tiles, one.units, one.waves, one.steps_per_unit) == (64, 64, 1, 16)
    assert one.last_wave_fill == pytest.approx(64 / 132)
    assert one.predicted_steps == pytest.approx(16 + t.OVERHEAD_STEPS)
    two = t.split_k_model(1000, 1000, 1000, 128, 128, 64, 132, split_k=2)
    assert (two.units, two.waves, two.steps_per_unit) == (128, 1, 8)
    assert two.reduce_steps == pytest.approx(4 * 128 * 128 / (2 * 256 * 64))  # = 2 k steps
    assert two.predicted_steps == pytest.approx(8 + t.OVERHEAD_STEPS + 2 + 2 * 2)
    assert two.predicted_steps < one.predicted_steps
    # a split past the k steps leaves no empty slice: k = 100 is two steps of 64
    assert t.split_k_model(64, 64, 100, 64, 64, 64, 132, split_k=4).split_k == 2
    # a unit tile's step is the unit of cost; a 64 x 128 tile's step costs half
    half = t.split_k_model(1000, 1000, 1000, 64, 128, 64, 132)
    assert half.predicted_cost == pytest.approx(half.predicted_steps / 2)


def test_best_split_k_fills_the_gpu_only_where_it_pays():
    assert t.best_split_k(4096, 4096, 4096, 128, 256, 64, 132).split_k == 1  # many waves already
    small = t.best_split_k(512, 512, 8192, 128, 128, 64, 132)  # 16 tiles, k = 128 steps
    assert small.split_k >= 8 and small.units <= 132
    for split in range(1, 17):
        assert small.predicted_steps <= t.split_k_model(512, 512, 8192, 128, 128, 64, 132,
                                                             split).predicted_steps + 1e-9


def test_stream_k_beats_any_split_where_the_edge_wastes_a_tile_row():
    # 777 rows: 224 tiles of 128 x 128 are 1.7 waves; stream-K deals the steps (122 against 134)
    best = t.best_split_k(777, 4096, 4096, 128, 128, 64, 132)
    assert best.stream_k_steps < best.predicted_steps
    # in 128 x 256 tiles (112 tiles, one wave 85 % full) runs span three tiles: stream-K loses
    wide = t.best_split_k(777, 4096, 4096, 128, 256, 64, 132)
    assert wide.stream_k_steps > wide.predicted_steps


def test_split_k_for_programs():
    split = t.split_k_for_programs(32, 4096, 128, 264)
    assert split == 11 and 32 * split >= 264  # 32 k steps in slices of 3: 11 slices, none empty
    assert t.split_k_for_programs(32, 256, 128, 264) == 2  # k too short: every step its own slice
    assert t.split_k_for_programs(300, 4096, 128, 264) == 1
    for bad in ((0, 1, 1, 1), (1, 1, 1, True), (1, 1.5, 1, 1)):
        with pytest.raises(ValueError):
            t.split_k_for_programs(*bad)
    with pytest.raises(ValueError):
        t.split_k_model(1, 1, 1, 1, 1, 1, 132, bytes_per_element=0)


def _stream_k_bruteforce(tiles, k_steps, programs, c, r):
    # Every step's program; per program: tiles touched, partials written and read.
    total = tiles * k_steps
    run = -(-total // programs)
    owner = [s // run for s in range(total)]
    worst = 0.0
    for p in set(owner):
        mine = [s for s in range(total) if owner[s] == p]
        touched = {s // k_steps for s in mine}
        written = sum(owner[t * k_steps + k_steps - 1] != p for t in touched)
        read = sum(len({owner[s] for s in range(t * k_steps, t * k_steps + k_steps)}) - 1
                   for t in touched if owner[t * k_steps + k_steps - 1] == p)
        worst = max(worst, len(mine) + c * len(touched) + r * (written + read))
    return worst


@pytest.mark.parametrize("m,n,k,programs", [(777, 4096, 4096, 132), (2048, 2048, 2048, 132),
                                            (16, 4096, 4096, 132), (1000, 1000, 1000, 132),
                                            (300, 200, 1000, 7), (129, 129, 64 * 5, 3)])
def test_stream_k_model_counts_the_kernel_walk(m, n, k, programs):
    model = t.stream_k_model(m, n, k, 128, 128, 64, programs)
    tiles = -(-m // 128) * -(-n // 128)
    assert model.predicted_steps == _stream_k_bruteforce(tiles, -(-k // 64), programs,
                                                         t.OVERHEAD_STEPS, model.reduce_steps)
    assert model.partials_written <= 1


def test_stream_k_model_page_numbers():
    # chapter 08's table: fill and drain per tile touched, one partial read per sharing program
    assert t.stream_k_model(777, 4096, 4096, 128, 128, 64, 132).predicted_steps == 122
    assert t.stream_k_model(2048, 2048, 2048, 128, 128, 64, 132).predicted_steps == 76
    assert t.stream_k_model(16, 4096, 4096, 128, 128, 64, 132).predicted_steps == 25
    assert t.split_k_model(16, 4096, 4096, 128, 128, 64, 132).stream_k_steps == 25
    with pytest.raises(ValueError):
        t.stream_k_model(1, 1, 1, 1, 1, 1, 0)
