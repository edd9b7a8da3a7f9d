"""The hardware table: lookup, sources, immutability, and the relations its figures must satisfy.

Each figure is checked two ways: against the literal number in the vendor document (closed form), and
against an independent reconstruction from the architecture (units x operations per clock x clock), so a
typo in either place fails.
"""

from __future__ import annotations

import dataclasses
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf import hardware
from gpuperf.hardware import ACCELERATORS, DTYPES, FIGURE_FIELDS, KiB, MiB, get_accelerator

CANONICAL = (
    "V100 SXM2",
    "A100 40GB SXM",
    "A100 80GB SXM",
    "H100 SXM",
    "H100 PCIe",
    "H200 SXM",
    "B200",
    "L4",
    "T4",
    "TPU v4",
    "TPU v5e",
)

AMPERE_HOPPER = ("A100 40GB SXM", "A100 80GB SXM", "H100 SXM", "H100 PCIe", "H200 SXM")
HOPPER = ("H100 SXM", "H100 PCIe", "H200 SXM")
NVIDIA = ("V100 SXM2", *AMPERE_HOPPER, "B200", "L4", "T4")
TPUS = ("TPU v4", "TPU v5e")


def acc(name):
    return get_accelerator(name)


# --------------------------------------------------------------------------------------------------
# Lookup
# --------------------------------------------------------------------------------------------------


def test_the_table_holds_exactly_the_course_devices_in_order():
    assert hardware.accelerator_names() == CANONICAL
    assert tuple(a.name for a in ACCELERATORS) == CANONICAL
    assert isinstance(ACCELERATORS, tuple)


@pytest.mark.parametrize(
    "spelling, expected",
    [
        ("H200", "H200 SXM"),
        ("h200-sxm", "H200 SXM"),
        ("H200_SXM", "H200 SXM"),
        ("  h200   sxm ", "H200 SXM"),
        ("NVIDIA H200", "H200 SXM"),  # torch.cuda.get_device_name() on the course's GPU
        ("A100-80GB", "A100 80GB SXM"),
        ("a100 40gb", "A100 40GB SXM"),
        ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM"),
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("h100 pcie", "H100 PCIe"),
        ("Tesla T4", "T4"),
        ("tesla v100-sxm2-16gb", "V100 SXM2"),
        ("V100", "V100 SXM2"),
        ("tpu-v4", "TPU v4"),
        ("v5e", "TPU v5e"),
        ("Cloud TPU v5e", "TPU v5e"),
        ("b200", "B200"),
        ("l4", "L4"),
    ],
)
def test_lookup_accepts_aliases_case_spaces_and_dashes(spelling, expected):
    assert acc(spelling).name == expected


def test_every_canonical_name_and_alias_finds_its_own_device():
    for device in ACCELERATORS:
        assert acc(device.name) is device
        for alias in device.aliases:
            assert acc(alias) is device, alias


def test_no_two_devices_share_a_spelling():
    seen = {}
    for device in ACCELERATORS:
        for spelling in (device.name, *device.aliases):
            key = hardware._normalize(spelling)
            assert seen.setdefault(key, device.name) == device.name, (spelling, seen[key])


def test_the_index_refuses_a_spelling_shared_by_two_devices(monkeypatch):
    clash = dataclasses.replace(ACCELERATORS[1], name="Impostor", aliases=("H200",))
    monkeypatch.setattr(hardware, "ACCELERATORS", (*ACCELERATORS, clash))
    with pytest.raises(ValueError, match="'H200'.*H200 SXM.*Impostor"):
        hardware._build_index()


@given(data=st.data())
@settings(max_examples=60, deadline=None)
def test_lookup_ignores_case_and_separators(data):
    device = data.draw(st.sampled_from(ACCELERATORS))
    spelling = ""
    for ch in device.name:
        ch = ch.upper() if data.draw(st.booleans()) else ch.lower()
        spelling += ch + data.draw(st.sampled_from(["", "", " ", "-", "_"]))
    assert acc(spelling) is device


