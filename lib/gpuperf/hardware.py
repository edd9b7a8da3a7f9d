"""One table of accelerator figures, frozen, with a source for every number.

Every device number used anywhere in the course (peak FLOP/s per unit and dtype, HBM bandwidth and
capacity, SM count, registers and shared memory per SM, L2, clock) lives here and nowhere else.

Conventions
-----------
* Peak FLOP/s are **dense** (no 2:4 sparsity), counting a fused multiply-add as 2 FLOP.
* ``matrix_flop_per_s`` is the matrix unit (NVIDIA Tensor Cores, TPU MXU); ``vector_flop_per_s`` the
  general-purpose unit (CUDA cores, TPU VPU). Keys are dtype names from :data:`DTYPES`.
* Bytes and bytes/s are SI decimal (1 GB = 1e9 B), as vendors quote them; ``*_bytes`` fields that vendors
  quote in binary units (KiB of shared memory, MiB of L2) are converted exactly and say so in the source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

#: The dtype names used for peak rates, widest first.
DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp6", "fp4", "int8")

#: Which unit a peak rate belongs to.
UNITS = ("matrix", "vector")

KiB = 1024
MiB = 1024 * 1024


def _frozen(mapping: Mapping) -> Mapping:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Accelerator:
    """Published figures of one accelerator (one GPU, or one TPU chip).

    Attributes are in base SI units: FLOP/s, bytes, bytes/s, Hz. ``sources`` maps each attribute name to
    where its figure comes from (document, table, page).
    """

    name: str
    vendor: str
    kind: str  # "gpu" or "tpu"
    matrix_flop_per_s: Mapping[str, float]
    vector_flop_per_s: Mapping[str, float]
    hbm_bytes_per_s: float
    hbm_capacity_bytes: float
    sm_count: int  # streaming multiprocessors (GPU) or TensorCores (TPU)
    registers_per_sm_bytes: float | None  # None where the vendor publishes no figure (TPU)
    shared_memory_per_sm_bytes: float | None  # GPU shared memory (max carve-out) per SM; None for TPU
    shared_memory_bytes_per_clock_per_sm: float | None  # e.g. 32 banks x 4 B = 128 on NVIDIA GPUs
    l2_bytes: float | None  # last-level on-chip cache (TPU: CMEM where it exists)
    boost_clock_hz: float
    sources: Mapping[str, str]
    aliases: tuple[str, ...] = field(default=())
    l2_bytes_per_s: float | None = None  # only where a published measurement exists (see sources)

    def __post_init__(self) -> None:
        object.__setattr__(self, "matrix_flop_per_s", _frozen(self.matrix_flop_per_s))
        object.__setattr__(self, "vector_flop_per_s", _frozen(self.vector_flop_per_s))
        object.__setattr__(self, "sources", _frozen(self.sources))
        for table in (self.matrix_flop_per_s, self.vector_flop_per_s):
            for dtype, rate in table.items():
                if dtype not in DTYPES:
                    raise ValueError(f"{self.name}: unknown dtype {dtype!r}; known: {DTYPES}")
                if not rate > 0:
                    raise ValueError(f"{self.name}: peak for {dtype!r} must be > 0, got {rate!r}")

    def peak_flop_per_s(self, dtype: str, unit: str = "matrix") -> float:
        """Dense peak FLOP/s of ``unit`` ("matrix" or "vector") in ``dtype``.

        Raises ``ValueError`` naming the argument when the unit is unknown or the device has no such rate.
        """
        if unit not in UNITS:
            raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
        table = self.matrix_flop_per_s if unit == "matrix" else self.vector_flop_per_s
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
        if dtype not in table:
            raise ValueError(
                f"dtype {dtype!r} has no {unit}-unit peak on {self.name}; it has {sorted(table)}"
            )
        return table[dtype]

    def ridge_point_flop_per_byte(self, dtype: str, unit: str = "matrix") -> float:
        """Arithmetic intensity (FLOP per HBM byte) at which this device's roofline bends."""
        return self.peak_flop_per_s(dtype, unit) / self.hbm_bytes_per_s
