"""gpuperf.attention_traffic: the two-level traffic model and the forward kernel's budget."""

import math

import pytest

from gpuperf import attention as at
from gpuperf import attention_traffic as tr

L2_H200 = 60 * 2**20


def test_tile_bytes_match_the_numpy_q_outer_counter():
    # the numpy FlashAttention-2 order reads Q once and K, V once per query block: same count
    n, d, bm = 1000, 16, 48
    closed = at.flash_io(n, n, d, bm, 80, "q_outer")
    tiles = tr.q_outer_tile_bytes(1, 1, n, d, bm, bytes_per_element=1)
    assert tiles.read_bytes == closed.reads
    assert tiles.o_write_bytes == n * d


def test_causal_tile_bytes_visit_about_half_the_keys():
    full = tr.q_outer_tile_bytes(1, 1, 16384, 64, 128)
    causal = tr.q_outer_tile_bytes(1, 1, 16384, 64, 128, causal=True)
    assert 0.49 < causal.kv_read_bytes / full.kv_read_bytes < 0.51


def test_dram_model_one_pass_when_kv_fit():
    m = tr.q_outer_dram_model(32, 16, 1024, 128, 128, 132, L2_H200)
    assert m.fits_in_l2 and m.kv_passes_from_dram == 1
    assert m.dram_read_bytes == m.one_pass_read_bytes == 3 * 32 * 16 * 1024 * 128 * 2
    assert m.tile_read_bytes == 32 * 16 * (1024 * 128 * 2) * (1 + 2 * 8)


def test_dram_model_one_pass_per_wave_when_kv_do_not_fit():
    n, d = 131072, 128
    m = tr.q_outer_dram_model(1, 2, n, d, 128, 132, L2_H200)
    assert not m.fits_in_l2
    assert m.kv_passes_from_dram == math.ceil(1024 / 132) == 8
    assert m.dram_read_bytes == 2 * (n * d * 2) * (1 + 2 * 8)
    assert m.one_pass_read_bytes < m.dram_read_bytes < m.tile_read_bytes


def test_largest_n_fitting_l2():
    assert tr.largest_n_fitting_l2(128, L2_H200) == 65536
    assert tr.largest_n_fitting_l2(64, L2_H200) == 131072


def test_budget_of_the_d128_launch():
    b = tr.forward_kernel_budget(128, 128, 128, 8, 3)
    assert b.shared_bytes == 224 * 1024 and b.threads == 256
    assert (b.score_registers, b.probability_registers, b.accumulator_registers) == (64, 32, 64)
    assert b.tile_registers == 166


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_arguments_are_checked(bad):
    with pytest.raises(ValueError, match="n_seq"):
        tr.q_outer_tile_bytes(1, 1, bad, 64, 128)
    with pytest.raises(ValueError, match="num_stages"):
        tr.forward_kernel_budget(128, 64, 64, 8, bad)
    with pytest.raises(ValueError, match="l2_bytes"):
        tr.q_outer_dram_model(1, 1, 128, 64, 128, 132, 0)