def test_unknown_name_raises_listing_every_canonical_name():
    with pytest.raises(ValueError) as info:
        acc("H300 SXM")
    message = str(info.value)
    assert "'H300 SXM'" in message
    for name in CANONICAL:
        assert name in message


@pytest.mark.parametrize("family, parts", [("A100", CANONICAL[1:3]), ("nvidia h100", ("H100 SXM", "H100 PCIe"))])
def test_bare_family_name_is_ambiguous(family, parts):
    with pytest.raises(ValueError, match="ambiguous") as info:
        acc(family)
    for part in parts:
        assert part in str(info.value)


@pytest.mark.parametrize("bad", [None, 200, b"H200"])
def test_lookup_rejects_non_strings(bad):
    with pytest.raises(ValueError, match="name must be a str"):
        acc(bad)


# --------------------------------------------------------------------------------------------------
# Sources and immutability
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", ACCELERATORS, ids=lambda a: a.name)
def test_every_figure_field_has_a_source(device):
    for name in FIGURE_FIELDS:
        text = device.sources.get(name)
        assert isinstance(text, str) and len(text) > 20, f"{device.name}.{name} has no source"
    assert set(device.sources) == set(FIGURE_FIELDS), set(device.sources) ^ set(FIGURE_FIELDS)


@pytest.mark.parametrize("device", ACCELERATORS, ids=lambda a: a.name)
def test_missing_figures_say_why_they_are_missing(device):
    for name in FIGURE_FIELDS:
        value = getattr(device, name)
        if value is None or (isinstance(value, dict) or hasattr(value, "items")) and not value:
            text = device.sources[name].lower()
            reasons = ("not published", "no published", "not applicable")
            assert any(reason in text for reason in reasons), f"{device.name}.{name}: {text}"


def test_figures_read_from_a_device_say_where_they_were_read():
    # Where no vendor document gives a figure, the source must name the reading and where it was published.
    for name, fields in {
        "H200 SXM": ("sm_count", "l2_bytes", "boost_clock_hz"),
        "B200": ("sm_count", "l2_bytes"),
        "L4": ("sm_count", "l2_bytes", "boost_clock_hz"),
        "T4": ("boost_clock_hz",),
    }.items():
        for field in fields:
            text = acc(name).sources[field]
            assert "not in" in text, (name, field)
            assert any(w in text for w in ("this project", "pytorch/ao", "github.com/")), (name, field)


def test_figure_fields_are_the_dataclass_fields_that_carry_numbers():
    fields = {f.name for f in dataclasses.fields(hardware.Accelerator)}
    assert set(FIGURE_FIELDS) <= fields
    assert fields - set(FIGURE_FIELDS) == {"name", "vendor", "kind", "sources", "aliases", "memory_type"}


def test_dense_peaks_are_stated_as_dense():
    # Each vendor sheet that prints sparse peaks is halved; the source must say which convention it used.
    for device in ACCELERATORS:
        text = device.sources["matrix_flop_per_s"].lower()
        assert "dense" in text, device.name


@pytest.mark.parametrize("device", ACCELERATORS, ids=lambda a: a.name)
def test_devices_are_frozen(device):
    with pytest.raises(dataclasses.FrozenInstanceError):
        device.hbm_bytes_per_s = 1.0
    with pytest.raises(TypeError):
        device.matrix_flop_per_s["bf16"] = 1.0
    with pytest.raises(TypeError):
        device.sources["hbm_bytes_per_s"] = "made up"
    assert isinstance(device.aliases, tuple)


@pytest.mark.parametrize("device", ACCELERATORS, ids=lambda a: a.name)
def test_figures_are_positive_numbers_of_the_right_type(device):
    assert device.kind in ("gpu", "tpu")
    assert device.vendor in ("NVIDIA", "Google")
    for name in FIGURE_FIELDS:
        value = getattr(device, name)
        if name.endswith("flop_per_s") and hasattr(value, "items"):
            assert all(k in DTYPES and v > 0 and math.isfinite(v) for k, v in value.items())
        elif value is not None:
            assert isinstance(value, (int, float)) and not isinstance(value, bool), name
            assert value > 0 and math.isfinite(value), name
    if device.sm_count is not None:
        assert isinstance(device.sm_count, int)


