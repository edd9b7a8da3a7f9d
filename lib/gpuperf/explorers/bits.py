"""The bit explorer: toggle the bits of a floating-point number and see its value; type a value and see
its bits in every format of :mod:`gpuperf.formats`.

A value is ``(-1)^s * 2^(e - bias) * (1 + m / 2^M)`` for a normal exponent field ``e``, and
``(-1)^s * 2^(1 - bias) * (m / 2^M)`` for the subnormals of field 0 (IEEE 754-2019, section 3.4); the
explorer shows which case applies and the arithmetic. The pure functions here (:func:`bit_layout`,
:func:`describe_pattern`, :func:`format_rows`, ...) return data or HTML strings and are what the widget
calls; the widget (:class:`BitExplorer`) only wires controls to them. Only widgets that exist in both
ipywidgets 7.7 (Colab) and 8 are used (``Dropdown``, ``ToggleButton``, ``Text``, ``HTML``, ``HBox``,
``VBox``, ``Layout``), and all output is HTML held by ``HTML`` widgets. In the book build
:func:`bit_explorer` returns the static explorer of :mod:`gpuperf.explorers.bits_static` instead (the same
controls, run in the page by JavaScript that a browser test checks against these functions).
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Sequence

import ipywidgets as widgets
import numpy as np

from gpuperf import formats
from gpuperf.explorers.bits_static import StaticBitExplorer
from gpuperf.explorers.core import resolve_mode

#: Formats offered by the explorer, widest first.
EXPLORER_FORMATS: tuple[str, ...] = tuple(formats.FORMATS)

#: The colour of each field's bits (button styles exist in ipywidgets 7 and 8).
FIELD_STYLES = {"sign": "danger", "exponent": "success", "mantissa": "info"}


# --------------------------------------------------------------------------------------------------
# Pure functions
# --------------------------------------------------------------------------------------------------

def bit_layout(fmt) -> tuple[str, ...]:
    """The field of each bit of ``fmt``, most significant first: ``("sign", "exponent", ..., "mantissa", ...)``."""
    f = formats.get_format(fmt)
    return (("sign",) if f.signed else ()) + ("exponent",) * f.exponent_bits + ("mantissa",) * f.mantissa_bits


def pattern_to_bits(pattern: int, fmt) -> tuple[int, ...]:
    """The bits of ``pattern`` (an int in ``[0, 2^total_bits)``), most significant first."""
    f = formats.get_format(fmt)
    if not isinstance(pattern, (int, np.integer)) or isinstance(pattern, bool) or not 0 <= pattern < (1 << f.total_bits):
        raise ValueError(f"pattern must be an int in [0, 2^{f.total_bits}) for {f.name}, got {pattern!r}")
    return tuple((int(pattern) >> i) & 1 for i in range(f.total_bits - 1, -1, -1))


def bits_to_pattern(bits: Sequence[int]) -> int:
    """The integer whose bits, most significant first, are ``bits`` (each 0 or 1, or a bool)."""
    out = 0
    for i, b in enumerate(bits):
        if b not in (0, 1):
            raise ValueError(f"bits must hold only 0 and 1, got {b!r} at position {i}")
        out = (out << 1) | int(b)
    return out


def parse_value(text: str) -> float:
    """A number typed by the reader: anything ``float()`` accepts (``"0.1"``, ``"1e-8"``, ``"-inf"``,
    ``"nan"``), or a fraction ``"p/q"``. Raises ``ValueError`` naming ``text`` otherwise."""
    s = str(text).strip().replace("_", "").replace(",", "")
    try:
        if "/" in s:
            num, den = s.split("/", 1)
            return float(num) / float(den)
        return float(s)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"text must be a number such as 0.1, 1e-8, -inf or 1/3, got {text!r}") from None


def _number(x: float) -> str:
    """A float printed exactly enough to tell neighbours apart (repr), with -0.0 kept."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    return repr(float(x))


