"""Record the per-kernel profile of one Llama-shaped layer (chapter 10, the Transformer ledger).

A standalone profiler run, not a ``gpuperf.benchmark`` case: the harness times callables, while this run
needs every kernel a layer launches, attributed to the ledger operator that launched it. The work is in
``gpuperf.benchmark.layer_profile`` (the chapter runs it live on a GPU); this script records it with
provenance::

    python bench/ledger_profile.py --out-dir book/data      # on a CUDA GPU

It saves after the eager variants and again after the compiled one, and exits non-zero if a variant
differs from float32 by more than 0.05 (max error over max |ref|).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gpuperf.benchmark import layer_profile
from gpuperf.records import cuda_available, provenance, save_run

TOLERANCE = 0.05  # bf16 layer vs float32: a few bf16 roundings of O(1) values


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", default=None, help="folder for the JSON (default book/data)")
    parser.add_argument("--name", default="ledger_profile_h200")
    parser.add_argument("--skip-compile", action="store_true")
    args = parser.parse_args(argv)
    if not cuda_available():
        sys.exit("ledger_profile: no CUDA GPU; nothing to profile")
    out_dir = Path(args.out_dir) if args.out_dir else None
    prov = provenance(" ".join(["python bench/ledger_profile.py", *(argv or sys.argv[1:])]))
    prov.update({"config": json.dumps(layer_profile.CONFIG), "decode": json.dumps(layer_profile.DECODE),
                 "dtype": "bf16", "wall_time_without_ranges": "true"})

    def save(results, checks):
        checks = dict(checks)
        compile_s = checks.pop("compile_time_s", None)
        prov["checks_max_rel_error_vs_fp32"] = json.dumps(checks)
        if compile_s is not None:
            prov["compile_time_s"] = f"{compile_s:.1f}"
        print("wrote", save_run(args.name, results, prov, out_dir), flush=True)
        return checks

    results, checks = layer_profile.run_layer_profile(
        compile_layer=not args.skip_compile, log=lambda line: print(line, flush=True), on_partial=save)
    checks = save(results, checks)
    bad = {k: v for k, v in checks.items() if not v < TOLERANCE}
    if bad:
        sys.exit(f"ledger_profile: variants differ from float32 by more than {TOLERANCE}: {bad}")
    print("all variants within", TOLERANCE, "of float32", flush=True)


if __name__ == "__main__":
    main()