def test_shared_memory_bandwidth_per_clock_is_32_banks_of_4_bytes_on_nvidia_and_absent_on_tpu():
    for name in NVIDIA:
        assert acc(name).shared_memory_bytes_per_clock_per_sm == 32 * 4
        assert "32 banks" in acc(name).sources["shared_memory_bytes_per_clock_per_sm"]
        assert "CUDA C++ Programming Guide" in acc(name).sources["shared_memory_bytes_per_clock_per_sm"]
    for name in TPUS:
        device = acc(name)
        assert device.shared_memory_bytes_per_clock_per_sm is None
        assert device.registers_per_sm_bytes is None
        assert device.shared_memory_per_sm_bytes is None


# --------------------------------------------------------------------------------------------------
# Figures against the vendor documents (literal closed forms)
# --------------------------------------------------------------------------------------------------


def test_a100_figures_and_the_two_memory_parts():
    for name in ("A100 40GB SXM", "A100 80GB SXM"):
        a = acc(name)
        assert a.peak_flop_per_s("bf16") == 312e12
        assert a.peak_flop_per_s("tf32") == 156e12
        assert a.peak_flop_per_s("fp64") == 19.5e12
        assert a.peak_flop_per_s("fp32", "vector") == 19.5e12
        assert a.sm_count == 108 and a.boost_clock_hz == 1.41e9
        assert a.shared_memory_per_sm_bytes == 167936  # 164 KiB
        assert a.l2_bytes == 41943040  # 40 MiB
    assert acc("A100 40GB SXM").hbm_bytes_per_s == 1.555e12
    assert acc("A100 40GB SXM").hbm_capacity_bytes == 40e9
    assert acc("A100 80GB SXM").hbm_bytes_per_s == 2.039e12
    assert acc("A100 80GB SXM").hbm_capacity_bytes == 80e9


def test_hopper_figures():
    h100 = acc("H100 SXM")
    assert h100.peak_flop_per_s("bf16") == 989.4e12  # dense; the datasheet's 1,979 is with sparsity
    assert h100.peak_flop_per_s("fp8") == 1978.9e12
    assert h100.hbm_bytes_per_s == 3.35e12 and h100.hbm_capacity_bytes == 80e9
    assert h100.shared_memory_per_sm_bytes == 233472  # 228 KiB
    assert h100.l2_bytes == 52428800  # 50 MiB
    pcie = acc("H100 PCIe")
    # 2,039 GB/s in the whitepaper (5,120-bit HBM2e at 1,593 MHz); the datasheet's "2 TB/s" is that rounded
    assert pcie.peak_flop_per_s("bf16") == 756e12 and pcie.hbm_bytes_per_s == 2.039e12 and pcie.sm_count == 114
    assert (h100.boost_clock_hz, pcie.boost_clock_hz) == (1.98e9, 1.755e9)
    assert h100.peak_flop_per_s("fp64") == 66.9e12 and h100.peak_flop_per_s("fp32", "vector") == 66.9e12
    h200 = acc("H200 SXM")
    assert h200.hbm_bytes_per_s == 4.8e12 and h200.hbm_capacity_bytes == 141e9
    assert dict(h200.matrix_flop_per_s) == dict(h100.matrix_flop_per_s)
    assert dict(h200.vector_flop_per_s) == dict(h100.vector_flop_per_s)
    assert (h200.sm_count, h200.registers_per_sm_bytes, h200.shared_memory_per_sm_bytes) == (132, 262144, 233472)
    assert h200.l2_bytes == 62914560  # as the device reports it


