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


# --- the alpha-beta model of collectives ---------------------------------------------------------------

from gpuperf import interconnect as ic  # noqa: E402


@pytest.mark.parametrize("p", [2, 3, 8, 64])
def test_ring_matches_the_bandwidth_bound_and_the_nccl_tests_factor(p):
    s = 3e9
    assert ic.collective_bytes_per_device("all_reduce", s, p) == pytest.approx(allreduce_bytes_sent_per_device(s, p))
    for c in ic.COLLECTIVES:
        # the bus-bandwidth factor is exactly the ring's bytes per device over S: a perfect ring's bus
        # bandwidth equals the link's
        t = ic.collective_time_s(c, s, p, 450e9, algorithm="ring")
        assert ic.bus_bytes_per_s(c, s, p, t) == pytest.approx(450e9)
    assert ic.collective_steps("all_reduce", p) == 2 * (p - 1)
    assert ic.collective_steps("all_gather", p) == ic.collective_steps("reduce_scatter", p) == p - 1


def test_in_switch_all_reduce_sends_one_and_a_share_and_takes_two_steps():
    # 8 H200s, 10 GB: ring 1.75 x 10 GB / 450 GB/s = 38.9 ms; in-switch 1.125 x ... = 25.0 ms (review N-M1)
    b = hardware.NVLINK_BYTES_PER_S["H200 SXM"] / 2
    ring = ic.collective_time_s("all_reduce", 10e9, 8, b)
    nvls = ic.collective_time_s("all_reduce", 10e9, 8, b, algorithm="in_switch")
    assert (round(ring * 1e3, 1), round(nvls * 1e3, 1)) == (38.9, 25.0)
    assert ic.collective_steps("all_reduce", 8, "in_switch") == 2
    # all-gather gains no time in the switch: S one way against the ring's (p - 1) / p S
    assert ic.collective_bytes_per_device("all_gather", 1.0, 8, "in_switch") > \
        ic.collective_bytes_per_device("all_gather", 1.0, 8, "ring")


def test_tree_takes_log_steps_and_twice_the_data():
    assert ic.collective_steps("all_reduce", 8, "tree") == 6
    assert ic.collective_steps("all_reduce", 9, "tree") == 8
    assert ic.collective_bytes_per_device("all_reduce", 5.0, 8, "tree") == 10.0
    # small buffers: the tree's fewer steps win; large ones: the ring's fewer bytes
    b, a = 450e9, 5e-6
    assert ic.collective_time_s("all_reduce", 1e3, 64, b, a, "tree") < ic.collective_time_s("all_reduce", 1e3, 64, b, a)
    assert ic.collective_time_s("all_reduce", 1e10, 64, b, a, "tree") > ic.collective_time_s("all_reduce", 1e10, 64, b, a)


def test_one_device_costs_nothing():
    assert ic.collective_time_s("all_reduce", 1e9, 1, 1e9, alpha_s=1.0) == 0.0
    assert ic.latency_bound_below_bytes("all_gather", 1, 1e9, 1e-6) == float("inf")


def test_latency_bound_below_is_where_the_two_terms_meet():
    n = ic.latency_bound_below_bytes("all_reduce", 8, 450e9, 5.6e-6)
    assert 5.6e-6 == pytest.approx(ic.collective_bytes_per_device("all_reduce", n, 8) / 450e9)
    assert round(n / 1e6, 2) == 1.44  # chapter 05


def test_fit_recovers_alpha_and_beta_from_the_model():
    sizes = [1024 * 4**k for k in range(12)]
    factor = ic.collective_bytes_per_device("all_reduce", 1.0, 8)
    times = [7e-6 + factor * s / 380e9 for s in sizes]
    fit = ic.fit_alpha_beta(sizes, times, bytes_factor=factor)
    assert fit.alpha_s == pytest.approx(7e-6, rel=1e-9) and fit.bytes_per_s == pytest.approx(380e9, rel=1e-9)
    assert fit.max_relative_error < 1e-12 and fit.n_points == 12
    # noise of 3 % in each time: the fit stays within a few per cent
    rng = __import__("random").Random(0)
    noisy = [t * (1 + rng.uniform(-0.03, 0.03)) for t in times]
    fit = ic.fit_alpha_beta(sizes, noisy, bytes_factor=factor)
    assert fit.alpha_s == pytest.approx(7e-6, rel=0.1) and fit.bytes_per_s == pytest.approx(380e9, rel=0.1)


@pytest.mark.parametrize("call, name", [
    (lambda: ic.collective_time_s("broadcast", 1, 2, 1), "collective"),
    (lambda: ic.collective_time_s("all_reduce", 1, 2, 1, algorithm="mesh"), "algorithm"),
    (lambda: ic.collective_steps("all_gather", 8, "tree"), "tree"),
    (lambda: ic.collective_time_s("all_reduce", 1, 2, 1, alpha_s=-1), "alpha_s"),
    (lambda: ic.collective_time_s("all_reduce", 1, 2.5, 1), "n_devices"),
    (lambda: ic.fit_alpha_beta([1], [1]), "two or more"),
    (lambda: ic.fit_alpha_beta([1, 1], [1, 2]), "not all be equal"),
    (lambda: ic.fit_alpha_beta([1, 2], [2, 1]), "do not grow"),
])
def test_collective_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_the_collective_figure_draws_one_line_per_algorithm_and_the_crossover():
    import matplotlib

    matplotlib.use("Agg")
    from gpuperf.plotting.style import new_figure
    from gpuperf.plotting.systolic import plot_collective_times

    sizes = [1e3, 1e6, 1e9]
    fig, ax = new_figure()
    plot_collective_times(ax, sizes, {"ring": [1e-5, 2e-5, 4e-3], "in-switch": [1e-5, 1.5e-5, 2.5e-3]},
                          crossover_bytes=1.4e6)
    assert [l.get_label() for l in ax.get_lines()][:2] == ["ring", "in-switch"]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert any("fixed cost" in t.get_text() for t in ax.texts)
    xs = ax.get_lines()[2].get_xdata()
    assert list(xs) == [1.4e6, 1.4e6]  # the dotted crossover line
