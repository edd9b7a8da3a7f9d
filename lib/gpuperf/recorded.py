"""Recorded GPU runs: where they live, how they are read, and how their provenance is stated.

A benchmark run on a GPU (``make bench``) writes one JSON file to ``book/data/``::

    {"name": "...",
     "provenance": {"device": "NVIDIA H200", "driver": "...", "cuda": "...", "torch": "...",
                    "triton": "...", "python": "...", "date": "YYYY-MM-DD", "command": "..."},
     "results": [...]}

Notebooks plot ``results`` when no GPU is present and say where they came from with
:func:`describe_provenance`. This module never imports torch at import time.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
from pathlib import Path
from typing import Any

#: Folder of the recorded runs (``book/data`` in the repository).
DATA_DIR = Path(__file__).resolve().parents[2] / "book" / "data"

REQUIRED_PROVENANCE = ("device", "driver", "torch", "triton", "date")


def cuda_available() -> bool:
    """True when torch is importable and sees a CUDA GPU (imports torch only when it is installed)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


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


def save_run(name: str, results: list[dict[str, Any]], prov: dict[str, str], data_dir: Path | None = None) -> Path:
    """Write a recorded run to ``data_dir/name.json`` and return the path."""
    if not name or "/" in name:
        raise ValueError(f"name must be a plain file stem, got {name!r}")
    missing = [k for k in REQUIRED_PROVENANCE if not prov.get(k)]
    if missing:
        raise ValueError(f"prov is missing {missing}")
    folder = Path(data_dir) if data_dir is not None else DATA_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"name": name, "provenance": prov, "results": results}, indent=1) + "\n")
    return path


def load_run(name: str, data_dir: Path | None = None) -> dict[str, Any]:
    """Read ``book/data/<name>.json``; raise ``ValueError`` listing the recorded runs if it is absent."""
    folder = Path(data_dir) if data_dir is not None else DATA_DIR
    path = folder / f"{name}.json"
    if not path.is_file():
        known = sorted(p.stem for p in folder.glob("*.json"))
        raise ValueError(f"name {name!r} is not a recorded run; recorded runs: {known}")
    run = json.loads(path.read_text())
    missing = [k for k in REQUIRED_PROVENANCE if not run.get("provenance", {}).get(k)]
    if missing:
        raise ValueError(f"recorded run {name!r} lacks provenance fields {missing}")
    return run


def describe_provenance(run: dict[str, Any]) -> str:
    """One sentence naming the device, driver, versions and date of a recorded run."""
    p = run["provenance"]
    return (
        f"Measured on the {p['device']} (driver {p['driver']}, CUDA {p.get('cuda', '?')}), "
        f"torch {p['torch']}, triton {p['triton']}, on {p['date']}."
    )
