"""Chapter 03's SASS opcode counts of the Part I CUDA C kernels, on any machine with nvcc (no GPU).

    python bench/part1_sass.py [--out-dir book/data] [--name part1_sass_h200]

Compiles ``bench/part1_kernels.cu`` for sm_90 with ``-DILP=1`` and ``-DILP=16`` (``nvcc -cubin``; BODY and
LOOP_BODY at the file's defaults, the values ``bench/part1_gpu.py`` runs), disassembles every kernel
(``cuobjdump -sass``; Triton ships a copy) and records, per kernel and build, the instructions and their
opcode histogram (``gpuperf.benchmark.compiled.sass_opcodes``: each instruction once under its opcode
without modifiers or predicate). Chapter 03 reads the FFMA and FMUL counts of the divergence kernels.
Writes ``part1_sass_h200.json`` (the name of the first record, compiled on the H200 machine by the same
nvcc and cuobjdump steps).
"""

from __future__ import annotations

import argparse
import importlib.util
import shlex
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if importlib.util.find_spec("gpuperf") is None:  # a machine without `pip install -e .`
    sys.path.insert(0, str(ROOT / "lib"))

SOURCE = ROOT / "bench" / "part1_kernels.cu"
ILPS = (1, 16)
#: The file's defaults (``#ifndef BODY`` ... in part1_kernels.cu), recorded with every row.
BODY, LOOP_BODY = 512, 64


def rows_for(ilp: int, text: str) -> list[dict]:
    """The rows of one build: one per kernel, in cuobjdump's order."""
    from gpuperf.benchmark.compiled import sass_opcodes

    rows = []
    for kernel, counts in sass_opcodes(text).items():
        rows.append({"kernel": kernel, "ILP": ilp, "BODY": BODY, "LOOP_BODY": LOOP_BODY,
                     "instructions": sum(counts.values()), "opcodes": dict(sorted(counts.items()))})
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=None, help="folder for the JSON (default book/data)")
    parser.add_argument("--name", default="part1_sass_h200", help="stem of the recorded run")
    args = parser.parse_args(argv)
    from gpuperf.benchmark.compiled import compile_cubin, compile_provenance, nvcc_version, sass
    from gpuperf.records import save_run

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for ilp in ILPS:
            cubin = compile_cubin(SOURCE, Path(tmp) / f"ilp{ilp}.cubin", "sm_90", {"ILP": ilp})
            rows += rows_for(ilp, sass(cubin))
    for r in rows:
        print(f"ILP {r['ILP']:>2} {r['kernel']:<14} {r['instructions']:>5} instructions")
    prov = compile_provenance(shlex.join(["python", "bench/part1_sass.py", *argv]), nvcc=nvcc_version(),
                              body_instructions=str(BODY), loop_body_instructions=str(LOOP_BODY))
    print(f"wrote {save_run(args.name, rows, prov, data_dir=args.out_dir)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
