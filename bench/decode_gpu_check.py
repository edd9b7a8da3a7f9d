"""The decode helper's GPU check (2026-12-04): the family ``decode`` (records written to OUT_DIR), a
per-shape report, a quick launch sweep (bench/decode_sweep.py), then tests/kernels/test_decode.py on the
GPU, each step under its own time limit. About two minutes.

Usage: PYTHONPATH=lib python3 bench/decode_gpu_check.py OUT_DIR [--halves] [--warmup-ms 5] [--rep-ms 20]
       [--no-sweep] [--no-tests]

``--halves`` records the long (8K-128K keys) and short (1K-4K, and the host time) shapes as two runs
(``decode_h200_long``, ``decode_h200_short``), so that a time limit loses at most one of them, and joins
them as ``decode_h200`` when both came back; without it one run, ``decode_<device>`` (``decode_h200`` on
the H200). ``decode_h200`` is the record chapter 16 and the scoreboard's decoding targets read.
"""

from __future__ import annotations

import argparse
import glob
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def step(title: str, cmd: list[str], limit_s: float) -> None:
    print(f"== {title}", flush=True)
    try:
        subprocess.run(cmd, cwd=ROOT, timeout=limit_s, check=False)
    except subprocess.TimeoutExpired:
        print(f"== {title}: stopped after {limit_s:.0f} s", flush=True)
    except OSError as exc:
        print(f"== {title}: {exc}", flush=True)


def combine_halves(out_dir: Path) -> None:
    """Write ``decode_h200.json`` from the two halves when both were recorded (rows of the long run, then
    the short; provenance of the long run, its command naming both)."""
    from gpuperf.records import save_run

    halves = [out_dir / f"decode_h200_{half}.json" for half in ("long", "short")]
    if not all(p.is_file() for p in halves):
        print("halves: not both recorded, no decode_h200.json", flush=True)
        return
    runs = [json.loads(p.read_text()) for p in halves]
    prov = dict(runs[0]["provenance"])
    prov["command"] = " ; ".join(r["provenance"].get("command", "?") for r in runs)
    path = save_run("decode_h200", runs[0]["results"] + runs[1]["results"], prov, data_dir=out_dir)
    print(f"wrote {path} (both halves)", flush=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path, help="folder for the recorded runs (JSON)")
    parser.add_argument("--halves", action="store_true", help="long and short shapes as two records")
    parser.add_argument("--warmup-ms", default="5", help="do_bench warm-up per case (ms)")
    parser.add_argument("--rep-ms", default="20", help="do_bench repetition time per case (ms)")
    parser.add_argument("--no-sweep", action="store_true", help="skip the launch sweep")
    parser.add_argument("--no-tests", action="store_true", help="skip the GPU tests")
    parser.add_argument("--bench-s", type=float, default=60.0, help="time limit of the family run (s)")
    parser.add_argument("--long-s", type=float, default=45.0, help="time limit of the long half (s)")
    parser.add_argument("--short-s", type=float, default=30.0, help="time limit of the short half (s)")
    parser.add_argument("--test-s", type=float, default=30.0, help="time limit of the tests (s)")
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["nvidia-smi", "--query-gpu=name,clocks.sm,clocks.mem,temperature.gpu",
                        "--format=csv,noheader"], check=False, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(f"nvidia-smi: {exc}")
    run = [sys.executable, "bench/run.py", "decode", "--out-dir", str(args.out_dir), "--warmup-ms",
           args.warmup_ms, "--rep-ms", args.rep_ms, "--no-progress"]
    if args.halves:
        step("family decode, 8K-128K keys", run + ["--name", "decode_h200_long", "--option", "host=False",
                                                   "--option", "min_keys=8192"], args.long_s)
        step("family decode, 1K-4K keys and host time", run + ["--name", "decode_h200_short", "--option",
                                                               "max_keys=4096"], args.short_s)
        combine_halves(args.out_dir)
    else:
        step("family decode", run, args.bench_s)
    print("== per shape", flush=True)
    from gpuperf.results.decode import report_shapes

    for path in sorted(glob.glob(str(args.out_dir / "*.json"))):
        print(path)
        try:
            report_shapes(json.loads(Path(path).read_text())["results"])
        except Exception as exc:  # noqa: BLE001 (a report must not stop the sweep and the tests)
            print(f"report failed: {type(exc).__name__}: {exc}")
    if not args.no_sweep:
        step("sweep", [sys.executable, "bench/decode_sweep.py", "--quick"], 25)
    if not args.no_tests:
        step("tests", [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
                       "tests/kernels/test_decode.py"], args.test_s)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