def test_other_devices_literal_figures():
    assert acc("V100 SXM2").peak_flop_per_s("fp16") == 125e12
    assert acc("V100 SXM2").hbm_bytes_per_s == 900e9
    b200 = acc("B200")
    assert b200.peak_flop_per_s("bf16") == 2.25e15 and b200.peak_flop_per_s("fp4") == 9e15
    assert b200.hbm_bytes_per_s == 7.7e12 and b200.hbm_capacity_bytes == 180e9
    # SM count and L2 from a published device query (no NVIDIA document gives them); no clock anywhere
    assert b200.sm_count == 148 and b200.l2_bytes == 132644864 and b200.boost_clock_hz is None
    assert b200.peak_flop_per_s("tf32") == 1.125e15 and b200.peak_flop_per_s("fp32", "vector") == 75e12
    l4 = acc("L4")
    assert l4.peak_flop_per_s("bf16") == 121e12 and l4.hbm_bytes_per_s == 300e9
    assert (l4.sm_count, l4.boost_clock_hz, l4.l2_bytes) == (58, 2.04e9, 50331648)
    t4 = acc("T4")
    assert t4.peak_flop_per_s("fp16") == 65e12 and t4.hbm_bytes_per_s == 320e9
    assert (t4.sm_count, t4.boost_clock_hz, t4.l2_bytes) == (40, 1.59e9, 4194304)
    assert acc("TPU v4").peak_flop_per_s("bf16") == 275e12 and acc("TPU v4").hbm_bytes_per_s == 1.2e12
    assert acc("TPU v4").hbm_capacity_bytes == 32 * 2**30 and acc("TPU v4").l2_bytes == 128 * 2**20
    assert acc("TPU v5e").peak_flop_per_s("bf16") == 197e12 and acc("TPU v5e").hbm_bytes_per_s == 819e9
    assert (acc("TPU v4").sm_count, acc("TPU v5e").sm_count) == (2, 1)
    assert (KiB, MiB) == (1024, 1048576)


def test_memory_type_names_gddr_where_the_memory_is_not_hbm():
    assert acc("L4").memory_type == acc("T4").memory_type == "GDDR6"
    for device in ACCELERATORS:
        if device.name not in ("L4", "T4"):
            assert device.memory_type.startswith("HBM"), device.name


# --------------------------------------------------------------------------------------------------
# Relations that dense peaks must satisfy
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", AMPERE_HOPPER)
def test_ampere_and_hopper_half_precision_relations(name):
    m = acc(name).matrix_flop_per_s
    assert m["fp16"] == m["bf16"]
    assert m["tf32"] == pytest.approx(m["bf16"] / 2, rel=1e-3)
    assert m["int8"] == pytest.approx(2 * m["bf16"], rel=1e-3)
    # FP64 Tensor Cores run at the FP32 CUDA-core rate on these parts
    assert m["fp64"] == acc(name).vector_flop_per_s["fp32"]


@pytest.mark.parametrize("name", HOPPER)
def test_hopper_fp8_doubles_bf16(name):
    m = acc(name).matrix_flop_per_s
    assert m["fp8"] == pytest.approx(2 * m["bf16"], rel=1e-3)
    assert m["fp8"] == m["int8"]
    assert "fp4" not in m and "fp6" not in m  # Hopper has no FP4/FP6 Tensor Core modes


def test_blackwell_low_precision_ladder():
    m = acc("B200").matrix_flop_per_s
    assert m["fp4"] == 2 * m["fp8"] == 4 * m["bf16"] == 8 * m["tf32"]
    assert m["fp6"] == m["fp8"] == m["int8"]


def test_devices_without_a_dtype_do_not_pretend_to_have_one():
    assert "bf16" not in acc("V100 SXM2").matrix_flop_per_s  # Volta: fp16 Tensor Cores only
    assert "bf16" not in acc("T4").matrix_flop_per_s  # Turing: fp16/int8 Tensor Cores only
    assert "fp8" not in acc("A100 80GB SXM").matrix_flop_per_s  # FP8 arrived with Hopper and Ada
    assert not acc("TPU v4").vector_flop_per_s


