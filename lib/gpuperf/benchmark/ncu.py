"""Read Nsight Compute's CSV reports (``ncu --csv --page details``) into plain data.

A report holds one row per (kernel launch, section, metric): the launch's ``ID``, ``Kernel Name``,
``Block Size``, ``Grid Size``, ``Section Name``, ``Metric Name``, ``Metric Unit`` and ``Metric Value``
(numbers printed with thousands separators). :func:`parse_ncu_csv` groups them by launch;
:func:`kernel_summary` picks the handful of figures a "profile before / after" table needs, under names
with units. Lines before the CSV header (``==PROF==`` and warning lines) are skipped. No GPU needed.
"""

from __future__ import annotations

import csv
import io
from typing import Any

#: (summary key, metric name as ncu prints it); a metric missing from the report gives None.
SUMMARY_METRICS = (
    ("duration_ns", "gpu__time_duration.sum"),
    ("sm_frequency_hz", "SM Frequency"),
    ("tensor_pipe_active_pct", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
    ("sm_throughput_pct", "Compute (SM) Throughput"),
    ("registers_per_thread", "Registers Per Thread"),
    ("dynamic_shared_bytes", "Dynamic Shared Memory Per Block"),
    ("dram_read_bytes", "dram__bytes_read.sum"),
    ("dram_write_bytes", "dram__bytes_write.sum"),
    ("achieved_occupancy_pct", "Achieved Occupancy"),
    ("warp_cycles_per_issued", "Warp Cycles Per Issued Instruction"),
    ("local_loads", "smsp__sass_inst_executed_op_local_ld.sum"),
    ("local_stores", "smsp__sass_inst_executed_op_local_st.sum"),
)

#: Prefix and suffix of the per-reason stall metrics (``--metrics regex:smsp__average_warps_issue_stalled``):
#: warps stalled for that reason per issued instruction, averaged over the sub-partitions.
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"


def _number(text: str) -> float | str:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return text


def parse_ncu_csv(text: str) -> list[dict[str, Any]]:
    """The launches of an ncu CSV report, in ID order: ``{"id", "kernel_name", "block_size", "grid_size",
    "metrics": {metric name: (unit, value)}}`` (values as floats where they are numbers). Raises
    ``ValueError`` when ``text`` has no CSV header with the columns named above."""
    if not isinstance(text, str):
        raise ValueError(f"text must be the report as a string, got {type(text).__name__}")
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise ValueError('text must hold an ncu CSV report (a header line starting with "ID"); none found')
    reader = csv.DictReader(io.StringIO("\n".join(lines[start:])))
    needed = {"ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value"}
    missing = needed - set(reader.fieldnames or ())
    if missing:
        raise ValueError(f"text's CSV header lacks the columns {sorted(missing)}")
    launches: dict[int, dict[str, Any]] = {}
    for row in reader:
        if not row.get("Metric Name"):
            continue
        launch_id = int(row["ID"])
        launch = launches.setdefault(launch_id, {
            "id": launch_id, "kernel_name": row["Kernel Name"], "block_size": row.get("Block Size"),
            "grid_size": row.get("Grid Size"), "metrics": {}})
        launch["metrics"][row["Metric Name"]] = (row["Metric Unit"], _number(row["Metric Value"]))
    return [launches[i] for i in sorted(launches)]


def kernel_summary(launch: dict[str, Any]) -> dict[str, Any]:
    """The figures of :data:`SUMMARY_METRICS` for one launch of :func:`parse_ncu_csv` (None where the
    report lacks them), its kernel name, block and grid, and ``stalls``: {reason: warps per issued
    instruction} for every per-reason stall metric the report has."""
    metrics = launch["metrics"]
    out: dict[str, Any] = {"kernel_name": launch["kernel_name"], "block_size": launch["block_size"],
                           "grid_size": launch["grid_size"]}
    for key, name in SUMMARY_METRICS:
        value = metrics.get(name, (None, None))[1]
        out[key] = value if isinstance(value, float) else None
    out["stalls"] = {name[len(STALL_PREFIX):-len(STALL_SUFFIX)]: value
                     for name, (_, value) in metrics.items()
                     if name.startswith(STALL_PREFIX) and name.endswith(STALL_SUFFIX) and isinstance(value, float)}
    return out


def profile_window(calls, warmups: int = 2) -> None:
    """Run each call ``warmups`` times (compiles, autotuning, cuDNN plans, allocator), then once each inside
    a CUDA profiler window, so that ``ncu --profile-from-start off`` profiles exactly those launches.
    GPU only; torch is imported here so that reading reports needs no torch."""
    import torch

    if isinstance(warmups, bool) or not isinstance(warmups, int) or warmups < 0:
        raise ValueError(f"warmups must be an int >= 0, got {warmups!r}")
    calls = list(calls)
    for fn in calls:
        for _ in range(warmups):
            fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for fn in calls:
        fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


__all__ = ["STALL_PREFIX", "STALL_SUFFIX", "SUMMARY_METRICS", "kernel_summary", "parse_ncu_csv", "profile_window"]
