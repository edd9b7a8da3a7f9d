"""Render rows of plain data (numbers in SI base units) as HTML tables in human units.

The hardware appendix uses it to show :func:`gpuperf.hardware.hardware_table_rows`: FLOP/s become TFLOP/s,
bytes/s TB/s, bytes GB, KiB or MiB, Hz GHz, and a missing figure (``None`` or NaN) becomes a dash. The
functions return strings; a notebook shows them with ``IPython.display.HTML``.

Presentation only: the rows come from the module that computes them (``hardware_table_rows``,
:func:`gpuperf.roofline.ridge_rows` and :func:`~gpuperf.roofline.analysis_rows`,
:func:`gpuperf.formats.formats_table_rows`, the readers of :mod:`gpuperf.results`); this module holds
the renderer and the column sets (which keys a table shows, under which header, in which unit). It
imports nothing but the standard library.
"""

from __future__ import annotations

import html
import math
import numbers
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

#: What a cell shows where the figure is not published.
DASH = "\u2014"


@dataclass(frozen=True)
class Column:
    """One table column: ``key`` of the row dict, ``header`` text, and how to print its value.

    A number is divided by ``scale`` (e.g. 1e12 to show FLOP/s as TFLOP/s) and printed with at most
    ``digits`` decimals, trailing zeros dropped. ``scale=None`` prints the value as text.
    """

    key: str
    header: str
    scale: float | None = None
    digits: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key:
            raise ValueError(f"key must be a non-empty str, got {self.key!r}")
        if self.scale is not None and not (isinstance(self.scale, numbers.Real) and self.scale > 0):
            raise ValueError(f"scale must be a positive number or None, got {self.scale!r}")
        if not isinstance(self.digits, int) or isinstance(self.digits, bool) or self.digits < 0:
            raise ValueError(f"digits must be an int >= 0, got {self.digits!r}")


def format_number(value: float | None, scale: float = 1.0, digits: int = 1) -> str:
    """``value / scale`` with thousands separators and at most ``digits`` decimals (trailing zeros dropped).

    ``None`` and NaN give :data:`DASH`; an infinite value raises ``ValueError``. Example:
    ``format_number(1234.5e12, 1e12)`` is ``"1,234.5"``.
    """
    if not (isinstance(scale, numbers.Real) and scale > 0):
        raise ValueError(f"scale must be a positive number, got {scale!r}")
    if not isinstance(digits, int) or isinstance(digits, bool) or digits < 0:
        raise ValueError(f"digits must be an int >= 0, got {digits!r}")
    if value is None:
        return DASH
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"value must be a real number or None, got {value!r}")
    if math.isnan(value):
        return DASH
    if math.isinf(value):
        raise ValueError(f"value must be finite, got {value!r}")
    text = f"{value / scale:,.{digits}f}"
    if digits > 0:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def format_cell(value, column: Column) -> str:
    """The text of one cell (not yet HTML-escaped)."""
    if column.scale is None:
        return DASH if value is None else str(value)
    return format_number(value, column.scale, column.digits)


