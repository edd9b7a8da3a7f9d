"""Reading an elementwise benchmark against the roofline: which rows to compare, where they sit, what they show.

The benchmark (:func:`gpuperf.benchmark.family.elementwise.run_elementwise_benchmark`, recorded by
``make bench`` in ``book/data/elementwise_<device>.json``) times a device-to-device copy, a vector add in
torch and in Triton, and a chain of ``k`` elementwise operations run unfused (``k`` torch operations) and
fused (one Triton kernel). Each result is one row, a dict with the keys :data:`ROW_KEYS`:

``kernel``       "copy", "torch_add", "triton_add", "torch_chain_unfused" or "triton_chain_fused"
``dtype``        "fp32", "fp16" or "bf16"
``n_elements``   elements per tensor
``k_ops``        operations in the chain (1 for copy and add)
``flop``         1 per element per operation: 0 for copy, n for add, k n for a chain
``bytes_moved``  HBM bytes the kernel must move: copy 2 n b, add 3 n b, fused chain 2 n b, unfused 2 k n b
``time_s``       median time of one call, in seconds
``bytes_per_s``  ``bytes_moved / time_s``
``flop_per_s``   ``flop / time_s``

This module only reads rows, so it runs anywhere: it imports no torch (the schema, :data:`ROW_KEYS` and
:data:`KERNELS`, comes from the benchmark family, which imports torch and the kernels only when its cases
run). The copy measured in the same run is the reference for "as fast as memory allows": every other
kernel is compared with it.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from gpuperf.benchmark.family.elementwise import KERNELS, ROW_KEYS  # the rows' schema, from their producer
from gpuperf.hardware import Accelerator
from gpuperf.roofline import arithmetic_intensity, as_accelerator

#: The kernels that stream a tensor while doing arithmetic on it (all of :data:`KERNELS` but the copy).
STREAMING_KERNELS = KERNELS[1:]

Row = dict[str, Any]


@dataclass(frozen=True)
class ElementwiseSummary:
    """What one dtype's rows of an elementwise benchmark show (see :func:`summarize`).

    Attributes
    ----------
    dtype, n_elements: the case the rows describe.
    copy_bytes_per_s: bandwidth of the copy in the same run, bytes read + written per second.
    min_ratio_to_copy, max_ratio_to_copy: the slowest and fastest streaming kernel's bytes/s over the copy's.
    k_max: the longest chain measured (operations fused into one kernel).
    unfused_time_s, fused_time_s: the chain of ``k_max`` operations, unfused and fused, in seconds.
    fusion_speedup: ``unfused_time_s / fused_time_s``.
    copy_fraction_of_datasheet: ``copy_bytes_per_s`` over the datasheet HBM bandwidth it was given.
    """

    dtype: str
    n_elements: int
    copy_bytes_per_s: float
    min_ratio_to_copy: float
    max_ratio_to_copy: float
    k_max: int
    unfused_time_s: float
    fused_time_s: float
    fusion_speedup: float
    copy_fraction_of_datasheet: float


# --------------------------------------------------------------------------------------------------
# Checks (ValueError naming the argument and the value it got)
# --------------------------------------------------------------------------------------------------


def _check_row(row: object, name: str = "rows") -> Row:
    if not isinstance(row, Mapping):
        raise ValueError(f"{name} must hold result rows (dicts with keys {ROW_KEYS}), got {row!r}")
    missing = [key for key in ROW_KEYS if key not in row]
    if missing:
        raise ValueError(f"{name} holds a row without the keys {missing}: {dict(row)!r}")
    if row["kernel"] not in KERNELS:
        raise ValueError(f"{name} holds a row of an unknown kernel {row['kernel']!r} (known: {KERNELS})")
    time_s = row["time_s"]
    if not isinstance(time_s, numbers.Real) or isinstance(time_s, bool) or not (math.isfinite(time_s) and time_s > 0):
        raise ValueError(f"{name} holds a row whose time_s is not a positive number of seconds: {dict(row)!r}")
    return dict(row)


def _check_rows(rows: object) -> list[Row]:
    """Rows of one case: a non-empty sequence of result rows, all of one dtype and one n_elements."""
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Sequence):
        raise ValueError(f"rows must be a list of result rows (dicts), got {rows!r}")
    checked = [_check_row(row) for row in rows]
    if not checked:
        raise ValueError("rows must hold at least one result row, got []")
    cases = sorted({(r["dtype"], r["n_elements"]) for r in checked})
    if len(cases) > 1:
        raise ValueError(
            f"rows must all share one dtype and n_elements (select them with rows_for_dtype), got the cases {cases}"
        )
    return checked


def _check_k(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


# --------------------------------------------------------------------------------------------------
# Selecting rows
# --------------------------------------------------------------------------------------------------


def rows_for_dtype(run: Mapping[str, Any] | Sequence[Row], dtype: str) -> list[Row]:
    """The rows of ``run`` in ``dtype`` at the largest ``n_elements`` measured in that dtype.

    ``run`` is a recorded run (a dict whose ``"results"`` are rows, as
    :func:`gpuperf.records.load_run` returns it) or a plain list of rows. The largest size is the one that
    streams from HBM rather than from cache, so it is the one to read against the roofline. Returns copies,
    in the run's order. Raises ``ValueError`` naming ``dtype`` if the run has no row in it.
    """
    if isinstance(run, Mapping):
        if "results" not in run:
            raise ValueError(f"run must be a recorded run with 'results' or a list of rows, got keys {sorted(run)}")
        results = run["results"]
    else:
        results = run
    if isinstance(results, (str, bytes)) or not isinstance(results, Sequence):
        raise ValueError(f"run must be a recorded run with 'results' or a list of rows, got {run!r}")
    rows = [_check_row(row, "run") for row in results]
    in_dtype = [r for r in rows if r["dtype"] == dtype]
    if not in_dtype:
        recorded = sorted({r["dtype"] for r in rows})
        raise ValueError(f"dtype {dtype!r} has no rows in run; its dtypes are {recorded}")
    largest = max(r["n_elements"] for r in in_dtype)
    return [r for r in in_dtype if r["n_elements"] == largest]


def find_row(rows: Sequence[Row], kernel: str, k_ops: int = 1) -> Row:
    """The one row of ``kernel`` with ``k_ops`` operations (1 for copy and add) among one case's ``rows``.

    Raises ``ValueError`` naming ``kernel`` and ``k_ops`` when there is no such row (listing those there
    are), and naming ``rows`` when there are several.
    """
    checked = _check_rows(rows)
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    k_ops = _check_k("k_ops", k_ops)
    found = [r for r in checked if r["kernel"] == kernel and r["k_ops"] == k_ops]
    if not found:
        present = sorted((r["kernel"], r["k_ops"]) for r in checked)
        raise ValueError(f"kernel {kernel!r} with k_ops {k_ops} is not in rows; (kernel, k_ops) there: {present}")
    if len(found) > 1:
        raise ValueError(f"rows holds {len(found)} rows for kernel {kernel!r} with k_ops {k_ops}; expected one")
    return found[0]


def chain_k_values(rows: Sequence[Row], kernel: str = "triton_chain_fused") -> tuple[int, ...]:
    """The chain lengths ``k`` measured for ``kernel`` (a chain kernel), in increasing order."""
    checked = _check_rows(rows)
    if kernel not in ("torch_chain_unfused", "triton_chain_fused"):
        raise ValueError(f"kernel must be 'torch_chain_unfused' or 'triton_chain_fused', got {kernel!r}")
    ks = tuple(sorted({r["k_ops"] for r in checked if r["kernel"] == kernel}))
    if not ks:
        raise ValueError(f"kernel {kernel!r} has no rows in rows")
    return ks


# --------------------------------------------------------------------------------------------------
# Reading them
# --------------------------------------------------------------------------------------------------


def ratios_to_copy(rows: Sequence[Row]) -> dict[tuple[str, int], float]:
    """Each streaming kernel's bytes/s over the copy's in the same rows, keyed by ``(kernel, k_ops)``.

    A ratio of 1 means the kernel moves its bytes exactly as fast as a plain copy; elementwise kernels,
    being memory-bound, should all sit near 1.
    """
    checked = _check_rows(rows)
    copy_bytes_per_s = find_row(checked, "copy")["bytes_per_s"]
    return {
        (r["kernel"], r["k_ops"]): r["bytes_per_s"] / copy_bytes_per_s
        for r in checked
        if r["kernel"] in STREAMING_KERNELS
    }


def roofline_points(rows: Sequence[Row]) -> list[tuple[str, float, float]]:
    """``(label, intensity_flop_per_byte, flop_per_s)`` points of one case's rows, for a roofline figure.

    Intensity is the row's FLOP over its bytes (:func:`gpuperf.roofline.arithmetic_intensity`); the rate
    is its measured FLOP/s. Points that would coincide are drawn once: the torch and Triton adds have the
    same intensity (``1 / (3 b)``), and so does the unfused chain at every ``k`` (``k`` FLOP for ``k``
    round trips, ``1 / (2 b)``), which also equals the fused chain at ``k = 1``. So the points are: the add
    (torch's row), the unfused chain at its longest ``k``, and the fused chain at each ``k > 1``
    (intensity ``k / (2 b)``). Raises ``ValueError`` naming the kernel when a needed row is missing.
    """
    checked = _check_rows(rows)

    def point(label: str, row: Row) -> tuple[str, float, float]:
        return (label, arithmetic_intensity(row["flop"], row["bytes_moved"]), float(row["flop_per_s"]))

    unfused_ks = chain_k_values(checked, "torch_chain_unfused")
    fused_ks = chain_k_values(checked, "triton_chain_fused")
    unfused_label = (f"chain, unfused (k = {unfused_ks[0]} to {unfused_ks[-1]})" if len(unfused_ks) > 1
                     else f"chain, unfused (k = {unfused_ks[0]})")
    points = [
        point("add (torch and Triton)", find_row(checked, "torch_add")),
        point(unfused_label, find_row(checked, "torch_chain_unfused", unfused_ks[-1])),
    ]
    points += [point(f"chain, fused, k = {k}", find_row(checked, "triton_chain_fused", k)) for k in fused_ks if k > 1]
    return points


def summarize(rows: Sequence[Row], hbm_bytes_per_s: float) -> ElementwiseSummary:
    """What one case's rows show, against the datasheet HBM bandwidth ``hbm_bytes_per_s`` (bytes/s).

    The streaming kernels' range of bandwidths relative to the copy, the copy's fraction of the datasheet
    bandwidth, and the speed-up of fusing the longest chain measured (the unfused chain's time over the
    fused one's at the largest ``k`` of the fused kernel; both rows must be there).
    """
    checked = _check_rows(rows)
    if (not isinstance(hbm_bytes_per_s, numbers.Real) or isinstance(hbm_bytes_per_s, bool)
            or not (math.isfinite(hbm_bytes_per_s) and hbm_bytes_per_s > 0)):
        raise ValueError(f"hbm_bytes_per_s must be a finite number > 0, got {hbm_bytes_per_s!r}")
    copy_bytes_per_s = float(find_row(checked, "copy")["bytes_per_s"])
    ratios = ratios_to_copy(checked)
    if not ratios:
        raise ValueError("rows hold only the copy; a summary needs the streaming kernels too")
    k_max = chain_k_values(checked, "triton_chain_fused")[-1]
    fused = find_row(checked, "triton_chain_fused", k_max)
    unfused = find_row(checked, "torch_chain_unfused", k_max)
    return ElementwiseSummary(
        dtype=checked[0]["dtype"],
        n_elements=int(checked[0]["n_elements"]),
        copy_bytes_per_s=copy_bytes_per_s,
        min_ratio_to_copy=min(ratios.values()),
        max_ratio_to_copy=max(ratios.values()),
        k_max=k_max,
        unfused_time_s=float(unfused["time_s"]),
        fused_time_s=float(fused["time_s"]),
        fusion_speedup=unfused["time_s"] / fused["time_s"],
        copy_fraction_of_datasheet=copy_bytes_per_s / hbm_bytes_per_s,
    )


def vector_roof_dtype(accelerator: str | Accelerator, dtype: str) -> str:
    """The dtype whose vector-unit (CUDA core) peak bounds the benchmark's kernels on ``dtype`` data.

    The kernels compute in fp32 whatever they store: the Triton kernels convert after loading
    (:mod:`gpuperf.kernels.elementwise`), and PyTorch's eager elementwise ops compute fp16 and bf16 in fp32
    (``at::opmath_type``, ``aten/src/ATen/OpMathType.h``). So the roof is the fp32 one for fp32, fp16 and bf16
    data (on an H200 half the bf16 vector peak, which needs paired bf16 arithmetic), and fp64 for fp64 data.
    Raises ``ValueError`` naming ``dtype`` if it is not one of those, and the device if it lists no such peak.
    """
    acc = as_accelerator(accelerator)
    compute = {"fp64": "fp64", "fp32": "fp32", "fp16": "fp32", "bf16": "fp32"}
    if not isinstance(dtype, str) or dtype not in compute:
        raise ValueError(f"dtype must be one of {tuple(compute)}, got {dtype!r}")
    if compute[dtype] not in acc.vector_flop_per_s:
        raise ValueError(
            f"accelerator {acc.name!r} lists no vector peak for {compute[dtype]}, the arithmetic of dtype {dtype!r}"
        )
    return compute[dtype]


def roofline_series(rows: Sequence[Row]) -> dict[str, tuple[list[float], list[float]]]:
    """``{name: (intensities_flop_per_byte, flop_per_s)}`` for :func:`gpuperf.plotting.roofline.plot_measured_series`:
    the add (torch's row), the unfused chain (one point: the same intensity at every ``k``, its fastest
    row), and the fused chain at every ``k`` measured, as one series (a line along ``k``)."""
    checked = _check_rows(rows)

    def intensity(row: Row) -> float:
        return arithmetic_intensity(row["flop"], row["bytes_moved"])

    fused_ks = chain_k_values(checked, "triton_chain_fused")
    fused = [find_row(checked, "triton_chain_fused", k) for k in fused_ks]
    unfused = [r for r in checked if r["kernel"] == "torch_chain_unfused"]
    if not unfused:
        raise ValueError("rows hold no torch_chain_unfused row")
    best_unfused = max(unfused, key=lambda r: r["flop_per_s"])
    add = find_row(checked, "torch_add")
    return {
        "add": ([intensity(add)], [float(add["flop_per_s"])]),
        "chain, unfused (every k)": ([intensity(best_unfused)], [float(best_unfused["flop_per_s"])]),
        f"chain, fused, k = {fused_ks[0]} to {fused_ks[-1]}": ([intensity(r) for r in fused],
                                                             [float(r["flop_per_s"]) for r in fused]),
    }


def chain_table_rows(rows: Sequence[Row], vector_peak_flop_per_s: float) -> list[dict[str, float]]:
    """One dict per ``k`` of the chain: ``k``, the fused and unfused times (s), the fused time over the
    same-run copy's, the fused FLOP/s and their fraction of ``vector_peak_flop_per_s`` (for
    :data:`gpuperf.plotting.tables.CHAIN_COLUMNS`)."""
    checked = _check_rows(rows)
    if (not isinstance(vector_peak_flop_per_s, numbers.Real) or isinstance(vector_peak_flop_per_s, bool)
            or not (math.isfinite(vector_peak_flop_per_s) and vector_peak_flop_per_s > 0)):
        raise ValueError(f"vector_peak_flop_per_s must be a finite number > 0, got {vector_peak_flop_per_s!r}")
    copy_time_s = float(find_row(checked, "copy")["time_s"])
    out = []
    for k in chain_k_values(checked, "triton_chain_fused"):
        fused = find_row(checked, "triton_chain_fused", k)
        unfused = find_row(checked, "torch_chain_unfused", k)
        out.append({
            "k": k, "intensity": arithmetic_intensity(fused["flop"], fused["bytes_moved"]),
            "fused_time_s": float(fused["time_s"]), "unfused_time_s": float(unfused["time_s"]),
            "fused_over_copy": fused["time_s"] / copy_time_s, "fused_flop_per_s": float(fused["flop_per_s"]),
            "percent_of_vector_peak": 100 * fused["flop_per_s"] / vector_peak_flop_per_s,
        })
    return out


def accelerator_of_run(run: Mapping[str, Any], fallback: str | Accelerator) -> tuple[Accelerator, bool]:
    """The hardware-table entry of the device a recorded or live run names in its provenance, and True; or
    ``fallback`` and False when the table does not know that device (a live run on another GPU)."""
    from gpuperf.hardware import get_accelerator

    try:
        device = run["provenance"]["device"]
    except (KeyError, TypeError):
        raise ValueError("run must be a dict with provenance['device']") from None
    try:
        return get_accelerator(device), True
    except ValueError:
        return as_accelerator(fallback), False


def report_rows(rows: Sequence[Row]) -> None:
    """Print one case's rows as a table: time, TB/s, fraction of the copy's bandwidth and GFLOP/s."""
    checked = _check_rows(rows)
    copy_bytes_per_s = find_row(checked, "copy")["bytes_per_s"]
    first = checked[0]
    print(f"n = {first['n_elements']} {first['dtype']} elements; "
          f"copy: {copy_bytes_per_s / 1e12:.2f} TB/s (bytes read + written)")
    print(f"{'kernel':>20s} {'k':>3s} {'time':>10s} {'TB/s':>6s} {'of copy':>8s} {'GFLOP/s':>8s}")
    for r in sorted(checked, key=lambda r: (r["kernel"], r["k_ops"])):
        print(f"{r['kernel']:>20s} {r['k_ops']:3d} {r['time_s'] * 1e6:7.1f} µs {r['bytes_per_s'] / 1e12:6.2f} "
              f"{r['bytes_per_s'] / copy_bytes_per_s:8.1%} {r['flop_per_s'] / 1e9:8.0f}")


__all__ = [
    "load_or_run",
    "accelerator_of_run",
    "chain_table_rows",
    "roofline_series",
    "ElementwiseSummary",
    "KERNELS",
    "ROW_KEYS",
    "STREAMING_KERNELS",
    "chain_k_values",
    "find_row",
    "ratios_to_copy",
    "report_rows",
    "roofline_points",
    "rows_for_dtype",
    "summarize",
    "vector_roof_dtype",
]


def load_or_run(live: bool, n_elements: int = 2**26, recorded_name: str = "elementwise_long_h200"):
    """The elementwise run chapter 06 reads, and its data type: measured now on this machine's GPU when
    ``live`` (bf16 data, fp16 before Ampere, k = 1 ... 256, ``n_elements`` per tensor), else the run
    recorded on an H200 (``book/data/<recorded_name>.json``). Returns ``(run, dtype)``. torch and the
    benchmark are imported only for a live run."""
    from gpuperf import records as recorded

    if not live:
        return recorded.load_run(recorded_name), "bf16"
    import torch

    from gpuperf.benchmark.family.elementwise import run_elementwise_benchmark

    dtype = "bf16" if torch.cuda.get_device_capability() >= (8, 0) else "fp16"
    results = run_elementwise_benchmark(n_elements=n_elements, dtypes=(dtype,),
                                        k_values=tuple(2**j for j in range(9)), progress=False)
    return {"provenance": recorded.provenance("live run in book/06-roofline.ipynb"),
            "results": results}, dtype
