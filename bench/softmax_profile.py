"""Chapter 13's long-row softmax profile, before and after (issue 15): ncu reports ->
book/data/softmax_profile_h200.json.

Each report comes from ``bench/profile_kernels.py softmax_long`` under ``ncu --csv --page details`` (one
launch of the course's softmax, ``method="auto"``, and one device copy of the same 512 x 262144 fp16
matrix, after warm-up)::

    python bench/softmax_profile.py \\
        before=bench/profiles/2026-12-01-baseline/ncu_softmax_long.csv after=$JOB_OUT/ncu_after.csv

Every launch becomes one row: ``stage``, ``dtype``, ``rows``, ``n``, ``kernel`` (the Triton kernel's name
without its leading underscore, or "copy") and the figures of :func:`gpuperf.ncu.kernel_summary`. Run it
on the machine that took the "after" report (its provenance is recorded; the "before" report came from
the same kind of machine with the same versions, job lead-prof0), or anywhere with
``--provenance-from RUN``: the provenance of a recorded run of the same GPU job.
"""

from __future__ import annotations

import argparse
import importlib.util
import shlex
import sys
from pathlib import Path

if importlib.util.find_spec("gpuperf") is None:  # a machine without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from gpuperf import ncu  # noqa: E402

SHAPE = {"dtype": "fp16", "rows": 512, "n": 262144}


def rows_from_reports(reports: dict[str, str]) -> list[dict]:
    """{stage: report text} -> rows (one per launch), stages in the order given."""
    rows = []
    for stage, text in reports.items():
        launches = ncu.parse_ncu_csv(text)
        if not launches:
            raise ValueError(f"reports: the {stage} report holds no launch")
        for launch in launches:
            summary = ncu.kernel_summary(launch)
            name = summary["kernel_name"]
            kernel = name.strip("_").removesuffix("_kernel") if name.startswith("_") else "copy"
            rows.append({"stage": stage, **SHAPE, "kernel": kernel, **summary})
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", help="STAGE=PATH of each ncu CSV report")
    parser.add_argument("--name", default="softmax_profile_h200", help="stem of the recorded run")
    parser.add_argument("--out-dir", type=Path, default=None, help="folder for the JSON (default book/data)")
    parser.add_argument("--provenance-from", default=None,
                        help="recorded run of the GPU job that took the 'after' report (when run elsewhere)")
    args = parser.parse_args(argv)
    from gpuperf.recorded import load_run, provenance, save_run

    reports = {}
    for spec in args.reports:
        stage, sep, path = spec.partition("=")
        if not sep or not stage:
            raise ValueError(f"each report must be STAGE=PATH, got {spec!r}")
        reports[stage] = Path(path).read_text()
    rows = rows_from_reports(reports)
    for r in rows:
        print(f"{r['stage']:>6} {r['kernel']:>12}: {r['duration_ns'] / 1e3:8.1f} us, DRAM read "
              f"{r['dram_read_bytes'] / 1e6:.0f} MB, write {r['dram_write_bytes'] / 1e6:.0f} MB, "
              f"grid {r['grid_size']}, {r['registers_per_thread']} registers")
    command = shlex.join(["python", "bench/softmax_profile.py", *argv])
    if args.provenance_from:
        prov = {**load_run(args.provenance_from)["provenance"],
                "command": f"{command} (the ncu reports of the job that recorded {args.provenance_from})"}
    else:
        prov = provenance(command)
    path = save_run(args.name, rows, prov, data_dir=args.out_dir)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
