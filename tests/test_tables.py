"""HTML tables in human units: number formatting, dashes for missing figures, escaping, validation."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuperf import hardware
from gpuperf.plotting.tables import (
    DASH,
    MATRIX_COLUMNS,
    ON_CHIP_COLUMNS,
    VECTOR_MEMORY_COLUMNS,
    Column,
    format_hardware_table_html,
    format_number,
    format_sources_html,
    format_table_html,
)


@pytest.mark.parametrize(
    "value, scale, digits, expected",
    [
        (989.4e12, 1e12, 1, "989.4"),
        (312e12, 1e12, 1, "312"),
        (1978.9e12, 1e12, 1, "1,978.9"),
        (1.555e12, 1e12, 3, "1.555"),
        (3.35e12, 1e12, 3, "3.35"),
        (32 * 2**30, 1e9, 1, "34.4"),
        (233472, 1024, 0, "228"),
        (62914560, 1024**2, 0, "60"),
        (1.755e9, 1e9, 3, "1.755"),
        (100.0, 1.0, 0, "100"),
        (0.04, 1.0, 1, "0"),
        (-0.04, 1.0, 1, "0"),
        (None, 1e12, 1, DASH),
        (float("nan"), 1e12, 1, DASH),
    ],
)
def test_format_number(value, scale, digits, expected):
    assert format_number(value, scale, digits) == expected


@given(st.floats(min_value=0, max_value=1e18, allow_nan=False), st.integers(0, 4))
def test_format_number_round_trips_to_the_stated_precision(value, digits):
    text = format_number(value, 1e12, digits)
    assert float(text.replace(",", "")) == pytest.approx(value / 1e12, abs=0.5 * 10**-digits + 1e-9)
    if "." in text:
        assert not text.endswith("0") and len(text.split(".")[1]) <= digits


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"value": 1.0, "scale": 0}, "scale"),
        ({"value": 1.0, "digits": -1}, "digits"),
        ({"value": 1.0, "digits": 1.5}, "digits"),
        ({"value": "3 TB/s"}, "value"),
        ({"value": True}, "value"),
        ({"value": float("inf")}, "value must be finite"),
        ({"value": float("-inf")}, "value must be finite"),
    ],
)
def test_format_number_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        format_number(**kwargs)


def test_column_validates():
    with pytest.raises(ValueError, match="key"):
        Column("", "x")
    with pytest.raises(ValueError, match="scale"):
        Column("k", "x", scale=-1.0)
    with pytest.raises(ValueError, match="digits"):
        Column("k", "x", scale=1.0, digits=-2)


def _cells(table_html: str) -> list[list[str]]:
    rows = re.findall(r"<tr>(.*?)</tr>", table_html, re.S)
    return [[html.unescape(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, re.S)] for r in rows]


def test_table_has_a_header_and_one_row_per_dict_with_escaping_and_dashes():
    rows = [{"name": "A<B>", "x": 2.5e12}, {"name": "C & D", "x": None}]
    columns = (Column("name", "Device"), Column("x", "Rate (TB/s)", 1e12, 2))
    out = format_table_html(rows, columns, caption="Caption <1>")
    assert "<caption>Caption &lt;1&gt;</caption>" in out
    assert "A&lt;B&gt;" in out and "<B>" not in out
    assert _cells(out) == [["Device", "Rate (TB/s)"], ["A<B>", "2.5"], ["C & D", DASH]]


def test_table_rejects_rows_missing_a_column_and_bad_arguments():
    with pytest.raises(ValueError, match=r"rows\[1\] has no key 'x'"):
        format_table_html([{"x": 1.0}, {"y": 2.0}], (Column("x", "X", 1.0),))
    with pytest.raises(ValueError, match="columns"):
        format_table_html([{"x": 1.0}], ())
    with pytest.raises(ValueError, match="rows"):
        format_table_html({"x": 1.0}, (Column("x", "X", 1.0),))
    with pytest.raises(ValueError, match="rows"):
        format_table_html("xy", (Column("x", "X", 1.0),))
    with pytest.raises(ValueError, match=r"rows must be a sequence of dicts, got \['dict', 'int'\]"):
        format_table_html([{"x": 1.0}, 7], (Column("x", "X", 1.0),))


def test_table_accepts_any_iterable_of_rows_once():
    # A generator is consumed by validation; the table must still hold its rows.
    columns = (Column("x", "X", 1.0, 0),)
    out = format_table_html(({"x": float(i)} for i in range(3)), columns)
    assert _cells(out) == [["X"], ["0"], ["1"], ["2"]]


@pytest.mark.parametrize("columns", [MATRIX_COLUMNS, VECTOR_MEMORY_COLUMNS, ON_CHIP_COLUMNS])
def test_hardware_tables_render_every_device_in_human_units(columns):
    rows = hardware.hardware_table_rows()
    cells = _cells(format_hardware_table_html(rows, columns))
    assert [c[0] for c in cells[1:]] == list(hardware.accelerator_names())
    assert all(len(c) == len(columns) for c in cells)


def test_hardware_table_shows_the_figures_a_reader_expects():
    rows = hardware.hardware_table_rows()
    matrix = {c[0]: c for c in _cells(format_hardware_table_html(rows, MATRIX_COLUMNS))}
    header = matrix["Device"]
    bf16 = header.index("BF16 (TFLOP/s)")
    assert matrix["H200 SXM"][bf16] == "989.4"
    assert matrix["A100 40GB SXM"][bf16] == "312"
    assert matrix["T4"][bf16] == DASH
    assert matrix["B200"][header.index("FP4 (TFLOP/s)")] == "9,000"
    memory = {c[0]: c for c in _cells(format_hardware_table_html(rows, VECTOR_MEMORY_COLUMNS))}
    header = memory["Device"]
    assert memory["A100 80GB SXM"][header.index("Bandwidth (TB/s)")] == "2.039"
    assert memory["H200 SXM"][header.index("Capacity (GB)")] == "141"
    assert memory["A100 40GB SXM"][header.index("BF16 ridge (FLOP/byte)")] == "200.6"
    assert memory["L4"][header.index("Memory")] == "GDDR6"
    chip = {c[0]: c for c in _cells(format_hardware_table_html(rows, ON_CHIP_COLUMNS))}
    header = chip["Device"]
    assert chip["H100 SXM"][header.index("Shared memory / SM (KiB)")] == "228"
    assert chip["H200 SXM"][header.index("L2 (MiB)")] == "60"
    assert chip["B200"][header.index("SMs (TPU: TensorCores)")] == "148"
    assert chip["B200"][header.index("L2 (MiB)")] == "126.5"
    assert chip["B200"][header.index("Boost clock (GHz)")] == DASH
    assert chip["T4"][header.index("L2 (MiB)")] == "4"
    assert chip["TPU v4"][header.index("Boost clock (GHz)")] == "1.05"


def test_sources_list_names_every_device_and_field():
    out = format_sources_html(hardware.ACCELERATORS)
    for device in hardware.ACCELERATORS:
        assert f"<b>{html.escape(device.name)}</b>" in out
    assert out.count("<code>hbm_bytes_per_s</code>") == len(hardware.ACCELERATORS)
    with pytest.raises(ValueError, match="accelerators"):
        format_sources_html([{"name": "x"}])


def test_formats_table_rows():
    from gpuperf.plotting.tables import FORMAT_COLUMNS, formats_table_rows

    rows = {r["name"]: r for r in formats_table_rows()}
    assert rows["fp16"]["max"] == "6.55e+04" and rows["fp16"]["bias"] == "15" and rows["fp16"]["specials"] == "inf, NaN"
    assert rows["fp8_e4m3fn"]["max"] == "448" and rows["fp8_e4m3fn"]["specials"] == "NaN only"
    assert rows["fp4_e2m1"]["layout"] == "S1 E2 M1" and rows["fp4_e2m1"]["specials"] == "none"
    assert rows["e8m0"]["layout"] == "E8 M0" and rows["e8m0"]["min_subnormal"] == "none"
    assert rows["bf16"]["epsilon"] == "0.00781"
    assert set(rows["fp32"]) == {c.key for c in FORMAT_COLUMNS}
    assert [r["name"] for r in formats_table_rows(["bf16", "fp16"])] == ["bf16", "fp16"]
    with pytest.raises(ValueError, match="fp7"):
        formats_table_rows(["fp7"])


def test_chapter06_tables_render():
    from gpuperf import roofline as rl
    from gpuperf.plotting.tables import ANALYSIS_COLUMNS, RIDGE_COLUMNS, analysis_rows, format_table_html

    html_text = format_table_html(rl.ridge_rows(["V100 SXM2", "B200"]), RIDGE_COLUMNS)
    assert "B200" in html_text and "1,169" in html_text and DASH in html_text  # fp4 ridge; the V100 has no fp4
    analyses = {"relu": rl.analyze(rl.relu(2**27), "H200 SXM")}
    rows = analysis_rows(analyses)
    assert rows[0]["percent_of_peak"] == pytest.approx(100 * analyses["relu"].fraction_of_peak)
    text = format_table_html(rows, ANALYSIS_COLUMNS)
    assert "memory" in text and "0.25" in text
    with pytest.raises(ValueError, match="analyses"):
        analysis_rows([1])
