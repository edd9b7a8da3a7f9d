"""The harness's profiler side: one profiler window, one Nsight Compute command line, one way to pair a
report's kernels with the launches a script made.

The course's hardware counters come from Nsight Compute (``ncu``) wrapped around a ``bench/`` script.
Every such script does the same three things, which live here once:

* **the window** (:func:`profile_window`): each call runs twice first (compiles, autotuning, cuDNN plans,
  the allocator), then once inside ``cudaProfilerStart`` / ``cudaProfilerStop``, so that
  ``ncu --profile-from-start off`` profiles exactly those launches;
* **the command line** (:func:`ncu_command`, :func:`run_ncu`): ``--clock-control none`` (the clocks the
  timing runs saw, not ncu's locked base clock), CSV of the details page, the sections and metrics of
  :data:`SECTIONS` and :data:`KERNEL_METRICS` unless a script names others; :func:`run_ncu` runs it and
  keeps ncu's log next to the CSV;
* **the pairing** (:func:`pair_launches`): a script that records what each profiled kernel was (shape,
  variant, ...) writes its launch list in launch order; the report's kernels (read by
  :func:`gpuperf.benchmark.ncu.parse_ncu_csv`, in ID order) are paired with it one to one, and a missing, extra or
  differently named kernel raises instead of mislabelling rows.

Reading a report needs no GPU and no torch; only :func:`profile_window` does (torch imported there).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from gpuperf.benchmark.ncu import kernel_summary, parse_ncu_csv, profile_window

#: The sections of a "profile before / after" report (throughputs, occupancy, launch shape, stalls).
SECTIONS = ("SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats")

#: The metrics of a "profile before / after" report (``bench/profile_kernels.py``): local-memory
#: instructions (spills), tensor-pipe activity, DRAM bytes read and written, and the kernel's duration.
KERNEL_METRICS = (
    "smsp__sass_inst_executed_op_local_ld.sum",
    "smsp__sass_inst_executed_op_local_st.sum",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "gpu__time_duration.sum",
)

#: Warps stalled per issued instruction, one metric per stall reason (``gpuperf.benchmark.ncu.kernel_summary``'s
#: ``stalls``).
STALL_METRICS = (r"regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio",)


def ncu_command(program: Sequence[str], *, sections: Sequence[str] = SECTIONS,
                metrics: Sequence[str] = KERNEL_METRICS, window: bool = True, base_units: bool = False,
                kernel_regex: str | None = None, ncu: str = "ncu") -> list[str]:
    """The ncu command line that profiles ``program`` (a list of words, e.g. ``["python",
    "bench/profile_kernels.py", "softmax_long"]``) and prints a CSV of the details page on stdout.

    ``window``: only the launches inside :func:`profile_window` (``--profile-from-start off``); without it
    every launch from the start (select them with ``kernel_regex``). ``base_units``: numbers in base units
    (bytes, ns) rather than ncu's scaled ones. ``sections`` and ``metrics`` may be empty."""
    words = list(program) if not isinstance(program, str) else None
    if not words or not all(isinstance(w, str) and w for w in words):
        raise ValueError(f"program must be a non-empty list of words, got {program!r}")
    for name, value in (("sections", sections), ("metrics", metrics)):
        if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
            raise ValueError(f"{name} must be a sequence of names, got {value!r}")
    command = [ncu, "--clock-control", "none"]
    if window:
        command += ["--profile-from-start", "off"]
    command += ["--csv", "--page", "details"]
    if base_units:
        command += ["--print-units", "base"]
    if kernel_regex is not None:
        command += ["--kernel-name", f"regex:{kernel_regex}"]
    for section in sections:
        command += ["--section", section]
    if metrics:
        command += ["--metrics", ",".join(metrics)]
    return command + words


def run_ncu(command: Sequence[str], csv_path: Path | str, timeout_s: float | None = None) -> Path:
    """Run an ncu command line (:func:`ncu_command`), its CSV report (stdout) into ``csv_path`` and its log
    (stderr) into the same name with ``.err``; ``RuntimeError`` naming the log if ncu fails. Returns
    ``csv_path``."""
    csv_path = Path(csv_path)
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    err_path = csv_path.with_suffix(".err")
    with open(csv_path, "w") as out, open(err_path, "w") as err:
        result = subprocess.run(list(command), stdout=out, stderr=err, timeout=timeout_s, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)} exited with {result.returncode}; see {err_path}")
    return csv_path


def write_launches(path: Path | str, launches: Sequence[Mapping[str, Any]]) -> Path:
    """Save a script's launch list (one dict per profiled kernel, in launch order) as JSON."""
    path = Path(path)
    path.write_text(json.dumps(list(launches), indent=1))
    return path


def read_launches(path: Path | str) -> list[dict[str, Any]]:
    """The launch list :func:`write_launches` saved."""
    return json.loads(Path(path).read_text())


def metric_values(launch: Mapping[str, Any]) -> dict[str, Any]:
    """``{metric name: value}`` of one launch of :func:`gpuperf.benchmark.ncu.parse_ncu_csv` (units dropped)."""
    return {name: value for name, (_, value) in launch["metrics"].items()}


def pair_launches(launches: Sequence[Mapping[str, Any]], profiled: Sequence[Mapping[str, Any]],
                  matches: Callable[[Mapping[str, Any], str], bool]) -> list[tuple[Mapping, Mapping]]:
    """Pair the launches a script made (in launch order) with the kernels of a report (in ID order), one to
    one: ``[(launch, profiled launch), ...]``. ``matches(launch, kernel_name)`` says whether a report's
    kernel can be that launch. Raises ``ValueError`` when the counts differ or a pair does not match, so a
    missing or extra profile never shifts the labels of the rows after it."""
    if len(profiled) != len(launches):
        raise ValueError(f"profiled: ncu profiled {len(profiled)} kernels, the script launched {len(launches)}")
    pairs = list(zip(launches, profiled))
    for i, (launch, prof) in enumerate(pairs):
        if not matches(launch, prof["kernel_name"]):
            raise ValueError(f"profiled: launch {i} ({dict(launch)}) paired with kernel {prof['kernel_name']!r}")
    return pairs


def provenance_of_job(run: Mapping[str, Any], command: str) -> dict[str, str]:
    """The provenance of a recorded ``run`` (a dict as :func:`gpuperf.records.load_run` returns) with its
    ``command`` replaced: for a record collected away from the GPU from reports of the job that recorded
    ``run`` (same machine, versions and date)."""
    if not isinstance(run, Mapping) or not isinstance(run.get("provenance"), Mapping):
        raise ValueError("run must be a recorded run with a provenance mapping")
    if not isinstance(command, str) or not command:
        raise ValueError(f"command must be a non-empty string, got {command!r}")
    return {**run["provenance"], "command": command}


__all__ = [
    "KERNEL_METRICS",
    "SECTIONS",
    "STALL_METRICS",
    "kernel_summary",
    "metric_values",
    "ncu_command",
    "pair_launches",
    "parse_ncu_csv",
    "profile_window",
    "provenance_of_job",
    "read_launches",
    "run_ncu",
    "write_launches",
]