# (name, SMs or TensorCores, dense bf16/fp16 FLOP per clock per SM, clock in Hz): the architecture's own
# arithmetic, independent of the vendor's rounded peak.
MATRIX_RECONSTRUCTION = [
    ("V100 SXM2", "fp16", 80, 8 * 64 * 2, 1.53e9),  # 8 Tensor Cores x 64 FMA per clock
    ("A100 40GB SXM", "bf16", 108, 4 * 256 * 2, 1.41e9),  # 4 Tensor Cores x 256 FMA per clock
    ("H100 SXM", "bf16", 132, 4096, 1.83e9),  # twice Ampere per SM, at the Tensor Core clock
    ("H100 PCIe", "bf16", 114, 4096, 1.62e9),
    ("H100 SXM", "fp64", 132, 4 * 32 * 2, 1.98e9),  # FP64 Tensor Cores run at the higher boost clock
    ("H100 PCIe", "fp64", 114, 4 * 32 * 2, 1.755e9),
    ("L4", "bf16", 58, 4 * 128 * 2, 2.04e9),  # Ada: 4 Tensor Cores x 128 dense FMA per clock
    ("L4", "fp8", 58, 4 * 256 * 2, 2.04e9),
    ("T4", "fp16", 40, 8 * 64 * 2, 1.59e9),
    ("TPU v4", "bf16", 2, 4 * 128 * 128 * 2, 1.05e9),  # 4 MXUs of 128 x 128 MACs per TensorCore
]


@pytest.mark.parametrize("name, dtype, units, flop_per_clock, clock_hz", MATRIX_RECONSTRUCTION)
def test_matrix_peak_matches_units_times_rate_times_clock(name, dtype, units, flop_per_clock, clock_hz):
    assert acc(name).peak_flop_per_s(dtype) == pytest.approx(units * flop_per_clock * clock_hz, rel=5e-3)


# (name, memory bus width in bits, memory clock in MHz): bandwidth = bus bytes x clock x 2 (double data
# rate), independent of the vendor's rounded bandwidth figure. The B200 is tested separately below.
MEMORY_RECONSTRUCTION = [
    ("A100 40GB SXM", 5120, 1215),  # A100 whitepaper: 5120-bit HBM2, 1215 MHz DDR
    ("A100 80GB SXM", 5120, 1593),  # HBM2e at the H100 PCIe's data rate (CUDA deviceQuery: 1593 MHz)
    ("H100 SXM", 5120, 2619),  # H100 whitepaper Table 3
    ("H100 PCIe", 5120, 1593),  # H100 whitepaper Table 3
    ("H200 SXM", 6016, 3201),  # cudaGetDeviceProperties in this project
    ("L4", 192, 6251),  # deviceQuery (source in hardware.py)
    ("T4", 256, 5001),  # deviceQuery (source in hardware.py)
]


@pytest.mark.parametrize("name, bus_bits, clock_mhz", MEMORY_RECONSTRUCTION)
def test_memory_bandwidth_matches_bus_width_times_data_rate(name, bus_bits, clock_mhz):
    assert acc(name).hbm_bytes_per_s == pytest.approx(bus_bits / 8 * clock_mhz * 1e6 * 2, rel=5e-3)


def test_b200_bandwidth_is_the_per_gpu_hgx_figure():
    # The Blackwell datasheet's per-GPU 7.7 TB/s; a device query gives 7,680 bits x 3,996 MHz x 2 = 7.67 TB/s
    # and the HGX page 62 TB/s / 8 = 7.75 TB/s: the stored figure agrees with both within 1%, while the DGX
    # system's 64 TB/s / 8 = 8 TB/s would sit 4% above what the bus allows.
    b200 = acc("B200")
    text = b200.sources["hbm_bytes_per_s"]
    assert "7.67 TB/s" in text and "7.7 TB/s" in text and "62 TB/s" in text
    assert b200.hbm_bytes_per_s == pytest.approx(7680 / 8 * 3996e6 * 2, rel=5e-3)
    assert b200.hbm_bytes_per_s == pytest.approx(62e12 / 8, rel=1e-2)
    assert round(b200.ridge_point_flop_per_byte("bf16")) == 292


