"""Chapter 02's check of the bytes-in-flight kernel's instruction order, on any machine with nvcc.

    python bench/stream_read_sass.py [--out-dir book/data]

Compiles ``stream_read`` of ``bench/part1_kernels.cu`` for sm_90 with ILP = 1, 2, 4, 8 and 16 (``nvcc
-cubin``), disassembles it (``cuobjdump -sass``; Triton ships a copy) and records, per build, the
registers per thread, the 16-byte loads (``LDG.E.128``) in the loop, and the most loads issued and not yet
used at any point of the loop body: the loads one thread really keeps in flight. Writes
``book/data/stream_read_sass_sm90.json``.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    import triton

    path = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name
    if path.is_file():
        return str(path)
    raise SystemExit(f"{name} not found")


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
    from gpuperf.results.recorded import save_run

    nvcc, cuobjdump = _tool("nvcc"), _tool("cuobjdump")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for ilp in (1, 2, 4, 8, 16):
            cubin = Path(tmp) / f"ilp{ilp}.cubin"
            subprocess.run([nvcc, "-arch=sm_90", "-cubin", f"-DILP={ilp}", "-o", str(cubin),
                            str(ROOT / "bench" / "part1_kernels.cu")], check=True)
            sass = subprocess.run([cuobjdump, "-sass", "-fun", "stream_read", str(cubin)], check=True,
                                  capture_output=True, text=True).stdout
            res = subprocess.run([cuobjdump, "-res-usage", str(cubin)], check=True, capture_output=True,
                                 text=True).stdout
            regs = int(re.search(r"Function stream_read:\s*REG:(\d+)", res).group(1))
            loads, most = max_pending_loads(sass)
            rows.append({"kernel": "stream_read", "ILP": ilp, "registers_per_thread": regs,
                         "ldg128": loads, "max_loads_pending": most})
            print(rows[-1])
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    import triton

    prov = {"device": "none: compiled for sm_90 (H100/H200) on a CPU", "driver": "none",
            "torch": __import__("torch").__version__, "triton": triton.__version__, "nvcc": version,
            "python": platform.python_version(), "date": datetime.date.today().isoformat(),
            "command": "python bench/stream_read_sass.py"}
    save_run("stream_read_sass_sm90", rows, prov, data_dir=args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
