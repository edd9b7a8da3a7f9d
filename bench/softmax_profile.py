"""Chapter 13's softmax profiles (Nsight Compute reports -> recorded runs in book/data).

Two profiles, each read from ``ncu --csv --page details`` reports:

* **Long rows, before and after** (``softmax_profile_h200``): one launch of the course's softmax
  (``method="auto"``) and one device copy of the same 512 x 262144 fp16 matrix, from
  ``bench/profile_kernels.py softmax_long``, once for the online kernel (before) and once for the split
  kernel (after)::

      python bench/softmax_profile.py \\
          before=bench/profiles/2026-12-01-baseline/ncu_softmax_long.csv after=PATH/ncu_after.csv

* **Where the extra passes are served from** (``softmax_passes_profile_h200``): the three-pass and the
  online kernel at 32768 x 4096, 8192 x 16384 and 4096 x 32768 fp16, where chapter 13 argues that the
  re-reads hit the L2 up to 16384 columns and miss it at 32768. On the GPU, in one command::

      python bench/softmax_profile.py --profile-passes RAW    # RAW/ncu_passes.csv, then the record

  which runs ``--run-passes`` (the launches in the harness's profiler window) under the harness's ncu
  command line (``gpuperf.benchmark.profile.ncu_command`` with :data:`PASS_METRICS`) and then
  ``--passes RAW/ncu_passes.csv`` (the collecting step alone).

Every launch becomes one row: ``stage`` (or ``method``), ``dtype``, ``rows``, ``n``, ``kernel`` (the Triton
kernel's name without its leading underscore and ``_kernel``, or "copy") and the figures of
:func:`gpuperf.benchmark.profile.kernel_summary`. Run the collecting step on the machine that took the reports (its
provenance is recorded) or anywhere with ``--provenance-from RUN``, the recorded run of the same GPU job.
"""

from __future__ import annotations

import argparse
import importlib.util
import shlex
import sys
from pathlib import Path

if importlib.util.find_spec("gpuperf") is None:  # a machine without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from gpuperf.benchmark import profile  # noqa: E402

SHAPE = {"dtype": "fp16", "rows": 512, "n": 262144}

#: The shapes (rows, columns) and methods of the passes profile, in launch order. (No copy: a contiguous
#: ``copy_`` is a cudaMemcpy, which Nsight Compute does not profile.)
PASS_SHAPES = ((32768, 4096), (8192, 16384), (4096, 32768))
PASS_METHODS = ("three_pass", "online")
#: The metrics of the passes profile (with the harness's default sections).
PASS_METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum")


def _kernel_label(name: str) -> str:
    return name.strip("_").removesuffix("_kernel") if name.startswith("_") else "copy"


def rows_from_reports(reports: dict[str, str]) -> list[dict]:
    """{stage: report text} -> rows (one per launch), stages in the order given."""
    rows = []
    for stage, text in reports.items():
        launches = profile.parse_ncu_csv(text)
        if not launches:
            raise ValueError(f"reports: the {stage} report holds no launch")
        for launch in launches:
            summary = profile.kernel_summary(launch)
            rows.append({"stage": stage, **SHAPE, "kernel": _kernel_label(summary["kernel_name"]),
                         **summary})
    return rows


def rows_from_passes_report(text: str) -> list[dict]:
    """The report of ``--run-passes`` -> rows, each launch labelled with its shape and method (launch
    order: for each of :data:`PASS_SHAPES`, the :data:`PASS_METHODS`)."""
    launches = profile.parse_ncu_csv(text)
    order = [(shape, m) for shape in PASS_SHAPES for m in PASS_METHODS]
    if len(launches) != len(order):
        raise ValueError(f"text: the passes report must hold {len(order)} launches, got {len(launches)}")
    rows = []
    for launch, ((n_rows, n), method) in zip(launches, order):
        summary = profile.kernel_summary(launch)
        kernel = _kernel_label(summary["kernel_name"])
        if kernel != method:
            raise ValueError(f"text: launch {summary['kernel_name']!r} where {method!r} was expected")
        rows.append({"method": method, "dtype": "fp16", "rows": n_rows, "n": n, "kernel": kernel,
                     "input_bytes": n_rows * n * 2, **summary})
    return rows


def _pass_calls():
    """The launches of the passes profile (GPU only), in :func:`rows_from_passes_report`'s order."""
    import torch

    from gpuperf.kernels.softmax import softmax

    calls = []
    for n_rows, n in PASS_SHAPES:
        x = torch.randn(n_rows, n, device="cuda", dtype=torch.float16)
        y = torch.empty_like(x)
        calls += [lambda x=x, y=y, m=m: softmax(x, out=y, method=m) for m in PASS_METHODS]
    return calls


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="*", help="STAGE=PATH of each ncu CSV report (long rows)")
    parser.add_argument("--run-passes", action="store_true",
                        help="run the passes profile's launches inside a profiler window (under ncu)")
    parser.add_argument("--passes", type=Path, default=None, help="ncu CSV report of --run-passes")
    parser.add_argument("--profile-passes", type=Path, default=None, metavar="RAW",
                        help="run --run-passes under ncu (report into RAW), then record it as --passes does")
    parser.add_argument("--name", default=None,
                        help="stem of the recorded run (default softmax_profile_h200 or "
                             "softmax_passes_profile_h200)")
    parser.add_argument("--out-dir", type=Path, default=None, help="folder for the JSON (default book/data)")
    parser.add_argument("--provenance-from", default=None,
                        help="recorded run of the GPU job that took the reports (when run elsewhere)")
    args = parser.parse_args(argv)
    if args.run_passes:
        profile.profile_window(_pass_calls())
        return 0
    if args.profile_passes is not None:
        command = profile.ncu_command([sys.executable, __file__, "--run-passes"], metrics=PASS_METRICS)
        args.passes = profile.run_ncu(command, args.profile_passes / "ncu_passes.csv")
    from gpuperf.records import load_run, provenance, save_run

    if args.passes is not None:
        rows = rows_from_passes_report(args.passes.read_text())
        name = args.name or "softmax_passes_profile_h200"
        for r in rows:
            print(f"{r['rows']:>6} x {r['n']:<6} {r['kernel']:>10}: {r['duration_ns'] / 1e3:8.1f} us, "
                  f"DRAM read {r['dram_read_bytes'] / r['input_bytes']:.2f} x the input")
    else:
        if not args.reports:
            parser.error("give STAGE=PATH reports, --passes PATH or --run-passes")
        reports = {}
        for spec in args.reports:
            stage, sep, path = spec.partition("=")
            if not sep or not stage:
                raise ValueError(f"each report must be STAGE=PATH, got {spec!r}")
            reports[stage] = Path(path).read_text()
        rows = rows_from_reports(reports)
        name = args.name or "softmax_profile_h200"
        for r in rows:
            print(f"{r['stage']:>6} {r['kernel']:>12}: {r['duration_ns'] / 1e3:8.1f} us, DRAM read "
                  f"{r['dram_read_bytes'] / 1e6:.0f} MB, write {r['dram_write_bytes'] / 1e6:.0f} MB, "
                  f"grid {r['grid_size']}, {r['registers_per_thread']} registers")
    command = shlex.join(["python", "bench/softmax_profile.py", *argv])
    if args.provenance_from:
        prov = profile.provenance_of_job(
            load_run(args.provenance_from),
            f"{command} (the ncu reports of the job that recorded {args.provenance_from})")
    else:
        prov = provenance(command)
    path = save_run(name, rows, prov, data_dir=args.out_dir)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
