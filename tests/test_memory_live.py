"""The live occupancy check against the CUDA API (GPU with CuPy only) and its CPU behaviour."""

from __future__ import annotations

import pytest

from gpuperf.benchmark import occupancy as live


def test_cupy_gpu_available_is_a_bool():
    assert isinstance(live.cupy_gpu_available(), bool)


@pytest.mark.gpu
@pytest.mark.skipif(not live.cupy_gpu_available(), reason="needs CuPy and a CUDA GPU")
def test_calculator_equals_the_cuda_api_on_this_gpu():
    try:
        rows = live.compare_occupancy()
    except ValueError as exc:
        pytest.skip(f"no tabulated limits for this GPU: {exc}")
    assert len(rows) >= 40
    bad = [r for r in rows if not r.agrees]
    assert not bad, bad[:5]
    assert len({r.registers_per_thread for r in rows}) >= 2  # the kernels really differ