@pytest.mark.parametrize(
    "name, lanes_per_sm",
    [
        ("V100 SXM2", 64),
        ("A100 40GB SXM", 64),
        ("H100 SXM", 128),
        ("H100 PCIe", 128),
        ("H200 SXM", 128),
        ("L4", 128),
        ("T4", 64),
    ],
)
def test_fp32_vector_peak_matches_sms_lanes_and_boost_clock(name, lanes_per_sm):
    a = acc(name)
    expected = a.sm_count * lanes_per_sm * 2 * a.boost_clock_hz
    assert a.peak_flop_per_s("fp32", "vector") == pytest.approx(expected, rel=1e-2)


# --------------------------------------------------------------------------------------------------
# Ridge points
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, flop_per_s, bytes_per_s, rounded",
    [
        ("A100 40GB SXM", 312e12, 1.555e12, 200.6),
        ("A100 80GB SXM", 312e12, 2.039e12, 153.0),
        ("H200 SXM", 989.4e12, 4.8e12, 206.1),
        ("H100 SXM", 989.4e12, 3.35e12, 295.3),
        ("TPU v5e", 197e12, 819e9, 240.5),
    ],
)
def test_bf16_ridge_points(name, flop_per_s, bytes_per_s, rounded):
    ridge = acc(name).ridge_point_flop_per_byte("bf16")
    assert ridge == pytest.approx(flop_per_s / bytes_per_s, rel=1e-12)
    assert round(ridge, 1) == rounded


def test_the_two_a100_parts_have_different_ridges():
    # The seed lectures mixed these up: name the exact part.
    assert acc("A100 40GB SXM").ridge_point_flop_per_byte("bf16") > 1.3 * acc(
        "A100 80GB SXM"
    ).ridge_point_flop_per_byte("bf16")


def test_ridge_points_by_dtype_cover_exactly_the_devices_with_that_peak():
    bf16 = hardware.ridge_points_flop_per_byte("bf16")
    assert list(bf16) == [n for n in CANONICAL if n not in ("V100 SXM2", "T4")]
    assert bf16["H200 SXM"] == pytest.approx(206.125)
    fp32 = hardware.ridge_points_flop_per_byte("fp32", "vector")
    assert fp32["T4"] == pytest.approx(8.1e12 / 320e9)
    assert "TPU v4" not in fp32


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: acc("H200").peak_flop_per_s("fp12"), "dtype must be one of"),
        (lambda: acc("H200").peak_flop_per_s("bf16", unit="tensor"), "unit must be one of"),
        (lambda: acc("T4").peak_flop_per_s("bf16"), "dtype 'bf16' has no matrix-unit peak on T4"),
        (lambda: acc("TPU v4").peak_flop_per_s("fp32", "vector"), "'fp32' has no vector-unit peak"),
        (lambda: acc("H200").ridge_point_flop_per_byte("float16"), "dtype must be one of.*'float16'"),
        (lambda: hardware.ridge_points_flop_per_byte("bfloat16"), "dtype must be one of.*'bfloat16'"),
        (lambda: hardware.ridge_points_flop_per_byte("bf16", "simd"), "unit must be one of.*'simd'"),
    ],
)
def test_bad_dtype_or_unit_raises_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_constructing_with_an_unknown_dtype_raises():
    with pytest.raises(ValueError, match="unknown dtype 'fp12'"):
        dataclasses.replace(ACCELERATORS[0], matrix_flop_per_s={"fp12": 1e12})
    for bad in (0.0, -1e12, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="'fp32' must be finite and > 0"):
            dataclasses.replace(ACCELERATORS[0], vector_flop_per_s={"fp32": bad})


