"""The harness's compile-only side: records made by compiling kernels for a GPU, on any machine.

Some of the course's evidence is the code a compiler emits, not a time: the SASS of the CUDA C kernels of
``bench/part1_kernels.cu`` (``bench/stream_read_sass.py``, ``bench/part1_sass.py``) and the PTX Triton
emits for a reduction (``bench/reduction_ptx.py``). Those scripts share

* :func:`compile_provenance`: the provenance of such a record (:func:`gpuperf.records.provenance`, with the
  device and driver saying that nothing ran on a GPU);
* :func:`cuda_tool`: ``nvcc`` or ``cuobjdump`` from the PATH, else the copy Triton ships;
* :func:`compile_cubin` and :func:`sass_opcodes`: ``nvcc -cubin`` for an architecture with ``-D`` defines,
  and the opcode histogram of each function of ``cuobjdump -sass``.

No GPU needed; torch is imported only by :func:`compile_provenance` (through the provenance).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Mapping

#: One SASS instruction line of ``cuobjdump -sass``: ``/*0040*/  @!P0 BRA 0x280 ;`` -> ``BRA``.
_SASS_LINE = re.compile(r"\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)")
_FUNCTION = re.compile(r"Function : (\S+)")


def compile_provenance(command: str, target: str = "sm_90 (H100/H200)", **extra: str) -> dict[str, str]:
    """Provenance of a record made by compiling for ``target`` on this machine: the harness's provenance
    (:func:`gpuperf.records.provenance`: torch, Triton, Python, date, command) with ``device`` and
    ``driver`` saying that no GPU ran it, plus ``extra`` entries (e.g. ``nvcc="..."``)."""
    from gpuperf.records import provenance

    if not isinstance(target, str) or not target:
        raise ValueError(f"target must be a non-empty string, got {target!r}")
    prov = provenance(command)
    prov.update(device=f"none: compiled for {target} on a CPU", driver="none")
    if prov.get("cuda") in (None, "None"):  # a CPU build of torch
        prov["cuda"] = "none"
    prov.update({k: str(v) for k, v in extra.items()})
    return prov


def cuda_tool(name: str) -> str:
    """Path of the CUDA tool ``name`` (``nvcc``, ``cuobjdump``, ``ptxas``): the PATH's, else Triton's copy
    (``triton/backends/nvidia/bin``). ``FileNotFoundError`` if neither has it."""
    if name not in ("nvcc", "cuobjdump", "ptxas", "nvdisasm"):
        raise ValueError(f"name must be one of nvcc, cuobjdump, ptxas, nvdisasm, got {name!r}")
    found = shutil.which(name)
    if found:
        return found
    try:
        import triton
    except ImportError:
        triton = None
    if triton is not None:
        path = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name
        if path.is_file():
            return str(path)
    raise FileNotFoundError(f"{name} is neither on the PATH nor shipped with Triton")


def nvcc_version() -> str:
    """The last line of ``nvcc --version`` (e.g. ``Build cuda_13.0.r13.0/compiler.36424714_0``)."""
    out = subprocess.run([cuda_tool("nvcc"), "--version"], capture_output=True, text=True, check=True).stdout
    return out.strip().splitlines()[-1]


def compile_cubin(source: Path | str, cubin: Path | str, arch: str = "sm_90",
                  defines: Mapping[str, object] | None = None) -> Path:
    """``nvcc -arch=ARCH -cubin -DKEY=VALUE ... -o CUBIN SOURCE``; returns the cubin's path."""
    if not re.fullmatch(r"sm_\d+a?", arch):
        raise ValueError(f"arch must look like 'sm_90', got {arch!r}")
    flags = [f"-D{k}={v}" for k, v in (defines or {}).items()]
    subprocess.run([cuda_tool("nvcc"), f"-arch={arch}", "-cubin", *flags, "-o", str(cubin), str(source)],
                   check=True)
    return Path(cubin)


def sass(cubin: Path | str, function: str | None = None) -> str:
    """``cuobjdump -sass [-fun FUNCTION] CUBIN``'s text."""
    args = [cuda_tool("cuobjdump"), "-sass"] + (["-fun", function] if function else []) + [str(cubin)]
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def sass_opcodes(text: str) -> dict[str, Counter]:
    """``{function: Counter(opcode -> instructions)}`` of ``cuobjdump -sass`` text: each instruction counted
    once under its opcode without modifiers or predicate (``@!P0 ISETP.GE.AND`` -> ``ISETP``)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be cuobjdump's output as a string, got {type(text).__name__}")
    functions: dict[str, Counter] = {}
    current = None
    for line in text.splitlines():
        found = _FUNCTION.search(line)
        if found:
            current = functions.setdefault(found.group(1), Counter())
            continue
        found = _SASS_LINE.match(line)
        if found and current is not None:
            current[found.group(1)] += 1
    return functions


def registers_per_thread(cubin: Path | str, function: str) -> int:
    """Registers per thread of ``function`` (``cuobjdump -res-usage``)."""
    res = subprocess.run([cuda_tool("cuobjdump"), "-res-usage", str(cubin)], check=True, capture_output=True,
                         text=True).stdout
    found = re.search(rf"Function {re.escape(function)}:\s*REG:(\d+)", res)
    if found is None:
        raise ValueError(f"function {function!r} is not in {cubin}'s resource usage")
    return int(found.group(1))


__all__ = ["compile_cubin", "compile_provenance", "cuda_tool", "nvcc_version", "registers_per_thread", "sass",
           "sass_opcodes"]
