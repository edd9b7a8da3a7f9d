"""Chapter 08's matmul profile, before and after (issue 15): ncu reports -> book/data/matmul_profile_h200.json.

Each report comes from ``bench/profile_kernels.py`` (one launch of the course's matmul and one of cuBLAS in
the harness's profiler window, after warm-up), run under ncu by its ``--ncu`` option::

    python bench/profile_kernels.py matmul_bf16_4096 --ncu RAW/after_4096.csv
    python bench/profile_kernels.py matmul_bf16_8192 --ncu RAW/after_8192.csv
    python bench/profile_kernels.py matmul_bf16_4096 --ncu RAW/stalls_4096.csv --stalls
    python bench/matmul_profile.py \\
        before:bf16:4096=bench/profiles/2026-12-01-baseline/ncu_matmul_bf16_4096.csv \\
        after:bf16:4096=RAW/after_4096.csv after:bf16:8192=RAW/after_8192.csv \\
        stalls:bf16:4096=RAW/stalls_4096.csv [--name matmul_profile_h200]

Each argument is ``STAGE:DTYPE:N=PATH``. Every launch in a report becomes one row: the stage, dtype and
size, ``kernel`` ("triton" for the course's kernel, "cublas" otherwise) and the figures of
:func:`gpuperf.benchmark.profile.kernel_summary`. Run it on the machine that profiled (its provenance is
recorded).
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


def rows_from_reports(reports: dict[tuple[str, str, int], str]) -> list[dict]:
    """{(stage, dtype, n): report text} -> rows (one per launch), stages in the order given."""
    rows = []
    for (stage, dtype, n), text in reports.items():
        launches = profile.parse_ncu_csv(text)
        if not launches:
            raise ValueError(f"reports: the {stage} {dtype} {n} report holds no launch")
        for launch in launches:
            summary = profile.kernel_summary(launch)
            kernel = "triton" if summary["kernel_name"].startswith("_matmul") else "cublas"
            rows.append({"stage": stage, "dtype": dtype, "n": n, "kernel": kernel, **summary})
    return rows


def parse_spec(spec: str) -> tuple[tuple[str, str, int], Path]:
    """``"after:bf16:4096=path.csv"`` -> ``(("after", "bf16", 4096), Path("path.csv"))``."""
    key, sep, path = spec.partition("=")
    parts = key.split(":")
    if not sep or len(parts) != 3 or not parts[2].isdigit():
        raise ValueError(f"each report must be STAGE:DTYPE:N=PATH, got {spec!r}")
    return (parts[0], parts[1], int(parts[2])), Path(path)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", help="STAGE:DTYPE:N=PATH of each ncu CSV report")
    parser.add_argument("--name", default="matmul_profile_h200", help="stem of the recorded run")
    parser.add_argument("--out-dir", type=Path, default=None, help="folder for the JSON (default book/data)")
    parser.add_argument("--skip-bad", action="store_true",
                        help="leave out (with a message) a report that is missing or holds no launch")
    args = parser.parse_args(argv)
    from gpuperf.records import provenance, save_run

    reports = {}
    for spec in args.reports:
        key, path = parse_spec(spec)
        try:
            text = path.read_text()
            rows_from_reports({key: text})  # parses, or raises
        except (OSError, ValueError) as exc:
            if not args.skip_bad:
                raise
            print(f"left out {spec}: {exc}")
            continue
        reports[key] = text
    rows = rows_from_reports(reports)
    for r in rows:
        print(f"{r['stage']:>6} {r['dtype']} {r['n']} {r['kernel']:>6}: {r['duration_ns']} ns, "
              f"tensor pipe {r['tensor_pipe_active_pct']} %, {len(r['stalls'])} stall reasons, "
              f"{r['kernel_name'][:60]}")
    path = save_run(args.name, rows, provenance(shlex.join(["python", "bench/matmul_profile.py", *argv])),
                    data_dir=args.out_dir)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