@pytest.mark.parametrize("bad", [0.0, -900e9, float("nan"), float("inf")])
def test_constructing_with_a_bandwidth_a_ridge_cannot_divide_by_raises(bad):
    with pytest.raises(ValueError, match="hbm_bytes_per_s must be finite and > 0"):
        dataclasses.replace(ACCELERATORS[0], hbm_bytes_per_s=bad)


# --------------------------------------------------------------------------------------------------
# Rows for rendering
# --------------------------------------------------------------------------------------------------


def test_table_rows_cover_every_device_with_plain_si_numbers():
    rows = hardware.hardware_table_rows()
    assert [r["name"] for r in rows] == list(CANONICAL)
    keys = set(rows[0])
    assert all(set(r) == keys for r in rows)
    for dtype in DTYPES:
        assert f"matrix_{dtype}_flop_per_s" in keys and f"vector_{dtype}_flop_per_s" in keys
    for row, device in zip(rows, ACCELERATORS):
        for value in row.values():
            assert value is None or isinstance(value, (str, int, float))
        for name in FIGURE_FIELDS:
            if not name.endswith("flop_per_s"):
                assert row[name] == getattr(device, name)
        for dtype in DTYPES:
            assert row[f"matrix_{dtype}_flop_per_s"] == device.matrix_flop_per_s.get(dtype)
            assert row[f"vector_{dtype}_flop_per_s"] == device.vector_flop_per_s.get(dtype)


def test_table_rows_ridge_column_and_independence_between_calls():
    rows = hardware.hardware_table_rows()
    by_name = {r["name"]: r for r in rows}
    assert by_name["A100 40GB SXM"]["ridge_bf16_flop_per_byte"] == pytest.approx(312e12 / 1.555e12)
    assert by_name["T4"]["ridge_bf16_flop_per_byte"] is None
    assert by_name["H200 SXM"]["hbm_bytes_per_s"] == 4.8e12  # SI base units, not TB/s
    rows[0]["name"] = "edited"
    assert hardware.hardware_table_rows()[0]["name"] == "V100 SXM2"


def test_no_device_figure_is_written_outside_this_module():
    # The house rule: device figures live only in hardware.py. Spot-check the package for the famous ones.
    import pathlib

    package = pathlib.Path(hardware.__file__).parent
    pattern = re.compile(r"\b(312e12|989\.4e12|989e12|1\.555e12|2\.039e12|3\.35e12|4\.8e12|2\.25e15)\b")
    offenders = [
        str(p.relative_to(package))
        for p in package.rglob("*.py")
        if p.name != "hardware.py" and pattern.search(p.read_text())
    ]
    assert not offenders, offenders


def test_special_function_rate_matches_sfu_count_times_clock():
    # GH100: 16 SFU results per clock per SM (4 per SM sub-partition), 132 SMs, 1830 MHz Tensor Core clock.
    from gpuperf.hardware import SPECIAL_FUNCTION_SOURCES, special_function_ops_per_s

    for name in ("H100 SXM", "H200 SXM", "NVIDIA H200"):
        assert special_function_ops_per_s(name) == pytest.approx(132 * 16 * 1.83e9, rel=0.01)
    assert "FlashAttention-3" in SPECIAL_FUNCTION_SOURCES["H200 SXM"]
    assert acc("H200 SXM").peak_flop_per_s("bf16") / special_function_ops_per_s("H200 SXM") > 250
    with pytest.raises(ValueError, match="name"):
        special_function_ops_per_s("B200")


def test_reported_memory_exceeds_the_decimal_capacity_by_the_binary_factor():
    from gpuperf.hardware import REPORTED_MEMORY_SOURCES, reported_memory_bytes

    for name in ("H200 SXM", "B200"):
        ratio = reported_memory_bytes(name) / acc(name).hbm_capacity_bytes
        assert 1.0 < ratio < 2**30 / 1e9 * 1.0001  # at most the GiB/GB factor
        assert name in REPORTED_MEMORY_SOURCES
    assert round(reported_memory_bytes("H200 SXM") / 1e9, 1) == 150.8
    with pytest.raises(ValueError, match="name"):
        reported_memory_bytes("T4")