@dataclass(frozen=True)
class PatternDescription:
    """One bit pattern explained: its fields, the case (normal, subnormal, zero, inf, NaN) and the
    arithmetic giving its value, as text and HTML."""

    fmt: str
    fields: formats.FloatFields
    kind: str  # "normal", "subnormal", "zero", "infinity", "NaN"
    formula: str  # plain text, e.g. "(-1)^0 × 2^(127 - 127) × (1 + 0/128) = 1.0"

    def html(self) -> str:
        f = formats.get_format(self.fmt)
        fl = self.fields
        parts = [
            f"<b>{html.escape(f.name)}</b> bits <code>{html.escape(fl.bit_string)}</code>"
            f" (0x{fl.bits:0{(f.total_bits + 3) // 4}X}) &rarr; <b>{html.escape(_number(fl.value))}</b>"
            f" &nbsp;[{self.kind}]",
        ]
        detail = []
        if f.signed:
            detail.append(f"sign s = {fl.sign}")
        detail.append(f"exponent field e = {fl.exponent_bits_value} (bias {f.bias})")
        if f.mantissa_bits:
            detail.append(f"mantissa field m = {fl.mantissa_bits_value} of 2<sup>{f.mantissa_bits}</sup>")
        parts.append(", ".join(detail))
        parts.append(f"<code>{html.escape(self.formula)}</code>")
        return "<br>".join(parts)


def describe_pattern(pattern: int, fmt) -> PatternDescription:
    """Explain the bit pattern ``pattern`` of ``fmt`` (see :class:`PatternDescription`)."""
    f = formats.get_format(fmt)
    pattern_to_bits(pattern, f)  # validates the range
    fl = formats.fields(int(pattern), f, from_bits=True)
    M, e, m, s = f.mantissa_bits, fl.exponent_bits_value, fl.mantissa_bits_value, fl.sign
    sign = f"(-1)^{s} × " if f.signed else ""
    if math.isnan(fl.value):
        kind, formula = "NaN", "a NaN code: not a number"
    elif math.isinf(fl.value):
        kind, formula = "infinity", f"exponent field all ones, mantissa 0: {_number(fl.value)}"
    elif not f.has_subnormals:
        kind = "normal"
        formula = f"2^({e} - {f.bias}) = {_number(fl.value)}"
    elif e == 0:
        kind = "zero" if m == 0 else "subnormal"
        formula = f"{sign}2^(1 - {f.bias}) × ({m}/{1 << M}) = {_number(fl.value)}   (no hidden 1)"
    else:
        kind = "normal"
        formula = f"{sign}2^({e} - {f.bias}) × (1 + {m}/{1 << M}) = {_number(fl.value)}"
    return PatternDescription(f.name, fl, kind, formula)


@dataclass(frozen=True)
class FormatRow:
    """A value stored in one format: the stored value, its bits, and what storing it did."""

    fmt: str
    stored: float
    bit_string: str
    relative_error: float  # |stored - x| / |x|: 0 for an exact x (0 too), inf on overflow to inf, else NaN if undefined
    note: str  # "exact", "rounded", "overflow to inf", "saturated to the largest value", "underflow to zero", ...


def store_in_format(x: float, fmt) -> FormatRow:
    """Round ``x`` to ``fmt`` (its default overflow rule) and describe the result."""
    f = formats.get_format(fmt)
    x = float(x)
    stored = float(formats.round_to_format(x, f))
    if math.isnan(stored) and not f.has_nan:
        return FormatRow(f.name, stored, "—", math.nan, "not representable (no NaN in this format)")
    if math.isnan(stored) and not math.isnan(x):
        reason = "negative: no sign bit" if x < 0 and not f.signed else "overflow to NaN"
        return FormatRow(f.name, stored, formats.fields(x, f).bit_string, math.nan, reason)
    bit_string = formats.fields(x, f).bit_string
    if math.isnan(x):
        note, rel = "NaN", math.nan
    elif math.isinf(stored) and not math.isinf(x):
        note, rel = "overflow to inf", math.inf
    elif math.isinf(x):
        note, rel = ("inf" if math.isinf(stored) else "saturated to the largest value"), math.nan
    elif x == 0 and stored != 0:  # E8M0 has no zero
        note, rel = "no zero in this format: its smallest value", math.nan
    else:
        rel = 0.0 if x == 0 else abs(stored - x) / abs(x)
        if stored == x:
            note = "exact"
        elif formats.overflows(x, f):  # not merely rounded down to max (E4M3 rounds 450 to 448)
            note = "saturated to the largest value"
        elif stored == 0:
            note = "underflow to zero"
        elif abs(stored) < f.min_normal:
            note = "rounded (subnormal)"
        else:
            note = "rounded"
    return FormatRow(f.name, stored, bit_string, rel, note)


