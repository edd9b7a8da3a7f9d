"""gpuperf.benchmark.memory_live: the live sweeps' plans (pure) and their refusal without a GPU. Their
timings are never asserted: on a GPU only the structure of the rows is checked."""

from __future__ import annotations

import pytest

from gpuperf.benchmark import memory_live as ml


def test_stream_plan_on_an_h200_and_a_t4():
    h200 = ml.stream_plan(132, 64)
    assert {r["warps_per_sm"] for r in h200} == {4, 8, 16, 32, 64}
    assert len(h200) == 15
    r = next(r for r in h200 if r["warps_per_sm"] == 16 and r["loads_in_flight_per_thread"] == 2)
    assert r["programs"] == 132 * 4 and r["block"] == 4 * 32 * 2 * 4
    assert r["bytes_in_flight_per_sm"] == 16 * 1024  # 16 warps x 32 threads x 2 x 16 B
    t4 = ml.stream_plan(40, 32)  # Turing: 1,024 threads per SM
    assert max(r["warps_per_sm"] for r in t4) == 32 and len(t4) == 12


def test_stream_plan_refuses_a_gpu_without_room():
    with pytest.raises(ValueError, match="max_warps_per_sm"):
        ml.stream_plan(10, 2)


def test_sweeps_need_a_gpu():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is here")
    with pytest.raises(RuntimeError, match="CUDA GPU"):
        ml.sweep_strides()


@pytest.mark.gpu
def test_sweeps_return_rows_on_a_gpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    run = ml.sweep_bytes_in_flight(warps_per_sm=(4, 8), loads_per_thread=(1,), n_bytes=16 * 2**20)
    assert len(run["results"]) == 2 and all(r["time_s"] > 0 for r in run["results"])
    strided = ml.sweep_strides(strides=(1, 4), n_used=1 << 20)
    assert [r["stride"] for r in strided["results"]] == [1, 4]
    assert strided["results"][0]["fraction_of_stride_1"] == 1.0
