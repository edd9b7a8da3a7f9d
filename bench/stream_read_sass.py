"""Chapter 02's check of the bytes-in-flight kernel's instruction order, on any machine with nvcc.

    python bench/stream_read_sass.py [--out-dir book/data]

Compiles ``stream_read`` of ``bench/part1_kernels.cu`` for sm_90 with ILP = 1, 2, 4, 8 and 16 (``nvcc
-cubin``), disassembles it (``cuobjdump -sass``; Triton ships a copy) and records, per build, the
registers per thread, the 16-byte loads (``LDG.E.128``) in the loop, and the most loads issued and not yet
used at any point of the loop body: the loads one thread really keeps in flight. Writes
``book/data/stream_read_sass_sm90.json`` with the harness's compile-only provenance; the tools and the
compile step are ``gpuperf.benchmark.compiled``'s (shared with ``bench/part1_sass.py``).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))


def max_pending_loads(sass: str) -> tuple[int, int]:
    """(16-byte loads, the most of them issued and not yet read) over the listing's instructions: a load's
    destination R[n..n+3] is pending until an instruction reads one of those registers."""
    pending: list[set[str]] = []
    loads = most = 0
    for line in sass.splitlines():
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(.*?);", line)
        if not m:
            continue
        text = m.group(1)
        words = text.replace(",", " ").split()
        op = words[1] if words[0].startswith("@") else words[0]
        operands = words[2:] if words[0].startswith("@") else words[1:]
        regs = set(re.findall(r"\bR(\d+)\b", " ".join(operands[1:] if op.startswith("LDG") else operands)))
        pending = [p for p in pending if not (p & regs)]  # a read completes (waits for) those loads
        if op.startswith("LDG.E.128"):
            base = int(re.match(r"R(\d+)", operands[0]).group(1))
            pending.append({str(base + i) for i in range(4)})
            loads += 1
            most = max(most, len(pending))
    return loads, most


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=ROOT / "book" / "data")
    args = parser.parse_args(argv)
    from gpuperf.benchmark.compiled import (compile_cubin, compile_provenance, nvcc_version,
                                            registers_per_thread, sass)
    from gpuperf.records import save_run

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for ilp in (1, 2, 4, 8, 16):
            cubin = compile_cubin(ROOT / "bench" / "part1_kernels.cu", Path(tmp) / f"ilp{ilp}.cubin", "sm_90",
                                  {"ILP": ilp})
            loads, most = max_pending_loads(sass(cubin, "stream_read"))
            rows.append({"kernel": "stream_read", "ILP": ilp,
                         "registers_per_thread": registers_per_thread(cubin, "stream_read"),
                         "ldg128": loads, "max_loads_pending": most})
            print(rows[-1])
    prov = compile_provenance("python bench/stream_read_sass.py", nvcc=nvcc_version())
    save_run("stream_read_sass_sm90", rows, prov, data_dir=args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
