"""`make bench`: check, time and record the course's kernels against same-run references (GPU only).

Usage (from the repository root)::

    python bench/run.py                         # every family; writes book/data/<family>_<device>.json
    python bench/run.py elementwise matmul      # the families named
    python bench/run.py --list                  # the families and what each measures
    python bench/run.py softmax --quick         # a short sweep (written as <family>_<device>_quick.json)
    python bench/run.py matmul --only bf16      # only cases whose label contains "bf16" (and the references)
    python bench/run.py elementwise --option k_max=256 --name elementwise_long_h200   # a family option
    make bench BENCH_ARGS="elementwise --quick"

Every case is checked against a reference before it is timed; the harness (``gpuperf.benchmark``) prints each
result as a ratio to its same-run reference, and the cases a family marks are timed twice (the spread).
Progress goes to stderr; the tables go to stdout. bench/README.md says, for every file of book/data, which
command (a family here, or a script of bench/) makes it and which chapters read it.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import shlex
import sys
from pathlib import Path

if importlib.util.find_spec("gpuperf") is None:  # a machine without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("families", nargs="*", help="families to run (default: all; see --list)")
    parser.add_argument("--list", action="store_true", help="list the families and exit")
    parser.add_argument("--quick", action="store_true", help="a short sweep, saved with the suffix _quick")
    parser.add_argument("--only", default=None, help="only the cases whose label contains this text")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="keyword argument for the families' cases() (a Python literal; repeatable)")
    parser.add_argument("--name", default=None,
                        help="file stem of the recorded run (one family only; default <family>_<device>)")
    parser.add_argument("--out-dir", type=Path, default=None, help="folder for the JSON (default book/data)")
    parser.add_argument("--warmup-ms", type=float, default=25.0, help="do_bench warm-up per case (ms)")
    parser.add_argument("--rep-ms", type=float, default=100.0, help="do_bench repetition time per case (ms)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def parse_options(pairs: list[str]) -> dict[str, object]:
    """``["k_max=256", "dtypes=('fp16',)"]`` -> ``{"k_max": 256, "dtypes": ("fp16",)}`` (literals only)."""
    options: dict[str, object] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.isidentifier():
            raise ValueError(f"--option must be KEY=VALUE with a Python name as KEY, got {pair!r}")
        try:
            options[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            options[key] = text  # a bare word is a string
    return options


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    from gpuperf import benchmark

    if args.list:
        for name in benchmark.families():
            print(f"{name:<16} {getattr(benchmark.load_family(name), 'DESCRIPTION', '')}")
        return 0
    try:
        names = args.families or benchmark.families()
        modules = {name: benchmark.load_family(name) for name in names}
        options = parse_options(args.option)
        if args.name is not None and len(names) != 1:
            raise ValueError(f"--name needs exactly one family, got {names}")
    except ValueError as exc:
        print(f"bench/run.py: {exc}", file=sys.stderr)
        return 2
    try:
        import torch
        import triton  # noqa: F401
    except ImportError as exc:
        print(f"make bench needs torch and triton with a CUDA GPU ({exc}); install them or name an interpreter "
              f"that has them (make bench PYTHON=/path/to/python).", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print(f"make bench needs a CUDA GPU, and torch {torch.__version__} sees none; without one the book "
              f"reads the recorded runs in book/data/.", file=sys.stderr)
        return 2
    from gpuperf.kernels import interpreter_enabled

    if interpreter_enabled():
        print("make bench times compiled kernels, but TRITON_INTERPRET is on in this environment; unset it "
              "(env -u TRITON_INTERPRET make bench).", file=sys.stderr)
        return 2
    from gpuperf.records import provenance, save_run

    prov = provenance(shlex.join(["python", "bench/run.py", *argv]))
    slug = benchmark.device_slug(prov["device"])
    print(f"{prov['device']}, driver {prov['driver']}, CUDA {prov['cuda']}, torch {prov['torch']}, "
          f"triton {prov['triton']}, {prov['date']}")
    failed = []
    for name, module in modules.items():
        print(f"\n== {name}: {getattr(module, 'DESCRIPTION', '')}", flush=True)
        try:
            rows = benchmark.run_cases(name, module.cases(quick=args.quick, **options),
                                       progress=not args.no_progress, warmup_ms=args.warmup_ms,
                                       rep_ms=args.rep_ms, only=args.only)
        except Exception as exc:  # one family's failure must not lose the others' results
            print(f"{name}: FAILED: {type(exc).__name__}: {exc}", flush=True)
            failed.append(name)
            continue
        benchmark.report(rows)
        partial = args.quick or args.only is not None
        # A family may name its record (RECORD_STEM) so that a full run rewrites the file the book reads
        # rather than an older record of another format (attention_h200 holds the first, 2026-11-30 run).
        record = getattr(module, "RECORD_STEM", name)
        stem = args.name or f"{record}_{slug}{'_quick' if partial else ''}"
        path = save_run(stem, rows, prov, data_dir=args.out_dir)
        print(f"wrote {path}", flush=True)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
