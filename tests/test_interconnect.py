import pytest

from gpuperf import hardware
from gpuperf.interconnect import allreduce_bytes_sent_per_device, allreduce_time_s


def test_allreduce_sends_twice_the_data_less_one_share():
    assert allreduce_bytes_sent_per_device(8e9, 8) == pytest.approx(14e9)
    assert allreduce_bytes_sent_per_device(1.0, 1) == 0.0
    assert allreduce_time_s(8e9, 8, 450e9) == pytest.approx(14e9 / 450e9)
    # large pods approach 2 n / b whatever their size
    assert allreduce_time_s(1e9, 4096, 1e11) == pytest.approx(2e9 / 1e11, rel=1e-3)


@pytest.mark.parametrize("call, name", [
    (lambda: allreduce_time_s(0, 8, 1e9), "n_bytes"),
    (lambda: allreduce_time_s(1, 0, 1e9), "n_devices"),
    (lambda: allreduce_time_s(1, 8, -1), "bytes_per_s_one_direction"),
])
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_google_pod_allreduce_is_chips_times_one_way_ici():
    v5e = hardware.TPU_PODS["TPU v5e"]
    assert v5e.allreduce_bytes_per_s_per_pod == v5e.chips_per_pod * v5e.ici_bytes_per_s_per_chip / 2
    assert hardware.TPU_PODS["TPU v5p"].ici_bytes_per_s_per_chip == 1200e9
    assert all(p.source.startswith("Google Cloud") for p in hardware.TPU_PODS.values())
