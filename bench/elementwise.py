"""`make bench`: time the elementwise kernels against a device-to-device copy and record the run (GPU only).

Usage (from the repository root)::

    python bench/elementwise.py                     # writes book/data/elementwise_<device>.json
    python bench/elementwise.py --out-dir /tmp/x    # elsewhere
    python bench/elementwise.py --n-elements 1048576 --dtypes fp16 --k 1 4
    make bench PYTHON=python3 BENCH_ARGS="--n-elements 1048576"   # through make, without the venv

Every case is checked against a reference before it is timed (see
``gpuperf.kernels.elementwise_bench.run_elementwise_benchmark``). After the full sweep the copy and the
Triton add are timed a second time, so the table can be read against the run-to-run spread. Progress goes
to stderr; the table and the spread go to stdout.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
import sys
from pathlib import Path

if importlib.util.find_spec("gpuperf") is None:  # a machine without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-elements", type=int, default=2**28, help="elements per tensor (default 2**28)")
    parser.add_argument("--dtypes", nargs="+", default=["fp32", "fp16", "bf16"], choices=["fp32", "fp16", "bf16"],
                        help="storage dtypes (default: all three)")
    parser.add_argument("--k", nargs="+", type=int, default=[1, 2, 4, 8, 16], help="chain lengths k")
    parser.add_argument("--out-dir", type=Path, default=None, help="folder for the JSON (default book/data)")
    parser.add_argument("--name", default=None, help="file stem (default elementwise_<device>, e.g. elementwise_h200)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def device_slug(device_name: str) -> str:
    """'NVIDIA H200' -> 'h200'; 'NVIDIA A100-SXM4-80GB' -> 'a100-sxm4-80gb'."""
    words = device_name.replace("NVIDIA", "").split()
    return re.sub(r"[^a-z0-9-]+", "-", "-".join(words).lower()).strip("-") or "gpu"


def main(argv: list[str]) -> int:
    args = parse_args(argv)
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

    from gpuperf.kernels.elementwise_bench import report_elementwise, run_elementwise_benchmark, with_ratio_to_copy
    from gpuperf.recorded import provenance, save_run

    command = shlex.join(["python", "bench/elementwise.py", *argv])
    prov = provenance(command)
    rows = run_elementwise_benchmark(n_elements=args.n_elements, dtypes=tuple(args.dtypes),
                                     k_values=tuple(args.k), progress=not args.no_progress)
    name = args.name or f"elementwise_{device_slug(prov['device'])}"
    path = save_run(name, rows, prov, data_dir=args.out_dir)

    again = run_elementwise_benchmark(n_elements=args.n_elements, dtypes=tuple(args.dtypes), k_values=(),
                                      progress=False, kernels=("copy", "triton_add"))
    print(f"\n{prov['device']}, driver {prov['driver']}, CUDA {prov['cuda']}, torch {prov['torch']}, "
          f"triton {prov['triton']}, {prov['date']}")
    report_elementwise(rows)
    print("\nrepeat (run-to-run spread):")
    first = {(r["kernel"], r["dtype"]): r for r in with_ratio_to_copy(rows)}
    for r in again:
        f = first[(r["kernel"], r["dtype"])]
        print(f"  {r['kernel']:<11} {r['dtype']}: {f['bytes_per_s'] / 1e12:.3f} then {r['bytes_per_s'] / 1e12:.3f} TB/s "
              f"({100 * (r['time_s'] / f['time_s'] - 1):+.2f} % in time)")
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
