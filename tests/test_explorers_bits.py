"""The bit explorer: its pure functions against hand-worked patterns and torch's casts, and the widget's wiring."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpuperf import formats
from gpuperf.explorers import bits as B

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("fmt, signed, e, m", [
    ("fp32", 1, 8, 23), ("bf16", 1, 8, 7), ("fp16", 1, 5, 10), ("fp8_e4m3fn", 1, 4, 3),
    ("fp4_e2m1", 1, 2, 1), ("e8m0", 0, 8, 0),
])
def test_bit_layout(fmt, signed, e, m):
    layout = B.bit_layout(fmt)
    assert layout == ("sign",) * signed + ("exponent",) * e + ("mantissa",) * m


@pytest.mark.parametrize("pattern, fmt", [(0, "fp16"), (0x3C00, "fp16"), (0xFFFF, "bf16"), (0x5, "fp4_e2m1"),
                                          (0x12345678, "fp32")])
def test_bits_round_trip(pattern, fmt):
    bits = B.pattern_to_bits(pattern, fmt)
    assert len(bits) == formats.get_format(fmt).total_bits
    assert B.bits_to_pattern(bits) == pattern
    assert "".join(map(str, bits)) == format(pattern, f"0{len(bits)}b")


@pytest.mark.parametrize("pattern, kind, value", [
    (0x3F80, "normal", 1.0),  # 0 01111111 0000000
    (0x0001, "subnormal", 2.0 ** -133),  # smallest bf16 subnormal: 2^(1-127) * 1/128
    (0x8000, "zero", -0.0),
    (0x7F80, "infinity", math.inf),
    (0x7FC0, "NaN", math.nan),
    (0xC2C8, "normal", -100.0),  # 1 10000101 1001000: -2^6 * (1 + 72/128)
])
def test_describe_bf16_patterns(pattern, kind, value):
    d = B.describe_pattern(pattern, "bf16")
    assert d.kind == kind
    ref = torch.tensor(np.array([pattern], dtype=np.uint16).view(np.int16)).view(torch.bfloat16).item()
    if math.isnan(value):
        assert math.isnan(d.fields.value) and math.isnan(ref)
    else:
        assert d.fields.value == value == ref
        assert math.copysign(1, d.fields.value) == math.copysign(1, value)
        assert repr(float(value)) in d.formula
    assert d.fields.bit_string in d.html()


def test_normal_formula_spells_out_the_hidden_bit():
    d = B.describe_pattern(0xC2C8, "bf16")
    assert d.formula == "(-1)^1 × 2^(133 - 127) × (1 + 72/128) = -100.0"
    assert B.describe_pattern(0x0001, "fp16").formula.startswith("(-1)^0 × 2^(1 - 15) × (1/1024)")
    assert B.describe_pattern(127, "e8m0").formula == "2^(127 - 127) = 1.0"
    assert B.describe_pattern(0x7F, "fp8_e4m3fn").kind == "NaN"  # S.1111.111 is E4M3FN's only NaN pair
    assert B.describe_pattern(0x7E, "fp8_e4m3fn").fields.value == 448.0


@pytest.mark.parametrize("x", [0.1, 70000.0, 1 / 3, -2.5e-6, 300.0, 1e-9, 65520.0])
def test_store_in_format_matches_torch_casts(x):
    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16,
              "fp8_e4m3fn": torch.float8_e4m3fn, "fp8_e5m2": torch.float8_e5m2}
    rows = {r.fmt: r for r in B.format_rows(x)}
    assert set(rows) == set(B.EXPLORER_FORMATS)
    for name, dtype in dtypes.items():
        ref = torch.tensor(x, dtype=torch.float64).to(dtype).double().item()
        row = rows[name]
        if name == "fp8_e4m3fn" and math.isnan(ref) and abs(x) > 448:
            # PyTorch before 2.13 (e.g. Colab's 2.11) casts out-of-range values to NaN; 2.13 saturates, as
            # gpuperf.formats does by default for the OCP "FN" formats.
            ref = math.copysign(448.0, x)
        if math.isnan(ref):
            assert math.isnan(row.stored)
        else:
            assert row.stored == ref, name
            if math.isfinite(ref):
                assert row.relative_error == pytest.approx(abs(ref - x) / abs(x), rel=1e-12, abs=0)


def test_store_in_format_notes():
    assert B.store_in_format(1.0, "bf16").note == "exact"
    assert B.store_in_format(0.1, "bf16").note == "rounded"
    assert B.store_in_format(70000.0, "fp16").note == "overflow to inf"
    assert B.store_in_format(1000.0, "fp8_e4m3fn").note == "saturated to the largest value"
    # Rounding to the largest value is not saturation: 450 and the tie 464 round to 448 in any mode.
    assert B.store_in_format(450.0, "fp8_e4m3fn").note == "rounded"
    assert B.store_in_format(464.0, "fp8_e4m3fn").note == "rounded"
    assert B.store_in_format(465.0, "fp8_e4m3fn").note == "saturated to the largest value"
    assert B.store_in_format(7.0, "fp4_e2m1").note == "saturated to the largest value"  # the odd tie above 6
    zero = B.store_in_format(0.0, "e8m0")  # E8M0 has no zero: its smallest value, 2^-127
    assert zero.stored == 2.0**-127 and zero.note.startswith("no zero") and math.isnan(zero.relative_error)
    assert B.store_in_format(0.0, "bf16").note == "exact" and B.store_in_format(0.0, "bf16").relative_error == 0
    assert B.store_in_format(1e-9, "fp16").note == "underflow to zero"
    assert B.store_in_format(1e-7, "fp16").note == "rounded (subnormal)"
    assert B.store_in_format(math.nan, "fp4_e2m1").note.startswith("not representable")
    assert B.store_in_format(-1.0, "e8m0").note == "negative: no sign bit"
    row = B.store_in_format(0.1, "bf16")
    assert row.bit_string == "0 01111011 1001101" and row.stored == 0.10009765625


def test_format_rows_html_lists_every_format():
    page = B.format_rows_html(0.1)
    for name in B.EXPLORER_FORMATS:
        assert f"<td>{name}</td>" in page
    assert "0 01111011 1001101" in page and page.count("<tr>") == len(B.EXPLORER_FORMATS) + 1


@pytest.mark.parametrize("text, value", [("0.1", 0.1), ("1e-8", 1e-8), ("-inf", -math.inf), ("1/3", 1 / 3),
                                         (" 65,504 ", 65504.0)])
def test_parse_value(text, value):
    assert B.parse_value(text) == value


def test_widget_starts_in_the_requested_state():
    w = B.bit_explorer("bf16", 0.1)
    assert w.fmt == "bf16" and len(w.buttons) == 16
    assert w.pattern == int(formats.encode(0.1, "bf16")) == 0x3DCD
    assert [int(b.value) for b in w.buttons] == list(B.pattern_to_bits(0x3DCD, "bf16"))
    assert [b.description for b in w.buttons] == [str(b) for b in B.pattern_to_bits(0x3DCD, "bf16")]
    assert "0.10009765625" in w.explanation.value and "0.10009765625" in w.table.value


def test_toggling_a_bit_changes_the_value():
    w = B.bit_explorer("fp16", 1.0)
    w.buttons[-1].value = True  # the last mantissa bit: 1 + 2^-10
    assert w.value == 1 + 2.0 ** -10 and w.value_text.value == repr(1 + 2.0 ** -10)
    w.buttons[0].value = True  # the sign
    assert w.value == -(1 + 2.0 ** -10)
    assert w.buttons[0].description == "1"


def test_typing_a_value_sets_the_bits_and_switching_format_keeps_the_value():
    w = B.bit_explorer("bf16", 1.0)
    w.value_text.value = "70000"
    assert w.pattern == 0x4789 and w.value == 70000.0
    bf16_buttons = list(w.buttons)
    w.format_dropdown.value = "fp16"
    assert len(w.buttons) == 16 and w.pattern == 0x7C00  # 70000 overflows fp16 to inf
    assert all(b.comm is None for b in bf16_buttons) and w.bit_box.children == tuple(w.buttons)
    w.format_dropdown.value = "fp4_e2m1"
    assert len(w.buttons) == 4 and float(formats.decode(w.pattern, "fp4_e2m1")) == 6.0
    w.value_text.value = "nan"
    assert "no NaN" in w.message.value and w.pattern == 0
    w.value_text.value = "not a number"
    assert "text must be a number" in w.message.value


@pytest.mark.parametrize("call, argument", [
    (lambda: B.bit_explorer("fp12"), "fmt"),
    (lambda: B.bit_explorer("fp16", fmts=("bf16",)), "fmt"),
    (lambda: B.pattern_to_bits(1 << 16, "bf16"), "pattern"),
    (lambda: B.pattern_to_bits(-1, "bf16"), "pattern"),
    (lambda: B.bits_to_pattern([1, 2]), "bits"),
    (lambda: B.parse_value("one"), "text"),
    (lambda: B.describe_pattern(16, "fp4_e2m1"), "pattern"),
])
def test_bad_input_raises_value_error_naming_the_argument(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()
