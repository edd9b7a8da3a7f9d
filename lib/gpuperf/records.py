"""Recorded GPU runs: where they live, how they are read, and how their provenance is stated.

A benchmark run on a GPU (``make bench``) writes one JSON file to ``book/data/``::

    {"name": "...",
     "provenance": {"device": "NVIDIA H200", "driver": "...", "cuda": "...", "torch": "...",
                    "triton": "...", "python": "...", "date": "YYYY-MM-DD", "command": "..."},
     "results": [...]}

Notebooks plot ``results`` when no GPU is present and say where they came from with
:func:`describe_provenance`. This module never imports torch at import time. It sits below both :mod:`gpuperf.benchmark` (which
writes runs) and :mod:`gpuperf.results` (which reads and scores them), and imports neither.

Where runs are looked for: ``book/data`` of the repository this package sits in (an editable install, as
``make`` makes), then a ``data`` folder inside the installed package. A ``pip install`` from git copies
only the package, so a notebook opened on Colab finds recorded runs only if they ship in that folder.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
from pathlib import Path
from typing import Any, Mapping

#: Folder of the recorded runs (``book/data`` in the repository), where :func:`save_run` writes.
DATA_DIR = Path(__file__).resolve().parents[2] / "book" / "data"

#: Folder of recorded runs shipped inside the package (for installs that do not include the repository).
PACKAGE_DATA_DIR = Path(__file__).resolve().parent / "data"

REQUIRED_PROVENANCE = ("device", "driver", "torch", "triton", "date")


def cuda_available() -> bool:
    """True when torch is importable and sees a CUDA GPU (imports torch only when it is installed)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def live_gpu_available(min_capability: tuple[int, int] = (8, 0), min_memory_gb: float = 40.0) -> bool:
    """True when torch sees a CUDA GPU fit for a chapter's live benchmark cells: compute capability at least
    ``min_capability`` (bf16 matrix units, SDPA's flash backend: Ampere or newer) and at least
    ``min_memory_gb`` GB (10^9 bytes) of device memory (the benchmarks size their tensors to fill an H200 and
    compare with naive kernels that store N x N matrices). On smaller or older GPUs (Colab's free T4: sm_75,
    16 GB) the chapters show the recorded H200 runs instead, as they do without a GPU."""
    if not (isinstance(min_capability, tuple) and len(min_capability) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in min_capability)):
        raise ValueError(f"min_capability must be a (major, minor) pair of ints, got {min_capability!r}")
    if isinstance(min_memory_gb, bool) or not isinstance(min_memory_gb, (int, float)) or not min_memory_gb >= 0:
        raise ValueError(f"min_memory_gb must be a number >= 0, got {min_memory_gb!r}")
    if not cuda_available():
        return False
    import torch

    props = torch.cuda.get_device_properties(0)
    return (props.major, props.minor) >= min_capability and props.total_memory >= min_memory_gb * 1e9


def provenance(command: str) -> dict[str, str]:
    """Describe the machine this process runs on, for a recorded run (call it on the GPU machine)."""
    import torch

    info = {
        "device": torch.cuda.get_device_name() if torch.cuda.is_available() else platform.processor() or "cpu",
        "driver": _nvidia_driver_version(),
        "cuda": str(torch.version.cuda),
        "torch": torch.__version__,
        "triton": _triton_version(),
        "python": platform.python_version(),
        "date": _dt.date.today().isoformat(),
        "command": command,
    }
    return info


def _triton_version() -> str:
    try:
        import triton
    except ImportError:
        return "not installed"
    return triton.__version__


def _nvidia_driver_version() -> str:
    import subprocess

    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30, check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip().splitlines()[0] if out.stdout.strip() else "unknown"


def _check_name(name: object) -> str:
    if (not isinstance(name, str) or not name or name.startswith(".")
            or any(sep in name for sep in ("/", "\\", "\0"))):
        raise ValueError(f"name must be a plain file stem (no folders, no leading dot), got {name!r}")
    return name


def save_run(name: str, results: list[dict[str, Any]], prov: dict[str, str], data_dir: Path | None = None) -> Path:
    """Write a recorded run to ``data_dir/name.json`` (default :data:`DATA_DIR`) and return the path."""
    name = _check_name(name)
    if not isinstance(results, list):
        raise ValueError(f"results must be a list of result rows, got {type(results).__name__}")
    if not isinstance(prov, Mapping):
        raise ValueError(f"prov must be a dict of provenance fields, got {prov!r}")
    missing = [k for k in REQUIRED_PROVENANCE if not prov.get(k)]
    if missing:
        raise ValueError(f"prov is missing {missing}")
    folder = Path(data_dir) if data_dir is not None else DATA_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"name": name, "provenance": dict(prov), "results": results}, indent=1) + "\n")
    return path


def load_run(name: str, data_dir: Path | None = None) -> dict[str, Any]:
    """Read the recorded run ``<name>.json`` from ``data_dir``, or else from the first folder that has it of
    :data:`DATA_DIR` and :data:`PACKAGE_DATA_DIR`.

    Raises ``ValueError`` naming ``name`` (and listing the runs and folders there are) if no folder has it,
    and naming the run if it lacks a provenance field of :data:`REQUIRED_PROVENANCE`.
    """
    name = _check_name(name)
    folders = [Path(data_dir)] if data_dir is not None else [DATA_DIR, PACKAGE_DATA_DIR]
    path = next((f / f"{name}.json" for f in folders if (f / f"{name}.json").is_file()), None)
    if path is None:
        known = sorted({p.stem for f in folders if f.is_dir() for p in f.glob("*.json")})
        raise ValueError(
            f"name {name!r} is not a recorded run; recorded runs: {known} "
            f"(looked in {', '.join(str(f) for f in folders)})"
        )
    run = json.loads(path.read_text())
    provenance = run.get("provenance") if isinstance(run, dict) else None
    if not isinstance(provenance, dict):
        raise ValueError(f"recorded run {name!r} ({path}) has no provenance")
    missing = [k for k in REQUIRED_PROVENANCE if not provenance.get(k)]
    if missing:
        raise ValueError(f"recorded run {name!r} lacks provenance fields {missing}")
    return run


def describe_provenance(run: Mapping[str, Any]) -> str:
    """One sentence naming the device, driver, versions and date of a recorded or live run, on two lines
    (printed whole it would pass the 88 characters of a page's code column)."""
    p = run.get("provenance") if isinstance(run, Mapping) else None
    missing = REQUIRED_PROVENANCE if not isinstance(p, Mapping) else [k for k in REQUIRED_PROVENANCE if k not in p]
    if missing:
        raise ValueError(f"run must be a run whose provenance has {list(REQUIRED_PROVENANCE)}; missing {list(missing)}")
    return (
        f"Measured on the {p['device']} (driver {p['driver']}, CUDA {p.get('cuda', '?')}),\n"
        f"torch {p['torch']}, triton {p['triton']}, on {p['date']}."
    )
