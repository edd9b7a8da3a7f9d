"""The static bit explorer's JavaScript against the Python it re-implements (gpuperf.explorers.bits_static).

Every code of every format of at most 8 bits, a sample of the 16- and 32-bit codes, and typed values
around every kind of boundary (ties between neighbours, the overflow threshold, subnormals, specials):
the explanation and the table the page shows must equal, character for character, what the Python
functions return. Then the page itself: clicking a bit, changing the format, typing a value.
"""

from __future__ import annotations

import math
import random

import pytest

from gpuperf import formats
from gpuperf.explorers import bits as B
from gpuperf.explorers.bits_static import format_table

FMTS = B.EXPLORER_FORMATS
TABLE = format_table(FMTS)


@pytest.fixture(scope="module")
def page(browser):
    p = browser.new_page()
    p.set_default_timeout(120_000)  # a hang detector, not a speed limit
    errors = []
    p.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    p.on("pageerror", lambda e: errors.append(str(e)))
    html = B.bit_explorer("bf16", 0.1, mode="static")._repr_html_()
    p.set_content(f"<!doctype html><html><body>{html}</body></html>")
    p.wait_for_function("() => window.gpuperfBits !== undefined")
    p.errors = errors
    yield p
    assert not errors, errors
    p.close()


def _codes() -> list[tuple[str, int]]:
    rng = random.Random(20261130)
    cases = []
    for name in FMTS:
        f = formats.get_format(name)
        n = 1 << f.total_bits
        if f.total_bits <= 8:
            cases += [(name, p) for p in range(n)]
        else:
            edges = [0, 1, n - 1, n // 2, n // 2 - 1, n // 2 + 1]
            cases += [(name, p) for p in edges] + [(name, rng.randrange(n)) for _ in range(400)]
    return cases


def _values() -> list[float]:
    rng = random.Random(7)
    vals = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-8, 0.1, 1 / 3, 65520.0, 65504.0, 464.0, 450.0, 480.0,
            1e308, 5e-324, -5e-324, 2.0**-149, 2.0**-150, 3.4e38, 3.5e38, 1.0625, 1.125, 0.03125]
    for name in FMTS:
        f = formats.get_format(name)
        top = (1 << (f.total_bits - 1)) if f.signed else (1 << f.total_bits)
        for _ in range(40):  # midpoints (ties) and near-midpoints between neighbouring values
            q = rng.randrange(top - 1)
            a, b = float(formats.decode(q, name)), float(formats.decode(q + 1, name))
            if math.isfinite(a) and math.isfinite(b):
                mid = (a + b) / 2
                vals += [mid, math.nextafter(mid, math.inf), math.nextafter(mid, -math.inf), -mid]
        vals += [f.max_value, f.max_value * 1.01, f.max_value * 1.2, f.min_subnormal / 2, f.min_subnormal * 0.75,
                 f.min_normal * 0.999]
    vals += [rng.choice([-1, 1]) * math.ldexp(rng.random(), rng.randint(-160, 140)) for _ in range(400)]
    return vals


def test_every_small_code_and_a_sample_of_wide_codes(page):
    cases = _codes()
    got = page.evaluate(
        """([cases, table]) => { const by = {}; table.forEach(f => { by[f.name] = f; });
           return cases.map(([n, p]) => [gpuperfBits.describe(p, by[n]),
                                         gpuperfBits.rowsHtml(gpuperfBits.decode(p, by[n]), table)]); }""",
        [cases, TABLE])
    assert len(got) == len(cases) > 2000
    for (name, p), (described, rows) in zip(cases, got):
        assert described == B.describe_pattern(p, name).html(), (name, p)
        assert rows == B.format_rows_html(float(formats.decode(p, name))), (name, p)


def test_typed_values_round_encode_and_tabulate_as_python(page):
    vals = _values()
    got = page.evaluate(
        """([vals, table]) => vals.map(x => [gpuperfBits.rowsHtml(x, table),
             table.map(f => gpuperfBits.encode(x, f))])""", [vals, TABLE])
    for x, (rows, codes) in zip(vals, got):
        assert rows == B.format_rows_html(x), repr(x)
        for name, code in zip(FMTS, codes):
            stored = float(formats.round_to_format(x, name))
            if math.isnan(stored) and not formats.get_format(name).has_nan:
                assert code is None, (x, name)
            else:
                assert code == int(formats.encode(x, name)), (x, name)


@pytest.mark.parametrize("x", [0.03125, 1.125, 0.0625, 2.5e-5, 123456.0, 0.00015, 9.995, 1e16, 1e-5, 0.5])
def test_number_formatting_matches_python(page, x):
    assert page.evaluate("x => [gpuperfBits.pyRepr(x), gpuperfBits.pyG(x, 3)]", x) == [repr(x), format(x, ".3g")]


@pytest.mark.parametrize("text", ["0.1", "1e-8", "-inf", "1/3", " 65,504 ", "nan", "1_000", "+2", ".5", "5.",
                                  "1e400", "-0", "Infinity", "inf/2", "0x10", "1/0", "abc", "1e", ""])
def test_parse_value_matches_python(page, text):
    got = page.evaluate(
        "t => { try { return gpuperfBits.pyRepr(gpuperfBits.parseValue(t)); } catch (e) { return 'ERR ' + e.message; } }",
        text)
    try:
        expected = repr(B.parse_value(text))
        expected = "NaN" if expected == "nan" else expected
    except ValueError as error:
        expected = f"ERR {error}"
    assert got == expected


def test_the_page_responds_to_bits_format_and_value(page):
    root = page.locator(".gpuperf-bits")
    explanation = root.locator(".gb-explanation")
    assert page.locator(".gb-bit").count() == 16
    assert root.get_attribute("data-gb-pattern") == str(0x3DCD)  # 0.1 in bf16
    assert "0.10009765625" in explanation.inner_text()
    page.locator(".gb-bit").nth(15).click()  # the last mantissa bit: 0x3DCD -> 0x3DCC
    assert root.get_attribute("data-gb-pattern") == str(0x3DCC)
    assert repr(float(formats.decode(0x3DCC, "bf16"))) in explanation.inner_text()
    assert page.locator("input.gb-value").input_value() == repr(float(formats.decode(0x3DCC, "bf16")))
    page.select_option("select.gb-format", "fp8_e4m3fn")
    assert page.locator(".gb-bit").count() == 8
    page.fill("input.gb-value", "464")
    page.press("input.gb-value", "Enter")
    page.locator("input.gb-value").blur()
    assert root.get_attribute("data-gb-pattern") == str(int(formats.encode(464.0, "fp8_e4m3fn")))
    assert root.locator(".gb-table").inner_html().startswith('<table class="gpuperf-table dataframe">')
    page.fill("input.gb-value", "one")
    page.locator("input.gb-value").blur()
    assert "text must be a number" in root.locator(".gb-message").inner_text()