def format_table_html(rows: Sequence[Mapping], columns: Sequence[Column], caption: str | None = None) -> str:
    """An HTML ``<table>`` with one row per dict in ``rows`` and one column per :class:`Column`.

    Every row must hold every column's key. Text is HTML-escaped; numbers are right-aligned.
    """
    if not columns or not all(isinstance(c, Column) for c in columns):
        raise ValueError(f"columns must be a non-empty sequence of Column, got {columns!r}")
    if isinstance(rows, (Mapping, str)):
        raise ValueError(f"rows must be a sequence of dicts, got {type(rows).__name__}")
    rows = list(rows)  # a generator would be used up by the checks below and print an empty table
    if not all(isinstance(r, Mapping) for r in rows):
        raise ValueError(f"rows must be a sequence of dicts, got {[type(r).__name__ for r in rows]}")
    for i, row in enumerate(rows):
        missing = [c.key for c in columns if c.key not in row]
        if missing:
            raise ValueError(f"rows[{i}] has no key {missing[0]!r} (columns need {[c.key for c in columns]})")
    # "dataframe" opts into the site theme's table colours, which follow its light and dark modes.
    out = ['<table class="gpuperf-table dataframe">']
    if caption:
        out.append(f"<caption>{html.escape(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{html.escape(c.header)}</th>" for c in columns) + "</tr></thead>")
    out.append("<tbody>")
    for row in rows:
        cells = []
        for c in columns:
            align = "left" if c.scale is None else "right"
            cells.append(f'<td style="text-align:{align}">{html.escape(format_cell(row[c.key], c))}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


_T = 1e12

#: Dense matrix-unit peaks (Tensor Cores, MXU).
MATRIX_COLUMNS: tuple[Column, ...] = (
    Column("name", "Device"),
    Column("matrix_fp64_flop_per_s", "FP64 (TFLOP/s)", _T),
    Column("matrix_tf32_flop_per_s", "TF32 (TFLOP/s)", _T),
    Column("matrix_bf16_flop_per_s", "BF16 (TFLOP/s)", _T),
    Column("matrix_fp16_flop_per_s", "FP16 (TFLOP/s)", _T),
    Column("matrix_fp8_flop_per_s", "FP8 (TFLOP/s)", _T),
    Column("matrix_fp6_flop_per_s", "FP6 (TFLOP/s)", _T),
    Column("matrix_fp4_flop_per_s", "FP4 (TFLOP/s)", _T),
    Column("matrix_int8_flop_per_s", "INT8 (TOP/s)", _T),
)

#: Vector-unit peaks, memory, and the BF16 ridge point.
VECTOR_MEMORY_COLUMNS: tuple[Column, ...] = (
    Column("name", "Device"),
    Column("vector_fp64_flop_per_s", "Vector FP64 (TFLOP/s)", _T),
    Column("vector_fp32_flop_per_s", "Vector FP32 (TFLOP/s)", _T),
    Column("vector_fp16_flop_per_s", "Vector FP16 (TFLOP/s)", _T),
    Column("vector_bf16_flop_per_s", "Vector BF16 (TFLOP/s)", _T),
    Column("memory_type", "Memory"),
    Column("hbm_bytes_per_s", "Bandwidth (TB/s)", 1e12, 3),
    Column("hbm_capacity_bytes", "Capacity (GB)", 1e9, 1),
    Column("ridge_bf16_flop_per_byte", "BF16 ridge (FLOP/byte)", 1.0, 1),
)

#: Parallelism and on-chip memory.
ON_CHIP_COLUMNS: tuple[Column, ...] = (
    Column("name", "Device"),
    Column("sm_count", "SMs (TPU: TensorCores)", 1.0, 0),
    Column("boost_clock_hz", "Boost clock (GHz)", 1e9, 3),
    Column("registers_per_sm_bytes", "Registers / SM (KiB)", 1024.0, 0),
    Column("shared_memory_per_sm_bytes", "Shared memory / SM (KiB)", 1024.0, 0),
    Column("shared_memory_bytes_per_clock_per_sm", "Shared memory (B / clock / SM)", 1.0, 0),
    Column("l2_bytes", "L2 (MiB)", 1024.0**2, 1),  # the B200's is 126.5 MiB
)


def format_hardware_table_html(
    rows: Sequence[Mapping], columns: Sequence[Column] = MATRIX_COLUMNS, caption: str | None = None
) -> str:
    """The hardware table (rows from :func:`gpuperf.hardware.hardware_table_rows`) as HTML in human units."""
    return format_table_html(rows, columns, caption)


def format_sources_html(accelerators: Iterable) -> str:
    """A nested HTML list: for each accelerator, each figure-bearing field and the source of its figure."""
    out = ['<ul class="gpuperf-sources">']
    for acc in accelerators:
        sources = getattr(acc, "sources", None)
        name = getattr(acc, "name", None)
        if not isinstance(sources, Mapping) or not isinstance(name, str):
            raise ValueError(f"accelerators must hold Accelerator objects, got {acc!r}")
        out.append(f"<li><b>{html.escape(name)}</b><ul>")
        for field_name, text in sources.items():
            out.append(f"<li><code>{html.escape(field_name)}</code>: {html.escape(text)}</li>")
        out.append("</ul></li>")
    out.append("</ul>")
    return "\n".join(out)


#: Columns for :func:`gpuperf.formats.formats_table_rows`.
FORMAT_COLUMNS = (
    Column("name", "format"), Column("bits", "bits"), Column("layout", "layout"), Column("bias", "bias"),
    Column("max", "largest"), Column("min_normal", "smallest normal"),
    Column("min_subnormal", "smallest subnormal"), Column("epsilon", "machine epsilon"),
    Column("specials", "inf / NaN"),
)

# ---- chapter 06: ridge points, roofline analyses, precision, the measured matmul sweep and chain ------------

#: Columns for :func:`gpuperf.roofline.ridge_rows` with dtypes ("fp16", "fp8", "fp4").
RIDGE_COLUMNS: tuple[Column, ...] = (
    Column("name", "Device"),
    Column("hbm_bytes_per_s", "HBM (TB/s)", 1e12, 2),
    Column("peak_fp16", "FP16 (TFLOP/s)", _T, 0),
    Column("ridge_fp16", "FP16 ridge (FLOP/B)", 1.0, 0),
    Column("peak_fp8", "FP8 (TFLOP/s)", _T, 0),
    Column("ridge_fp8", "FP8 ridge (FLOP/B)", 1.0, 0),
    Column("peak_fp4", "FP4 (TFLOP/s)", _T, 0),
    Column("ridge_fp4", "FP4 ridge (FLOP/B)", 1.0, 0),
)

#: Columns for :func:`gpuperf.roofline.analysis_rows`.
ANALYSIS_COLUMNS: tuple[Column, ...] = (
    Column("operation", "Operation"),
    Column("flop", "GFLOP", 1e9, 2),
    Column("bytes_moved", "MB moved", 1e6, 1),
    Column("intensity", "FLOP/byte", 1.0, 2),
    Column("bound", "Bound"),
    Column("time_s", "Time \u2265 (\u00b5s)", 1e-6, 1),
    Column("percent_of_peak", "Peak reachable (%)", 1.0, 2),
)


#: Columns for the precision table of chapter 06 (rows built there from dicts with these keys).
PRECISION_COLUMNS: tuple[Column, ...] = (
    Column("dtype", "Format"),
    Column("peak", "Matrix peak (TFLOP/s)", _T, 0),
    Column("ridge", "Ridge (FLOP/B)", 1.0, 0),
    Column("relu", "ReLU intensity", 1.0, 3),
    Column("gemv_time_s", "4096\u00b2 GEMV \u2265 (\u00b5s)", 1e-6, 2),
    Column("threshold", "Smallest compute-bound N", 1.0, 0),
)

#: Columns for :func:`gpuperf.results.matmul.report_table_rows`.
MATMUL_COLUMNS: tuple[Column, ...] = (
    Column("shape", "m x k x n"),
    Column("kind", "Kind"),
    Column("intensity", "FLOP/byte", 1.0, 0),
    Column("time_us", "Time (\u00b5s)", 1.0, 1),
    Column("tflop_per_s", "TFLOP/s", 1.0, 0),
    Column("tb_per_s", "TB/s", 1.0, 2),
    Column("of_peak", "% of peak", 1.0, 1),
    Column("of_bound", "% of roofline bound", 1.0, 1),
)

#: Columns for :func:`gpuperf.results.elementwise.chain_table_rows`.
CHAIN_COLUMNS: tuple[Column, ...] = (
    Column("k", "k (FLOP per element)", 1.0, 0),
    Column("intensity", "FLOP/byte", 1.0, 2),
    Column("fused_time_s", "Fused (\u00b5s)", 1e-6, 1),
    Column("fused_over_copy", "Fused / copy time", 1.0, 2),
    Column("fused_flop_per_s", "Fused TFLOP/s", 1e12, 1),
    Column("percent_of_vector_peak", "% of fp32 vector peak", 1.0, 1),
    Column("unfused_time_s", "Unfused (\u00b5s)", 1e-6, 0),
)

# ---- the kernel scoreboard (rows from gpuperf.results.scoreboard) --------------------------------------------

#: Columns for :func:`gpuperf.results.scoreboard.summary_rows`: each target's ratios and verdict.
SCOREBOARD_SUMMARY_COLUMNS: tuple[Column, ...] = (
    Column("kernel", "kernel"), Column("reference", "reference"), Column("target", "target"),
    Column("measured", "measured"), Column("worst", "worst", 1.0, 3),
    Column("median", "median", 1.0, 3), Column("best", "best", 1.0, 3), Column("status", "verdict"),
)

#: Columns for the same rows: the kernel's and the reference's fractions of the datasheet peak.
SCOREBOARD_PEAK_COLUMNS: tuple[Column, ...] = (
    Column("kernel", "kernel"), Column("reference", "reference"), Column("peak", "datasheet peak"),
    Column("of_peak", "kernel / peak"), Column("reference_of_peak", "reference / peak"),
)

#: Columns for :func:`gpuperf.results.scoreboard.case_rows` (rates in TB/s or TFLOP/s, as each case's
#: ``unit`` says).
SCOREBOARD_CASE_COLUMNS: tuple[Column, ...] = (
    Column("kernel", "kernel"), Column("case", "case"), Column("reference", "reference"),
    Column("unit", "unit"), Column("rate", "kernel", 1e12, 2), Column("reference_rate", "reference", 1e12, 2),
    Column("ratio", "ratio", 1.0, 3), Column("retimed", "ratio re-timed"), Column("target", "target"),
    Column("verdict", "verdict"), Column("of_peak", "kernel / peak", 1.0, 2),
    Column("reference_of_peak", "reference / peak", 1.0, 2),
)

#: Columns for :func:`gpuperf.results.scoreboard.provenance_rows`.
SCOREBOARD_PROVENANCE_COLUMNS: tuple[Column, ...] = (
    Column("run", "recorded run"), Column("targets", "targets"), Column("provenance", "measured"),
    Column("command", "command"),
)


_UNIT_SCALES = {"B/s": (1e12, "TB/s"), "FLOP/s": (1e12, "TFLOP/s")}


def _bytes_scale(n_bytes: float) -> tuple[float, str]:
    for scale, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if abs(n_bytes) >= scale:
            return scale, unit
    return 1.0, "bytes"


def _time_scale(seconds: float) -> tuple[float, str]:
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(seconds) >= scale:
            return scale, unit
    return 1e-9, "ns"


def format_numbers_box_html(numbers: Iterable, title: str = "Numbers to remember (H200 SXM)") -> str:
    """A boxed list of :class:`gpuperf.results.sheet.Number`s: label, value in a human unit, how obtained.

    B/s show as TB/s, FLOP/s as TFLOP/s, seconds in s, ms, µs or ns, bytes in GB, MB or kB (decimal); other units as they are.
    """
    items = []
    for n in numbers:
        if n.unit == "s":
            scale, unit = _time_scale(n.value)
        elif n.unit == "B":
            scale, unit = _bytes_scale(n.value)
        else:
            scale, unit = _UNIT_SCALES.get(n.unit, (1.0, n.unit))
        value = n.value / scale
        shown = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
        unit = f" {unit}" if unit else ""
        items.append(f"<li><b>{html.escape(n.label)}</b>: {shown}{html.escape(unit)} "
                     f"<span class=\"gpuperf-how\">({html.escape(n.how)})</span></li>")
    if not items:
        raise ValueError("numbers: nothing to show (no number of the sheet names this chapter)")
    return (f'<div class="gpuperf-numbers admonition tip"><p class="admonition-title">{html.escape(title)}</p>'
            f"<ul>{''.join(items)}</ul></div>")
