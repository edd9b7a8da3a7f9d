"""gpuperf.systolic: the cycle-level weight-stationary array against A @ B, its closed-form cycle count,
and the wavefront's closed form."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf.systolic import closed_form_cycles, simulate, wavefront

shapes = st.tuples(st.integers(1, 12), st.integers(1, 12), st.integers(1, 12), st.integers(1, 6), st.integers(1, 6))


@given(shapes, st.integers(0, 2**31 - 1))
@settings(max_examples=80, deadline=None)
def test_product_equals_a_at_b_and_cycles_equal_the_closed_form(shape, seed):
    m, k, n, rows, cols = shape
    rng = np.random.default_rng(seed)
    a = rng.integers(-9, 10, (m, k))
    b = rng.integers(-9, 10, (k, n))
    run = simulate(a, b, rows, cols)
    np.testing.assert_array_equal(run.product, a @ b)
    assert run.cycles == closed_form_cycles(m, k, n, rows, cols)
    assert run.tiles == -(-k // rows) * -(-n // cols)
    assert run.busy_pe_cycles == m * k * n  # every real multiply-accumulate happens exactly once
    assert 0 < run.utilization <= 1


def test_float_product_matches_float64_reference():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((13, 7)), rng.standard_normal((7, 9))
    np.testing.assert_allclose(simulate(a, b, 4, 4).product, a @ b, rtol=1e-12, atol=1e-12)


def test_utilization_approaches_one_as_the_streamed_dimension_grows():
    utils = [simulate(np.ones((m, 8), int), np.ones((8, 8), int), 8, 8).utilization for m in (1, 8, 64, 512)]
    assert utils == sorted(utils)
    assert utils[0] < 0.05 and utils[-1] > 0.95
    # closed form: m / (m + 2 rows + cols - 2)
    assert utils[-1] == pytest.approx(512 / (512 + 16 + 8 - 2))


def test_frames_are_the_anti_diagonal_wavefront():
    run = simulate(np.ones((5, 4), int), np.ones((4, 3), int), 4, 3, record_frames=True)
    loads = [f for f in run.frames if f[0] == "load weights"]
    streams = [f for f in run.frames if f[0] == "stream"]
    assert len(loads) == 4
    assert len(streams) == 5 + 4 + 3 - 2
    for _, t, frame in streams:
        np.testing.assert_array_equal(frame, wavefront(5, 4, 3, t))
    assert (wavefront(5, 4, 3, 3) == np.array([[3, 2, 1], [2, 1, 0], [1, 0, -1], [0, -1, -1]])).all()


def test_bad_input_raises_naming_the_argument():
    with pytest.raises(ValueError, match="a's columns"):
        simulate(np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="rows"):
        simulate(np.ones((2, 2)), np.ones((2, 2)), rows=0)
    with pytest.raises(ValueError, match="2-D"):
        simulate(np.ones(3), np.ones((3, 1)))
    with pytest.raises(ValueError, match="cycle"):
        wavefront(2, 2, 2, -1)
    with pytest.raises(ValueError, match="m must"):
        closed_form_cycles(0, 1, 1, 1, 1)


def test_pipelined_count_overlaps_tiles():
    from gpuperf.systolic import pipelined_cycles, utilization

    # one tile: nothing to overlap, so the two counts agree when m >= rows
    assert pipelined_cycles(200, 16, 16, 16, 16) == closed_form_cycles(200, 16, 16, 16, 16)
    # many tiles: fill and drain once; a short stream still waits for the next weights (rows cycles)
    assert pipelined_cycles(8, 1024, 1024, 128, 128) == 128 + 64 * 128 + 128 + 128 - 2
    assert pipelined_cycles(4096, 1024, 1024, 128, 128) < closed_form_cycles(4096, 1024, 1024, 128, 128)
    assert abs(utilization(8, 1024, 1024, 128, 128, pipelined=True) - 8 / 128) < 0.005
    assert utilization(4096, 1024, 1024, 128, 128, pipelined=True) > 0.99
    assert utilization(8, 128, 128, 128, 128) == 8 / (8 + 2 * 128 + 128 - 2)
    with pytest.raises(ValueError, match="rows"):
        pipelined_cycles(1, 1, 1, 0, 1)