def format_rows(x: float, fmts: Sequence[str] = EXPLORER_FORMATS) -> list[FormatRow]:
    """``x`` stored in each of ``fmts`` (see :func:`store_in_format`)."""
    return [store_in_format(x, f) for f in fmts]


def format_rows_html(x: float, fmts: Sequence[str] = EXPLORER_FORMATS) -> str:
    """:func:`format_rows` as an HTML table (class ``gpuperf-table dataframe``)."""
    head = ("format", "bits (sign exponent mantissa)", "stored value", "relative error", "")
    out = ['<table class="gpuperf-table dataframe">',
           f"<caption>{html.escape(_number(float(x)))} in every format</caption>",
           "<thead><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>"]
    for row in format_rows(x, fmts):
        rel = "—" if math.isnan(row.relative_error) else f"{row.relative_error:.3g}"
        out.append(
            f"<tr><td>{html.escape(row.fmt)}</td><td><code>{html.escape(row.bit_string)}</code></td>"
            f'<td style="text-align:right">{html.escape(_number(row.stored))}</td>'
            f'<td style="text-align:right">{rel}</td><td>{html.escape(row.note)}</td></tr>'
        )
    out.append("</tbody></table>")
    return "\n".join(out)


# --------------------------------------------------------------------------------------------------
# The widget
# --------------------------------------------------------------------------------------------------

def _chosen_format(fmt: str, fmts: tuple[str, ...]) -> str:
    """The canonical name of format ``fmt``, which must be one of ``fmts``."""
    try:
        chosen = formats.get_format(fmt).name
    except ValueError:
        raise ValueError(f"fmt must be one of {list(fmts)}, got {fmt!r}") from None
    if chosen not in fmts:
        raise ValueError(f"fmt must be one of {list(fmts)}, got {fmt!r}")
    return chosen


