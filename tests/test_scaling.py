"""gpuperf.scaling: scaling rules against their closed forms, the trend extract, Dally's factors."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuperf import scaling

kappas = st.floats(1.0, 100.0)


@given(kappas)
def test_dennard_keeps_power_density(kappa):
    f = scaling.scaling_factors(kappa, "dennard")
    assert f.power_density == pytest.approx(1.0)
    assert f.power_per_transistor == pytest.approx(kappa**-2)
    assert f.frequency == pytest.approx(kappa)
    assert f.voltage == pytest.approx(1 / kappa)
    assert f.transistors_per_area == pytest.approx(kappa**2)
    assert f.powered_fraction == 1.0


@given(kappas)
def test_voltage_flat_power_density_grows_as_kappa_squared(kappa):
    f = scaling.scaling_factors(kappa, "voltage_flat")
    assert f.power_density == pytest.approx(kappa**2)
    assert f.power_per_transistor == pytest.approx(1.0)
    assert f.powered_fraction == pytest.approx(kappa**-2)


@given(kappas)
def test_clock_also_flat_power_density_grows_as_kappa(kappa):
    f = scaling.scaling_factors(kappa, "voltage_and_clock_flat")
    assert f.power_density == pytest.approx(kappa)
    assert f.frequency == 1.0


@given(st.sampled_from(list(scaling.RULES)), st.floats(1.01, 3.0), st.integers(0, 12))
def test_series_compounds_per_generation(rule, k, generations):
    s = scaling.scaling_series(rule, generations, k)
    assert len(s.generation) == generations + 1
    one_step = scaling.scaling_factors(k, rule)
    np.testing.assert_allclose(s.power_density, one_step.power_density ** s.generation, rtol=1e-9)
    np.testing.assert_allclose(s.transistors_per_area, k ** (2 * s.generation), rtol=1e-9)


def test_sqrt2_generation_doubles_transistors():
    s = scaling.scaling_series("voltage_flat", 5)
    np.testing.assert_allclose(s.transistors_per_area, 2.0 ** np.arange(6))
    np.testing.assert_allclose(s.power_density, 2.0 ** np.arange(6))


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "x", None])
def test_bad_kappa(bad):
    with pytest.raises(ValueError, match="kappa"):
        scaling.scaling_factors(bad)


def test_bad_rule_and_generations():
    with pytest.raises(ValueError, match="rule"):
        scaling.scaling_factors(2, "moore")
    with pytest.raises(ValueError, match="generations"):
        scaling.scaling_series("dennard", -1)


def test_trend_data_extract():
    data = scaling.load_trend_data()
    assert set(data) == set(scaling.TREND_QUANTITIES)
    counts = {q: len(s.year) for q, s in data.items()}
    assert counts == {"transistors": 99, "frequency": 101, "single_thread_performance": 74,
                      "typical_power": 101, "logical_cores": 90}
    for s in data.values():
        assert (np.diff(s.year) >= 0).all() and (s.value > 0).all()
        assert 1971 <= s.year.min() and s.year.max() < 2022
    assert data["frequency"].unit == "MHz"
    # transistor counts double about every two years over five decades (Moore)
    fit = scaling.fit_exponential(data["transistors"], 1970, 2022)
    assert 1.8 < fit.doubling_time_years < 2.2


def test_fit_exponential_recovers_a_known_doubling_time():
    years = np.arange(1990, 2010, 0.5)
    series = scaling.TrendSeries("x", "u", years, 3.0 * 2 ** ((years - 1990) / 1.5))
    fit = scaling.fit_exponential(series, 1990, 2010)
    assert fit.doubling_time_years == pytest.approx(1.5)
    assert fit.value_at_start == pytest.approx(3.0)
    assert fit.predict(1993) == pytest.approx(12.0)
    with pytest.raises(ValueError, match="year_from"):
        scaling.fit_exponential(series, 2000, 1990)
    with pytest.raises(ValueError, match="at least 2"):
        scaling.fit_exponential(series, 2030, 2040)


def test_flat_fit_is_infinite_doubling():
    years = np.arange(2000.0, 2010.0)
    fit = scaling.fit_exponential(scaling.TrendSeries("x", "u", years, np.full(10, 7.0)), 2000, 2010)
    assert abs(fit.doubling_time_years) > 1e6 or math.isinf(fit.doubling_time_years)


def test_dally_factors_multiply_to_a_thousand():
    assert scaling.combined_gain() == pytest.approx(1000.0)
    assert [f.factor for f in scaling.DALLY_HOTCHIPS_2023] == [16.0, 12.5, 2.5, 2.0]
