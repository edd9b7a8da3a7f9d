"""Reading a recorded matmul sweep (benchmark family ``matmul_roof``) against the roofline.

Pure functions over the rows :mod:`gpuperf.benchmark` writes (one dict per case with ``kind``, ``m``,
``k``, ``n``, ``flop``, ``bytes_moved``, ``time_s``, ``flop_per_s``, ``bytes_per_s``, ``label``,
``reference``, ``ratio_to_reference``). Chapter 06 uses them to compare the measured TFLOP/s with the
datasheet peak and with the roofline's bound ``min(P, I B)`` at each shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from gpuperf.hardware import Accelerator
from gpuperf.roofline import as_accelerator, attainable_flop_per_s

KINDS = ("copy", "square", "training", "decode")

_REQUIRED = ("kind", "m", "k", "n", "flop", "bytes_moved", "time_s", "flop_per_s", "bytes_per_s", "label")

Row = Mapping[str, Any]


def _rows(run_or_rows) -> list[Row]:
    rows = run_or_rows["results"] if isinstance(run_or_rows, Mapping) else run_or_rows
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence):
        raise ValueError(f"rows must be a list of row dicts or a run with 'results', got {type(rows).__name__}")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ValueError(f"rows[{i}] must be a dict, got {type(row).__name__}")
        missing = [key for key in _REQUIRED if key not in row]
        if missing:
            raise ValueError(f"rows[{i}] ({row.get('label', '?')}) lacks {missing}")
        if row["kind"] not in KINDS:
            raise ValueError(f"rows[{i}]['kind'] must be one of {KINDS}, got {row['kind']!r}")
        if not (row["time_s"] > 0 and math.isfinite(row["time_s"])):
            raise ValueError(f"rows[{i}]['time_s'] must be finite and > 0, got {row['time_s']!r}")
    return list(rows)


def rows_of_kind(run_or_rows, kind: str) -> list[Row]:
    """The rows of one ``kind`` ("copy", "square", "training", "decode"), squares sorted by N."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    rows = [r for r in _rows(run_or_rows) if r["kind"] == kind]
    return sorted(rows, key=lambda r: (r["m"], r["k"], r["n"]))


@dataclass(frozen=True)
class ShapeResult:
    """One measured shape against the roofline of ``accelerator`` (bf16 matrix peak, HBM bandwidth).

    ``fraction_of_peak``: measured FLOP/s over the datasheet peak. ``fraction_of_bound``: measured FLOP/s
    over the roofline's attainable rate ``min(P, I B)`` at the shape's intensity (at most 1 unless the
    device beats its datasheet). ``bound``: "compute" or "memory", the roof that binds by the model.
    """

    label: str
    kind: str
    m: int
    k: int
    n: int
    intensity_flop_per_byte: float
    flop_per_s: float
    bytes_per_s: float
    time_s: float
    fraction_of_peak: float
    fraction_of_bound: float
    bound: str


def analyze_rows(run_or_rows, accelerator: str | Accelerator, dtype: str = "bf16") -> list[ShapeResult]:
    """A :class:`ShapeResult` for every matmul row (copies left out), in the rows' order."""
    acc = as_accelerator(accelerator)
    peak = acc.peak_flop_per_s(dtype, "matrix")
    bandwidth = acc.hbm_bytes_per_s
    out = []
    for r in _rows(run_or_rows):
        if r["kind"] == "copy":
            continue
        intensity = r["flop"] / r["bytes_moved"]
        bound_rate = float(attainable_flop_per_s(intensity, peak, bandwidth))
        out.append(ShapeResult(
            label=r["label"], kind=r["kind"], m=int(r["m"]), k=int(r["k"]), n=int(r["n"]),
            intensity_flop_per_byte=intensity, flop_per_s=r["flop_per_s"], bytes_per_s=r["bytes_per_s"],
            time_s=r["time_s"], fraction_of_peak=r["flop_per_s"] / peak,
            fraction_of_bound=r["flop_per_s"] / bound_rate,
            bound="compute" if intensity >= peak / bandwidth else "memory",
        ))
    return out


def best_square(results: Sequence[ShapeResult]) -> ShapeResult:
    """The square shape with the highest measured FLOP/s."""
    squares = [r for r in results if r.kind == "square"]
    if not squares:
        raise ValueError("results must hold at least one square shape")
    return max(squares, key=lambda r: r.flop_per_s)


def measured_knee(results: Sequence[ShapeResult], fraction: float = 0.5) -> int:
    """The smallest square N whose measured FLOP/s reach ``fraction`` of the best square's.

    A practical knee: where the measured curve has climbed to half its plateau (by default). Compare it with
    the roofline's :func:`gpuperf.roofline.min_square_matmul_for_compute_bound`.
    """
    if not (0 < fraction <= 1):
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    best = best_square(results).flop_per_s
    squares = sorted((r for r in results if r.kind == "square"), key=lambda r: r.n)
    return next(r.n for r in squares if r.flop_per_s >= fraction * best)


def copy_bytes_per_s(run_or_rows) -> float:
    """The same-run copy's bytes/s (the decode shapes' reference)."""
    copies = rows_of_kind(run_or_rows, "copy")
    if len(copies) != 1:
        raise ValueError(f"rows must hold exactly one copy row, got {len(copies)}")
    return float(copies[0]["bytes_per_s"])


def report_table_rows(results: Sequence[ShapeResult]) -> list[dict[str, object]]:
    """Rows for :func:`gpuperf.plotting.tables.format_table_html` with :data:`TABLE_COLUMNS`."""
    return [
        {"shape": f"{r.m} x {r.k} x {r.n}", "kind": r.kind, "intensity": r.intensity_flop_per_byte,
         "time_us": r.time_s * 1e6, "tflop_per_s": r.flop_per_s / 1e12, "tb_per_s": r.bytes_per_s / 1e12,
         "of_peak": 100 * r.fraction_of_peak, "of_bound": 100 * r.fraction_of_bound, "bound": r.bound}
        for r in results
    ]


__all__ = [
    "load_or_run",
    "KINDS",
    "ShapeResult",
    "analyze_rows",
    "best_square",
    "copy_bytes_per_s",
    "measured_knee",
    "report_table_rows",
    "rows_of_kind",
]


def load_or_run(live: bool, recorded_name: str = "matmul_roof_h200") -> dict:
    """The ``matmul_roof`` run chapter 06 reads: a quick sweep measured now with cuBLAS on this machine's GPU
    when ``live`` (a GPU with bf16 Tensor Cores), else the run recorded on an H200. torch and the benchmark
    harness are imported only for a live run."""
    from gpuperf import records as recorded

    if not live:
        return recorded.load_run(recorded_name)
    from gpuperf import benchmark
    from gpuperf.benchmark.family import matmul_roof

    rows = benchmark.run_cases("matmul_roof", matmul_roof.cases(quick=True), progress=False)
    return {"provenance": recorded.provenance("live run in book/06-roofline.ipynb"), "results": rows}