class BitExplorer(widgets.VBox):
    """The explorer widget (a ``VBox``): a format dropdown, one toggle button per bit, a value box, the
    explanation of the current pattern and a table of the value in every format.

    ``pattern`` is the current bit pattern and ``value`` the number the table shows; toggling a bit sets
    both from the bits, typing a value sets both from the value (rounded to the chosen format for the
    bits, unrounded in the table).
    """

    def __init__(self, fmt: str = "bf16", value: float | str = 1.0, fmts: Sequence[str] = EXPLORER_FORMATS):
        fmts = tuple(fmts)
        for name in fmts:
            formats.get_format(name)
        chosen = _chosen_format(fmt, fmts)
        self.fmts = fmts
        self.value = parse_value(value) if isinstance(value, str) else float(value)
        self.pattern = 0
        self._quiet = False
        self.format_dropdown = widgets.Dropdown(options=list(fmts), value=chosen, description="format")
        self.value_text = widgets.Text(value=_number(self.value), description="value", continuous_update=False)
        self.message = widgets.HTML()
        self.bit_box = widgets.HBox(layout=widgets.Layout(flex_flow="row wrap"))
        self.explanation = widgets.HTML()
        self.table = widgets.HTML()
        self.buttons = []
        super().__init__(children=[
            widgets.HBox([self.format_dropdown, self.value_text, self.message]),
            self.bit_box,
            self.explanation,
            self.table,
        ])
        self.format_dropdown.observe(self._on_format, names="value")
        self.value_text.observe(self._on_text, names="value")
        self._build_buttons()
        self.set_value(self.value)

    # -- state ------------------------------------------------------------------------------------

    @property
    def fmt(self) -> str:
        return self.format_dropdown.value

    def set_value(self, x: float) -> None:
        """Show ``x``: the table of every format, and ``x`` rounded to the chosen format in the bits."""
        x = float(x)
        f = formats.get_format(self.fmt)
        self.value = x
        stored = float(formats.round_to_format(x, f))
        if math.isnan(stored) and not f.has_nan:
            self.message.value = f"<i>{html.escape(f.name)} has no NaN; showing 0</i>"
            stored = 0.0
        else:
            self.message.value = ""
        self.pattern = int(formats.encode(stored, f))
        self._show_pattern()
        self.table.value = format_rows_html(x, self.fmts)
        self._set_text(x)

    def set_pattern(self, pattern: int) -> None:
        """Show the bit pattern ``pattern`` of the chosen format; the table shows its value."""
        pattern_to_bits(pattern, self.fmt)
        self.pattern = int(pattern)
        self._show_pattern()
        self.value = float(formats.decode(self.pattern, self.fmt))
        self.message.value = ""
        self.table.value = format_rows_html(self.value, self.fmts)
        self._set_text(self.value)

    # -- events -----------------------------------------------------------------------------------

    def _build_buttons(self) -> None:
        previous = self.buttons
        self.buttons = []
        for field in bit_layout(self.fmt):
            button = widgets.ToggleButton(value=False, description="0", button_style=FIELD_STYLES[field],
                                          tooltip=f"{field} bit", layout=widgets.Layout(width="28px", padding="0"))
            button.observe(self._on_bit, names="value")
            self.buttons.append(button)
        self.bit_box.children = tuple(self.buttons)
        for old in previous:  # the previous format's buttons are no longer shown: free their models
            old.close()

    def _show_pattern(self) -> None:
        self._quiet = True
        try:
            for button, bit in zip(self.buttons, pattern_to_bits(self.pattern, self.fmt)):
                button.value = bool(bit)
                button.description = str(bit)
        finally:
            self._quiet = False
        self.explanation.value = describe_pattern(self.pattern, self.fmt).html()

    def _set_text(self, x: float) -> None:
        self._quiet = True
        try:
            self.value_text.value = _number(x)
        finally:
            self._quiet = False

    def _on_bit(self, _change=None) -> None:
        if self._quiet:
            return
        self.set_pattern(bits_to_pattern([int(b.value) for b in self.buttons]))

    def _on_format(self, _change=None) -> None:
        self._build_buttons()
        self.set_value(self.value)

    def _on_text(self, change) -> None:
        if self._quiet:
            return
        try:
            x = parse_value(change["new"])
        except ValueError as error:
            self.message.value = f'<span style="color:#D55E00">{html.escape(str(error))}</span>'
            return
        self.set_value(x)


def bit_explorer(fmt: str = "bf16", value: float | str = 1.0, fmts: Sequence[str] = EXPLORER_FORMATS, *,
                 mode: str | None = None):
    """A widget to toggle the bits of a ``fmt`` number and to see a typed ``value`` in every format of
    ``fmts`` (see :class:`BitExplorer`). ``value`` may be a number or text such as ``"0.1"`` or ``"1/3"``.

    In the book build (:func:`gpuperf.explorers.core.resolve_mode`) it returns the static explorer of
    :mod:`gpuperf.explorers.bits_static` instead: the same controls, run by JavaScript in the page.
    """
    if resolve_mode(mode) == "static":
        fmts = tuple(formats.get_format(name).name for name in fmts)
        chosen = _chosen_format(fmt, fmts)
        x = parse_value(value) if isinstance(value, str) else float(value)
        return StaticBitExplorer(chosen, x, fmts)
    return BitExplorer(fmt, value, fmts)
