"""One table of accelerator figures, frozen, with a source for every number.

Every device number used anywhere in the course (peak FLOP/s per unit and dtype, HBM bandwidth and
capacity, SM count, registers and shared memory per SM, L2, clock) lives here and nowhere else.

Conventions
-----------
* Peak FLOP/s are **dense** (no 2:4 sparsity), counting a fused multiply-add as 2 FLOP. Vendors often print
  the sparse figure, twice the dense one, with a footnote; where they do, the source says "sparse / 2".
  For int8 the figure is integer operations per second (TOP/s), stored under the same dict.
* ``matrix_flop_per_s`` is the matrix unit (NVIDIA Tensor Cores, TPU MXU); ``vector_flop_per_s`` the
  general-purpose unit (CUDA cores, TPU VPU). Keys are dtype names from :data:`DTYPES`. A dtype that is
  missing has no such unit or no published figure; :meth:`Accelerator.peak_flop_per_s` raises for it.
* Bandwidths are SI decimal (1 TB/s = 1e12 B/s), as vendors quote them. On-chip sizes that vendors and the
  CUDA documentation quote in binary units (KB meaning KiB of shared memory, MB meaning MiB of L2) are
  converted exactly and the source says so.
* ``hbm_capacity_bytes`` is the vendor's capacity figure read as decimal (80 GB -> 80e9 B). Memory vendors
  count capacity in binary units, so the physical memory is larger: an H200 ("141 GB") reports
  143,771 MiB = 150.8e9 B to ``nvidia-smi``. The decimal reading is a lower bound, good to about 7%.
* ``hbm_*`` is the device's off-chip DRAM whatever its technology (``memory_type`` names it: the L4 and T4
  use GDDR6, not HBM).
* Most figures come from the vendor's documents. Where those give none, a figure read from the device
  (``cudaGetDeviceProperties``, CUDA's ``deviceQuery``, ``nvidia-smi``) is used and the source says where
  the reading was made or published. Nothing here is estimated.
* ``None`` means "not published" or "not applicable"; the source says which.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

#: The dtype names used for peak rates, widest first.
DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp6", "fp4", "int8")

#: Which unit a peak rate belongs to.
UNITS = ("matrix", "vector")

KiB = 1024
MiB = 1024 * 1024
GiB = 1024 * 1024 * 1024

#: The fields of :class:`Accelerator` that carry a published figure; each needs an entry in ``sources``.
FIGURE_FIELDS = (
    "matrix_flop_per_s",
    "vector_flop_per_s",
    "hbm_bytes_per_s",
    "hbm_capacity_bytes",
    "sm_count",
    "registers_per_sm_bytes",
    "shared_memory_per_sm_bytes",
    "shared_memory_bytes_per_clock_per_sm",
    "l2_bytes",
    "l2_bytes_per_s",
    "boost_clock_hz",
)


def _frozen(mapping: Mapping) -> Mapping:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Accelerator:
    """Published figures of one accelerator (one GPU, or one TPU chip).

    Attributes are in base SI units: FLOP/s, bytes, bytes/s, Hz. ``sources`` maps each attribute name to
    where its figure comes from (document, table, page). ``None`` marks a figure the vendor does not publish.
    """

    name: str
    vendor: str
    kind: str  # "gpu" or "tpu" in the table; gpuperf.benchmark.timing builds one for the machine it measured
    matrix_flop_per_s: Mapping[str, float]
    vector_flop_per_s: Mapping[str, float]
    hbm_bytes_per_s: float
    hbm_capacity_bytes: float
    sm_count: int | None  # streaming multiprocessors (GPU) or TensorCores (TPU); None if unpublished
    registers_per_sm_bytes: float | None  # None where the vendor publishes no figure (TPU)
    shared_memory_per_sm_bytes: float | None  # GPU shared memory (max carve-out) per SM; None for TPU
    shared_memory_bytes_per_clock_per_sm: float | None  # e.g. 32 banks x 4 B = 128 on NVIDIA GPUs
    l2_bytes: float | None  # last-level on-chip cache (TPU: CMEM where it exists)
    boost_clock_hz: float | None  # None where the vendor publishes no clock
    sources: Mapping[str, str]
    aliases: tuple[str, ...] = field(default=())
    l2_bytes_per_s: float | None = None  # only where a published measurement exists (see sources)
    memory_type: str | None = None  # "HBM2", "HBM3e", "GDDR6", ...

    def __post_init__(self) -> None:
        object.__setattr__(self, "matrix_flop_per_s", _frozen(self.matrix_flop_per_s))
        object.__setattr__(self, "vector_flop_per_s", _frozen(self.vector_flop_per_s))
        object.__setattr__(self, "sources", _frozen(self.sources))
        object.__setattr__(self, "aliases", tuple(self.aliases))
        for table in (self.matrix_flop_per_s, self.vector_flop_per_s):
            for dtype, rate in table.items():
                if dtype not in DTYPES:
                    raise ValueError(f"{self.name}: unknown dtype {dtype!r}; known: {DTYPES}")
                if not (rate > 0 and math.isfinite(rate)):
                    raise ValueError(f"{self.name}: peak for {dtype!r} must be finite and > 0, got {rate!r}")
        # The ridge point divides by it.
        if not (self.hbm_bytes_per_s > 0 and math.isfinite(self.hbm_bytes_per_s)):
            raise ValueError(f"{self.name}: hbm_bytes_per_s must be finite and > 0, got {self.hbm_bytes_per_s!r}")

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


# --------------------------------------------------------------------------------------------------
# Sources shared by several devices
# --------------------------------------------------------------------------------------------------

_CUDA_GUIDE = "NVIDIA CUDA C++ Programming Guide, 'Compute Capabilities' appendix"
_BANKS = (
    f"{_CUDA_GUIDE}, shared memory of compute capability 5.x and later: 32 banks, successive 32-bit "
    "words in successive banks, each bank delivering 32 bits per clock: 32 x 4 B = 128 B per clock per SM"
)
_REGISTERS = (
    f"{_CUDA_GUIDE}, 'Technical Specifications per Compute Capability': 64 K 32-bit registers per SM "
    "= 256 KiB"
)
_NO_L2_MEASUREMENT = "no published L2 bandwidth measurement cited here (left None)"

_V100_WP = "NVIDIA Tesla V100 GPU Architecture whitepaper (2017)"
_V100 = f"{_V100_WP}, Table 1 'Comparison of NVIDIA Tesla GPUs'"
_A100_WP = "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020)"
_A100_DS = "NVIDIA A100 Tensor Core GPU datasheet (2021)"
_H100_WP = (
    "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022; revision v1.04, which gives final "
    "clocks), Table 3 'Comparison of NVIDIA A100 and H100 Data Center GPUs'"
)
_H100_DS = "NVIDIA H100 Tensor Core GPU datasheet (2022)"
_H200_DS = "NVIDIA H200 Tensor Core GPU datasheet (2024)"
_H200_MEASURED = (
    "read with cudaGetDeviceProperties and nvidia-smi on an H200 SXM in this project on 2026-11-30 "
    "(driver 580.159.04, torch 2.11.0+cu130)"
)
_HGX_B200 = (
    "NVIDIA HGX B200 specifications (8-GPU baseboard totals; the FP4-to-TF32 Tensor Core figures are "
    "sparse), divided by 8 GPUs and, where sparse, by 2"
)
_BLACKWELL_DS = (
    "NVIDIA Blackwell datasheet (GB200 NVL72 and HGX B200), 'Individual Blackwell GPU Specifications', "
    "HGX B200 column"
)
_DGX_B200 = "NVIDIA DGX B200 datasheet (2024): 1,440 GB of HBM3e and 64 TB/s in total over 8 GPUs"
_B200_QUERY = (
    "cudaGetDeviceProperties on a B200, published in pytorch/ao pull request #4002 (2026-03-05; "
    "'update b200 peak memory bandwidth')"
)
_L4 = "NVIDIA L4 Tensor Core GPU datasheet (2023)"
_T4 = "NVIDIA T4 Tensor Core GPU datasheet (2019)"
_L4_QUERY = (
    "CUDA 11.8 deviceQuery on an L4, published in the README of github.com/Alawaji214/GPU-Median-Blurring"
)
_T4_QUERY = (
    "CUDA deviceQuery on a Colab T4, published in the README of "
    "github.com/sylvia-ymlin/cuda-kernels-from-scratch"
)
_TPU_V4_DOCS = "Google Cloud TPU documentation, 'TPU v4' page, system architecture table"
_TPU_V4_PAPER = (
    "Jouppi et al., 'TPU v4: An Optically Reconfigurable Supercomputer for Machine Learning with Hardware "
    "Support for Embeddings', ISCA 2023"
)
_TPU_V5E_DOCS = "Google Cloud TPU documentation, 'TPU v5e' page, key chip specifications table"
_TPU_NOT_APPLICABLE = (
    "not applicable: a TPU TensorCore has no GPU-style register file, banked shared memory or carve-out; "
    "its compiler-managed vector memory (VMEM, 16 MiB per TensorCore on v4 per Jouppi et al. 2023) "
    "plays a different role, so no figure is stored here"
)


# --------------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------------

_V100_SXM2 = Accelerator(
    name="V100 SXM2",
    vendor="NVIDIA",
    kind="gpu",
    matrix_flop_per_s={"fp16": 125e12},
    vector_flop_per_s={"fp64": 7.8e12, "fp32": 15.7e12, "fp16": 31.4e12},
    hbm_bytes_per_s=900e9,
    hbm_capacity_bytes=16e9,
    sm_count=80,
    registers_per_sm_bytes=256 * KiB,
    shared_memory_per_sm_bytes=96 * KiB,
    shared_memory_bytes_per_clock_per_sm=128,
    l2_bytes=6144 * KiB,
    boost_clock_hz=1.530e9,
    memory_type="HBM2",
    aliases=("V100", "V100 SXM2 16GB", "Tesla V100-SXM2-16GB"),
    sources={
        "matrix_flop_per_s": (
            f"{_V100}: Peak Tensor TFLOPS 125 (fp16 inputs, fp32 accumulate; dense: Volta has no "
            "sparsity). Volta Tensor Cores have no bf16, tf32, fp64 or int8 modes"
        ),
        "vector_flop_per_s": (
            f"{_V100}: Peak FP64 7.8, Peak FP32 15.7 TFLOPS; fp16 31.4 TFLOPS (non-Tensor) from "
            f"{_A100_WP}, 'Comparison of NVIDIA Data Center GPUs' table, V100 column"
        ),
        "hbm_bytes_per_s": f"{_V100_WP}: 900 GB/s peak HBM2 memory bandwidth",
        "hbm_capacity_bytes": f"{_V100}: Memory Size 16 GB (a 32 GB V100 SXM2 was sold later)",
        "sm_count": f"{_V100}: SMs 80",
        "registers_per_sm_bytes": f"{_V100}: Register File Size / SM 256 KB (KiB); {_REGISTERS}",
        "shared_memory_per_sm_bytes": f"{_V100}: Shared Memory Size / SM configurable up to 96 KB (KiB)",
        "shared_memory_bytes_per_clock_per_sm": _BANKS,
        "l2_bytes": f"{_V100}: L2 Cache Size 6144 KB (KiB)",
        "l2_bytes_per_s": _NO_L2_MEASUREMENT,
        "boost_clock_hz": f"{_V100}: GPU Boost Clock 1530 MHz",
    },
)


def _a100(capacity_gb: int, hbm_bytes_per_s: float, memory_type: str, aliases: tuple[str, ...]):
    column = f"A100 {capacity_gb}GB SXM column"
    return Accelerator(
        name=f"A100 {capacity_gb}GB SXM",
        vendor="NVIDIA",
        kind="gpu",
        matrix_flop_per_s={
            "fp64": 19.5e12,
            "tf32": 156e12,
            "bf16": 312e12,
            "fp16": 312e12,
            "int8": 624e12,
        },
        vector_flop_per_s={"fp64": 9.7e12, "fp32": 19.5e12, "fp16": 78e12, "bf16": 39e12},
        hbm_bytes_per_s=hbm_bytes_per_s,
        hbm_capacity_bytes=capacity_gb * 1e9,
        sm_count=108,
        registers_per_sm_bytes=256 * KiB,
        shared_memory_per_sm_bytes=164 * KiB,
        shared_memory_bytes_per_clock_per_sm=128,
        l2_bytes=40 * MiB,
        boost_clock_hz=1.410e9,
        memory_type=memory_type,
        aliases=aliases,
        sources={
            "matrix_flop_per_s": (
                f"{_A100_WP}, Table 1 (A100 performance specs) and {_A100_DS}: FP64 Tensor Core 19.5, "
                "TF32 156, BF16 312, FP16 312 TFLOPS, INT8 624 TOPS, dense (the sheets print "
                "312 | 624 etc.; the second number is with 2:4 sparsity)"
            ),
            "vector_flop_per_s": (
                f"{_A100_WP}, Table 1: Peak FP64 9.7, FP32 19.5, FP16 78, BF16 39 TFLOPS (non-Tensor)"
            ),
            "hbm_bytes_per_s": f"{_A100_DS}, {column}: GPU memory bandwidth "
            f"{hbm_bytes_per_s / 1e9:,.0f} GB/s ({memory_type})",
            "hbm_capacity_bytes": f"{_A100_DS}, {column}: GPU memory {capacity_gb} GB",
            "sm_count": f"{_A100_WP}, 'Comparison of NVIDIA Data Center GPUs' table: SMs 108",
            "registers_per_sm_bytes": f"{_A100_WP}, same table: Register File Size / SM 256 KB (KiB); "
            f"{_REGISTERS}",
            "shared_memory_per_sm_bytes": f"{_A100_WP}, same table: Shared Memory Size / SM configurable "
            "up to 164 KB (KiB)",
            "shared_memory_bytes_per_clock_per_sm": _BANKS,
            "l2_bytes": f"{_A100_WP}, same table: L2 Cache Size 40960 KB (KiB) = 40 MiB",
            "l2_bytes_per_s": _NO_L2_MEASUREMENT,
            "boost_clock_hz": f"{_A100_WP}, same table: GPU Boost Clock 1410 MHz",
        },
    )


_A100_40GB_SXM = _a100(40, 1.555e12, "HBM2", ("A100 40GB", "A100 SXM4 40GB", "NVIDIA A100-SXM4-40GB"))
_A100_80GB_SXM = _a100(80, 2.039e12, "HBM2e", ("A100 80GB", "A100 SXM4 80GB", "NVIDIA A100-SXM4-80GB"))

# H100 SXM5 and H200 SXM share one compute configuration (GH100, 132 SMs).
_H100_SXM_MATRIX = {
    "fp64": 66.9e12,
    "tf32": 494.7e12,
    "bf16": 989.4e12,
    "fp16": 989.4e12,
    "fp8": 1978.9e12,
    "int8": 1978.9e12,
}
_H100_SXM_VECTOR = {"fp64": 33.5e12, "fp32": 66.9e12, "fp16": 133.8e12, "bf16": 133.8e12}
_H100_SXM_MATRIX_SOURCE = (
    f"{_H100_WP}, H100 SXM5 column: FP64 Tensor Core 66.9, TF32 494.7, BF16 989.4, FP16 989.4, "
    "FP8 1978.9 TFLOPS, INT8 1978.9 TOPS, dense (the whitepaper prints dense/sparse pairs; "
    f"{_H100_DS} prints only the sparse 989 / 1,979 / 3,958 with an asterisk). The same table gives "
    "two boost clocks: 1830 MHz for the TF32/BF16/FP16/FP8/INT8 Tensor Core peaks "
    "(132 SMs x 4096 BF16 FLOP/clock x 1.83 GHz = 989.4 TFLOP/s) and 1980 MHz for the FP64 Tensor Core "
    "peak (132 x 256 x 1.98 GHz = 66.9 TFLOP/s)"
)
_H100_SXM_VECTOR_SOURCE = (
    f"{_H100_WP}, H100 SXM5 column: Peak FP64 33.5, FP32 66.9, FP16 133.8, BF16 133.8 TFLOPS (non-Tensor)"
)

_H100_SXM = Accelerator(
    name="H100 SXM",
    vendor="NVIDIA",
    kind="gpu",
    matrix_flop_per_s=_H100_SXM_MATRIX,
    vector_flop_per_s=_H100_SXM_VECTOR,
    hbm_bytes_per_s=3.35e12,
    hbm_capacity_bytes=80e9,
    sm_count=132,
    registers_per_sm_bytes=256 * KiB,
    shared_memory_per_sm_bytes=228 * KiB,
    shared_memory_bytes_per_clock_per_sm=128,
    l2_bytes=50 * MiB,
    boost_clock_hz=1.980e9,
    memory_type="HBM3",
    aliases=("H100 SXM5", "H100 SXM 80GB", "NVIDIA H100 80GB HBM3"),
    sources={
        "matrix_flop_per_s": _H100_SXM_MATRIX_SOURCE,
        "vector_flop_per_s": _H100_SXM_VECTOR_SOURCE,
        "hbm_bytes_per_s": (
            f"{_H100_DS}, H100 SXM column: GPU memory bandwidth 3.35 TB/s (HBM3); {_H100_WP}: 3,352 GB/s "
            "(5,120-bit HBM3 at 2,619 MHz DDR)"
        ),
        "hbm_capacity_bytes": f"{_H100_DS}, H100 SXM column: GPU memory 80 GB",
        "sm_count": f"{_H100_WP}: SMs 132 (H100 SXM5)",
        "registers_per_sm_bytes": f"{_H100_WP}: Register File Size / SM 256 KB (KiB); {_REGISTERS}",
        "shared_memory_per_sm_bytes": f"{_H100_WP}: Shared Memory Size / SM configurable up to 228 KB (KiB)",
        "shared_memory_bytes_per_clock_per_sm": _BANKS,
        "l2_bytes": f"{_H100_WP}: L2 Cache Size 50 MB (MiB) for H100 SXM5",
        "l2_bytes_per_s": _NO_L2_MEASUREMENT,
        "boost_clock_hz": (
            f"{_H100_WP}: GPU boost clock 1980 MHz for the non-Tensor and FP64 Tensor Core peaks "
            "(132 SMs x 128 FP32 lanes x 2 FLOP x 1.98 GHz = 66.9 TFLOP/s), 1830 MHz for the other Tensor "
            "Core peaks; stored here is the maximum, 1980 MHz"
        ),
    },
)

_H100_PCIE = Accelerator(
    name="H100 PCIe",
    vendor="NVIDIA",
    kind="gpu",
    matrix_flop_per_s={
        "fp64": 51.2e12,
        "tf32": 378e12,
        "bf16": 756e12,
        "fp16": 756e12,
        "fp8": 1513e12,
        "int8": 1513e12,
    },
    vector_flop_per_s={"fp64": 25.6e12, "fp32": 51.2e12, "fp16": 102.4e12, "bf16": 102.4e12},
    hbm_bytes_per_s=2.039e12,
    hbm_capacity_bytes=80e9,
    sm_count=114,
    registers_per_sm_bytes=256 * KiB,
    shared_memory_per_sm_bytes=228 * KiB,
    shared_memory_bytes_per_clock_per_sm=128,
    l2_bytes=50 * MiB,
    boost_clock_hz=1.755e9,
    memory_type="HBM2e",
    aliases=("H100 PCIe 80GB", "NVIDIA H100 PCIe"),
    sources={
        "matrix_flop_per_s": (
            f"{_H100_WP}, H100 PCIe column: FP64 Tensor Core 51.2, TF32 378, BF16 756, FP16 756, FP8 1513 "
            "TFLOPS, INT8 1513 TOPS, dense (dense/sparse pairs in the whitepaper; the datasheet prints the "
            "sparse 756 / 1,513 / 3,026). The TF32-to-INT8 Tensor Core peaks correspond to the table's "
            "1620 MHz boost clock (114 x 4096 x 1.62 GHz = 756.4 TFLOP/s BF16), the FP64 one to 1755 MHz"
        ),
        "vector_flop_per_s": (
            f"{_H100_WP}, H100 PCIe column: Peak FP64 25.6, FP32 51.2, FP16 102.4, BF16 102.4 TFLOPS"
        ),
        "hbm_bytes_per_s": (
            f"{_H100_WP}, H100 PCIe column: 2,039 GB/s (5,120-bit HBM2e at 1,593 MHz DDR). {_H100_DS} rounds "
            "it to 2 TB/s and the H100 PCIe product brief (PB-11133-001) to 'greater than 2,000 GBps'"
        ),
        "hbm_capacity_bytes": f"{_H100_DS}, H100 PCIe column: GPU memory 80 GB",
        "sm_count": f"{_H100_WP}: SMs 114 (H100 PCIe)",
        "registers_per_sm_bytes": f"{_H100_WP}: Register File Size / SM 256 KB (KiB); {_REGISTERS}",
        "shared_memory_per_sm_bytes": f"{_H100_WP}: Shared Memory Size / SM configurable up to 228 KB (KiB)",
        "shared_memory_bytes_per_clock_per_sm": _BANKS,
        "l2_bytes": f"{_H100_WP}: L2 Cache Size 50 MB (MiB) for H100 PCIe",
        "l2_bytes_per_s": _NO_L2_MEASUREMENT,
        "boost_clock_hz": (
            f"{_H100_WP}, H100 PCIe column: GPU boost clock 1755 MHz for the non-Tensor peaks "
            "(114 x 128 x 2 x 1.755 GHz = 51.2 TFLOP/s FP32), 1620 MHz for the Tensor Core peaks; stored "
            "here is the maximum, 1755 MHz"
        ),
    },
)

_H200_SXM = Accelerator(
    name="H200 SXM",
    vendor="NVIDIA",
    kind="gpu",
    matrix_flop_per_s=_H100_SXM_MATRIX,
    vector_flop_per_s=_H100_SXM_VECTOR,
    hbm_bytes_per_s=4.8e12,
    hbm_capacity_bytes=141e9,
    sm_count=132,
    registers_per_sm_bytes=256 * KiB,
    shared_memory_per_sm_bytes=228 * KiB,
    shared_memory_bytes_per_clock_per_sm=128,
    l2_bytes=60 * MiB,
    boost_clock_hz=1.980e9,
    memory_type="HBM3e",
    aliases=("H200", "H200 SXM 141GB", "NVIDIA H200"),
    sources={
        "matrix_flop_per_s": (
            f"{_H200_DS}, H200 SXM column: the same Tensor Core figures as the H100 SXM (989 TFLOPS BF16 "
            "dense, printed as 1,979 with sparsity); unrounded dense values from " + _H100_SXM_MATRIX_SOURCE
        ),
        "vector_flop_per_s": f"{_H200_DS}, H200 SXM column: FP64 34, FP32 67 TFLOPS, as the H100 SXM; "
        + _H100_SXM_VECTOR_SOURCE,
        "hbm_bytes_per_s": (
            f"{_H200_DS}, H200 SXM column: GPU memory bandwidth 4.8 TB/s (HBM3e); memoryBusWidth = 6016 bits "
            f"and memoryClockRate = 3201 MHz (DDR) {_H200_MEASURED}: 752 B x 6.402e9 /s = 4.81 TB/s"
        ),
        "hbm_capacity_bytes": (
            f"{_H200_DS}, H200 SXM column: GPU memory 141 GB (binary: nvidia-smi reports 143,771 MiB = "
            f"150.8e9 B, {_H200_MEASURED})"
        ),
        "sm_count": (
            f"not in {_H200_DS}; the H100 SXM5 configuration ({_H100_WP}: 132 SMs); "
            f"multiProcessorCount = 132 {_H200_MEASURED}"
        ),
        "registers_per_sm_bytes": f"{_REGISTERS} (compute capability 9.0); regsPerMultiprocessor = 65536 "
        f"{_H200_MEASURED}",
        "shared_memory_per_sm_bytes": (
            f"{_CUDA_GUIDE}: compute capability 9.0, up to 228 KB (KiB) of shared memory per SM; "
            f"sharedMemPerMultiprocessor = 233472 B {_H200_MEASURED}"
        ),
        "shared_memory_bytes_per_clock_per_sm": _BANKS,
        "l2_bytes": (
            f"not in {_H200_DS}; l2CacheSize = 62914560 B (60 MiB) {_H200_MEASURED}: the full GH100's 60 MB "
            f"({_H100_WP} text), of which the H100 SXM5 enables 50 MB"
        ),
        "l2_bytes_per_s": _NO_L2_MEASUREMENT,
        "boost_clock_hz": (
            f"not in {_H200_DS}; the H100 SXM5 maximum boost clock ({_H100_WP}: 1980 MHz); nvidia-smi "
            f"clocks.max.sm = 1980 MHz and default applications clock 1980 MHz, {_H200_MEASURED}"
        ),
    },
)

_B200 = Accelerator(
    name="B200",
    vendor="NVIDIA",
    kind="gpu",
    matrix_flop_per_s={
        "fp64": 37e12,
        "tf32": 1.125e15,
        "bf16": 2.25e15,
        "fp16": 2.25e15,
        "fp8": 4.5e15,
        "fp6": 4.5e15,
        "fp4": 9e15,
        "int8": 4.5e15,
    },
    vector_flop_per_s={"fp64": 37e12, "fp32": 75e12},
    hbm_bytes_per_s=7.7e12,
    hbm_capacity_bytes=180e9,
    sm_count=148,
    registers_per_sm_bytes=256 * KiB,
    shared_memory_per_sm_bytes=228 * KiB,
    shared_memory_bytes_per_clock_per_sm=128,
    l2_bytes=126.5 * MiB,
    boost_clock_hz=None,
    memory_type="HBM3e",
    aliases=("B200 SXM", "HGX B200", "NVIDIA B200"),
    # The part is the B200 of an HGX B200 board (1,000 W). NVIDIA publishes the same per-GPU Tensor Core
    # figures as baseboard totals (HGX page) and per GPU (Blackwell datasheet); the totals are used because
    # the per-GPU column rounds TF32 (2.25 sparse printed as 2.2). GB200 runs faster (higher power limit).
    sources={
        "matrix_flop_per_s": (
            f"{_HGX_B200}: FP4 144, FP8/FP6 72, INT8 72 (POPS), FP16/BF16 36, TF32 18 PFLOPS sparse per "
            "baseboard -> 9, 4.5, 4.5, 2.25, 1.125 PFLOP/s dense per GPU; FP64/FP64 Tensor Core 296 TFLOPS "
            f"-> 37 TFLOP/s. {_BLACKWELL_DS} prints the same per GPU (FP4 18, FP8/FP6 9, INT8 9, FP16/BF16 "
            "4.5, TF32 2.2 PFLOPS sparse; FP64 37 TFLOPS)"
        ),
        "vector_flop_per_s": (
            f"{_HGX_B200}: FP32 600 TFLOPS -> 75; FP64 296 TFLOPS -> 37 TFLOP/s per GPU; {_BLACKWELL_DS}: "
            "FP32 75, FP64 37 TFLOPS"
        ),
        "hbm_bytes_per_s": (
            f"{_BLACKWELL_DS}: GPU memory bandwidth 7.7 TB/s per GPU (HBM3e); the HGX B200 page gives up "
            "to 62 TB/s per 8-GPU baseboard = 7.75 TB/s per GPU; memoryBusWidth = 7680 bits at 3996 MHz "
            f"(DDR), {_B200_QUERY}, gives 960 B x 7.992e9 /s = 7.67 TB/s. The 8 TB/s often quoted is the "
            f"{_DGX_B200} total divided by 8 (and the GB200 figure), about 4% above what this part's "
            "memory bus allows"
        ),
        "hbm_capacity_bytes": (
            f"{_DGX_B200} -> 180 GB per GPU; {_BLACKWELL_DS}: 180 GB HBM3E (binary: torch reports "
            "total_memory = 182,642 MiB)"
        ),
        "sm_count": (
            f"not in NVIDIA's B200 documents; multiProcessorCount = 148, {_B200_QUERY}"
        ),
        "registers_per_sm_bytes": f"{_REGISTERS} (compute capability 10.0); regsPerMultiprocessor = 65536, "
        f"{_B200_QUERY}",
        "shared_memory_per_sm_bytes": (
            f"{_CUDA_GUIDE}: compute capability 10.0, up to 228 KB (KiB) of shared memory per SM; "
            f"sharedMemPerMultiprocessor = 228 KiB, {_B200_QUERY}"
        ),
        "shared_memory_bytes_per_clock_per_sm": _BANKS,
        "l2_bytes": f"not in NVIDIA's B200 documents; l2CacheSize = 126.5 MiB, {_B200_QUERY}",
        "l2_bytes_per_s": _NO_L2_MEASUREMENT,
        "boost_clock_hz": (
            "not published: NVIDIA's B200 documents give no clock, and no device reading of the maximum SM "
            "clock is cited here"
        ),
    },
)

_L4 = Accelerator(
    name="L4",
    vendor="NVIDIA",
    kind="gpu",
    matrix_flop_per_s={
        "tf32": 60e12,
        "bf16": 121e12,
        "fp16": 121e12,
        "fp8": 242.5e12,
        "int8": 242.5e12,
    },
    vector_flop_per_s={"fp32": 30.3e12},
    hbm_bytes_per_s=300e9,
    hbm_capacity_bytes=24e9,
    sm_count=58,
    registers_per_sm_bytes=256 * KiB,
    shared_memory_per_sm_bytes=100 * KiB,
    shared_memory_bytes_per_clock_per_sm=128,
    l2_bytes=48 * MiB,
    boost_clock_hz=2.040e9,
    memory_type="GDDR6",
    aliases=("NVIDIA L4", "L4 24GB"),
    sources={
        "matrix_flop_per_s": (
            f"{_L4}: TF32 120, BF16 242, FP16 242, FP8 485 TFLOPS, INT8 485 TOPS, all 'with sparsity' "
            "-> halved to dense. The L4 has no FP64 Tensor Core mode"
        ),
        "vector_flop_per_s": f"{_L4}: FP32 30.3 TFLOPS (no other non-Tensor figure is published)",
        "hbm_bytes_per_s": (
            f"{_L4}: GPU memory bandwidth 300 GB/s (GDDR6, not HBM); {_L4_QUERY}: 192-bit bus at 6251 MHz "
            "(DDR) = 300.0 GB/s"
        ),
        "hbm_capacity_bytes": f"{_L4}: GPU memory 24 GB",
        "sm_count": (
            f"not in {_L4}; 58 multiprocessors, {_L4_QUERY}. It reproduces the datasheet's peaks: "
            "58 x 128 x 2 FLOP x 2.04 GHz = 30.3 TFLOP/s FP32 and 58 x 1024 x 2.04 GHz = 121 TFLOP/s dense "
            "BF16 (some spec sites print 60 SMs / 7,680 cores, which matches neither)"
        ),
        "registers_per_sm_bytes": f"{_REGISTERS} (compute capability 8.9)",
        "shared_memory_per_sm_bytes": (
            f"{_CUDA_GUIDE}: compute capability 8.9, up to 100 KB (KiB) of shared memory per SM"
        ),
        "shared_memory_bytes_per_clock_per_sm": _BANKS,
        "l2_bytes": f"not in {_L4}; L2 cache size 50331648 B (48 MiB), {_L4_QUERY}",
        "l2_bytes_per_s": _NO_L2_MEASUREMENT,
        "boost_clock_hz": (
            f"not in {_L4}; GPU max clock rate 2040 MHz, {_L4_QUERY} (consistent with the datasheet's peaks, "
            "see sm_count)"
        ),
    },
)

_T4 = Accelerator(
    name="T4",
    vendor="NVIDIA",
    kind="gpu",
    matrix_flop_per_s={"fp16": 65e12, "int8": 130e12},
    vector_flop_per_s={"fp32": 8.1e12},
    hbm_bytes_per_s=320e9,
    hbm_capacity_bytes=16e9,
    sm_count=40,
    registers_per_sm_bytes=256 * KiB,
    shared_memory_per_sm_bytes=64 * KiB,
    shared_memory_bytes_per_clock_per_sm=128,
    l2_bytes=4 * MiB,
    boost_clock_hz=1.590e9,
    memory_type="GDDR6",
    aliases=("Tesla T4", "NVIDIA T4", "T4 16GB"),
    sources={
        "matrix_flop_per_s": (
            f"{_T4}: Mixed-precision (FP16/FP32) 65 TFLOPS, INT8 130 TOPS (dense: Turing has no sparsity). "
            "Turing Tensor Cores have no bf16, tf32 or fp8 modes"
        ),
        "vector_flop_per_s": f"{_T4}: Single-precision 8.1 TFLOPS (no other non-Tensor figure is published)",
        "hbm_bytes_per_s": (
            f"{_T4}: GPU memory bandwidth 320+ GB/s (GDDR6, not HBM); {_T4_QUERY}: 256-bit bus at 5001 MHz "
            "(DDR) = 320.1 GB/s"
        ),
        "hbm_capacity_bytes": f"{_T4}: GPU memory 16 GB",
        "sm_count": (
            f"{_T4}: 2,560 CUDA cores and 320 Tensor Cores; a Turing SM has 64 CUDA cores and 8 Tensor "
            f"Cores (NVIDIA Turing GPU Architecture whitepaper), so 40 SMs; 40 multiprocessors, {_T4_QUERY}"
        ),
        "registers_per_sm_bytes": f"{_REGISTERS} (compute capability 7.5)",
        "shared_memory_per_sm_bytes": (
            f"{_CUDA_GUIDE}: compute capability 7.5, up to 64 KB (KiB) of shared memory per SM"
        ),
        "shared_memory_bytes_per_clock_per_sm": _BANKS,
        "l2_bytes": (
            "NVIDIA Turing GPU Architecture whitepaper: TU104 (the T4's GPU) has 4096 KB (KiB) of L2; "
            f"L2 cache size 4194304 B, {_T4_QUERY}"
        ),
        "l2_bytes_per_s": _NO_L2_MEASUREMENT,
        "boost_clock_hz": (
            f"not in {_T4}; GPU max clock 1590 MHz, {_T4_QUERY}. It reproduces the datasheet's peaks: "
            "40 SMs x 64 x 2 FLOP x 1.59 GHz = 8.1 TFLOP/s FP32, 40 x 8 Tensor Cores x 128 x 1.59 GHz = "
            "65 TFLOP/s FP16"
        ),
    },
)

_TPU_V4 = Accelerator(
    name="TPU v4",
    vendor="Google",
    kind="tpu",
    matrix_flop_per_s={"bf16": 275e12, "int8": 275e12},
    vector_flop_per_s={},
    hbm_bytes_per_s=1200e9,
    hbm_capacity_bytes=32 * GiB,
    sm_count=2,
    registers_per_sm_bytes=None,
    shared_memory_per_sm_bytes=None,
    shared_memory_bytes_per_clock_per_sm=None,
    l2_bytes=128 * MiB,
    boost_clock_hz=1.050e9,
    memory_type="HBM2",
    aliases=("v4", "TPU v4 chip", "Cloud TPU v4"),
    sources={
        "matrix_flop_per_s": (
            f"{_TPU_V4_DOCS}: peak compute per chip 275 teraflops (bf16 or int8); TPUs have no sparsity "
            "mode, so this is dense. Check: 2 TensorCores x 4 MXUs x 128 x 128 MACs x 2 FLOP x 1.05 GHz "
            "= 275 TFLOP/s"
        ),
        "vector_flop_per_s": "not published: Google gives no vector-unit (VPU) peak for TPU v4",
        "hbm_bytes_per_s": f"{_TPU_V4_DOCS}: HBM2 bandwidth 1200 GBps",
        "hbm_capacity_bytes": f"{_TPU_V4_DOCS}: HBM2 capacity 32 GiB (Google quotes it in binary units)",
        "sm_count": f"{_TPU_V4_DOCS}: each chip contains two TensorCores (counted here in place of SMs)",
        "registers_per_sm_bytes": _TPU_NOT_APPLICABLE,
        "shared_memory_per_sm_bytes": _TPU_NOT_APPLICABLE,
        "shared_memory_bytes_per_clock_per_sm": _TPU_NOT_APPLICABLE,
        "l2_bytes": (
            f"{_TPU_V4_PAPER}, Section 2 and Table 4: 128 MiB of CMEM, an on-chip memory shared by the two "
            "TensorCores and the last on-chip level before HBM (each TensorCore also has 16 MiB of VMEM)"
        ),
        "l2_bytes_per_s": _NO_L2_MEASUREMENT,
        "boost_clock_hz": (
            f"{_TPU_V4_PAPER}, Table 4: clock rate 1050 MHz (it reproduces the documented 275 TFLOP/s, see "
            "matrix_flop_per_s)"
        ),
    },
)

_TPU_V5E = Accelerator(
    name="TPU v5e",
    vendor="Google",
    kind="tpu",
    matrix_flop_per_s={"bf16": 197e12, "int8": 393e12},
    vector_flop_per_s={},
    hbm_bytes_per_s=819e9,
    hbm_capacity_bytes=16e9,
    sm_count=1,
    registers_per_sm_bytes=None,
    shared_memory_per_sm_bytes=None,
    shared_memory_bytes_per_clock_per_sm=None,
    l2_bytes=None,
    boost_clock_hz=None,
    memory_type="HBM2",
    aliases=("v5e", "TPU v5 lite", "Cloud TPU v5e"),
    sources={
        "matrix_flop_per_s": (
            f"{_TPU_V5E_DOCS}: peak compute per chip 197 TFLOPs (bf16) and 393 TOPs (int8); dense (no "
            "sparsity mode)"
        ),
        "vector_flop_per_s": "not published: Google gives no vector-unit (VPU) peak for TPU v5e",
        "hbm_bytes_per_s": (
            f"{_TPU_V5E_DOCS}: HBM2 capacity and bandwidth 16 GB, 819 GBps (a later revision of the page "
            "prints 'HBM bandwidth per chip 800 GiBps', which is 859 GB/s and agrees with no other figure; "
            "819 GB/s is kept)"
        ),
        "hbm_capacity_bytes": f"{_TPU_V5E_DOCS}: HBM2 capacity 16 GB",
        "sm_count": f"{_TPU_V5E_DOCS}: each v5e chip contains one TensorCore (with four MXUs)",
        "registers_per_sm_bytes": _TPU_NOT_APPLICABLE,
        "shared_memory_per_sm_bytes": _TPU_NOT_APPLICABLE,
        "shared_memory_bytes_per_clock_per_sm": _TPU_NOT_APPLICABLE,
        "l2_bytes": "not published: Google documents no CMEM or other on-chip cache size for v5e",
        "l2_bytes_per_s": _NO_L2_MEASUREMENT,
        "boost_clock_hz": "not published: Google gives no clock rate for TPU v5e",
    },
)

#: Every accelerator in the course, oldest NVIDIA part first, then the TPUs.
ACCELERATORS: tuple[Accelerator, ...] = (
    _V100_SXM2,
    _A100_40GB_SXM,
    _A100_80GB_SXM,
    _H100_SXM,
    _H100_PCIE,
    _H200_SXM,
    _B200,
    _L4,
    _T4,
    _TPU_V4,
    _TPU_V5E,
)

# Bare family names that fit several parts: refuse them and say which parts they could mean.
_AMBIGUOUS = {
    "a100": ("A100 40GB SXM", "A100 80GB SXM"),
    "h100": ("H100 SXM", "H100 PCIe"),
}

_VENDOR_PREFIX = re.compile(r"^(nvidia|tesla|google|cloud)+")


def _normalize(name: str) -> str:
    """Case-, space-, dash- and underscore-insensitive key; a leading vendor word is dropped."""
    key = re.sub(r"[\s\-_]+", "", name.lower())
    stripped = _VENDOR_PREFIX.sub("", key)
    return stripped or key


def _build_index() -> Mapping[str, Accelerator]:
    index: dict[str, Accelerator] = {}
    for acc in ACCELERATORS:
        for spelling in (acc.name, *acc.aliases):
            key = _normalize(spelling)
            other = index.get(key)
            if other is not None and other is not acc:
                raise ValueError(f"name {spelling!r} would mean both {other.name!r} and {acc.name!r}")
            if key in _AMBIGUOUS:
                raise ValueError(f"name {spelling!r} is reserved as ambiguous")
            index[key] = acc
    return MappingProxyType(index)


_INDEX = _build_index()


def accelerator_names() -> tuple[str, ...]:
    """The canonical names of every accelerator in :data:`ACCELERATORS`, in table order."""
    return tuple(acc.name for acc in ACCELERATORS)


def get_accelerator(name: str) -> Accelerator:
    """Look an accelerator up by its canonical name or an alias.

    Matching ignores case, spaces, dashes and underscores, and a leading vendor word ("NVIDIA", "Tesla",
    "Google"), so ``"h200-sxm"``, ``"A100-80GB"`` and ``torch.cuda.get_device_name()`` strings such as
    ``"NVIDIA H200"`` all work. A bare family name that fits several parts (``"A100"``, ``"H100"``) raises
    ``ValueError`` naming the candidates, as does an unknown name (listing every canonical name).
    """
    if not isinstance(name, str):
        raise ValueError(f"name must be a str, got {name!r}")
    key = _normalize(name)
    if key in _INDEX:
        return _INDEX[key]
    if key in _AMBIGUOUS:
        raise ValueError(
            f"name {name!r} is ambiguous: it could be {' or '.join(map(repr, _AMBIGUOUS[key]))}; "
            "name the exact part"
        )
    raise ValueError(f"name {name!r} is not a known accelerator; known: {', '.join(accelerator_names())}")


def ridge_points_flop_per_byte(dtype: str = "bf16", unit: str = "matrix") -> dict[str, float]:
    """Ridge point (peak FLOP/s over HBM bytes/s) of every device that has a ``unit`` peak in ``dtype``.

    Returns ``{canonical name: FLOP per byte}`` in table order; devices without that peak are left out.
    """
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    table = "matrix_flop_per_s" if unit == "matrix" else "vector_flop_per_s"
    return {
        acc.name: acc.ridge_point_flop_per_byte(dtype, unit)
        for acc in ACCELERATORS
        if dtype in getattr(acc, table)
    }


def hardware_table_rows() -> list[dict]:
    """One plain dict per accelerator, for rendering: numbers in SI base units, ``None`` where unpublished.

    Keys: ``name``, ``vendor``, ``kind``, ``memory_type``; ``matrix_<dtype>_flop_per_s`` and
    ``vector_<dtype>_flop_per_s`` for every dtype in :data:`DTYPES`; ``hbm_bytes_per_s``,
    ``hbm_capacity_bytes``, ``ridge_bf16_flop_per_byte`` (matrix unit); ``sm_count``,
    ``registers_per_sm_bytes``, ``shared_memory_per_sm_bytes``, ``shared_memory_bytes_per_clock_per_sm``,
    ``l2_bytes``, ``l2_bytes_per_s``, ``boost_clock_hz``.
    """
    rows = []
    for acc in ACCELERATORS:
        row: dict = {
            "name": acc.name,
            "vendor": acc.vendor,
            "kind": acc.kind,
            "memory_type": acc.memory_type,
        }
        for unit, table in (("matrix", acc.matrix_flop_per_s), ("vector", acc.vector_flop_per_s)):
            for dtype in DTYPES:
                row[f"{unit}_{dtype}_flop_per_s"] = table.get(dtype)
        row["hbm_bytes_per_s"] = acc.hbm_bytes_per_s
        row["hbm_capacity_bytes"] = acc.hbm_capacity_bytes
        row["ridge_bf16_flop_per_byte"] = (
            acc.ridge_point_flop_per_byte("bf16") if "bf16" in acc.matrix_flop_per_s else None
        )
        for name in (
            "sm_count",
            "registers_per_sm_bytes",
            "shared_memory_per_sm_bytes",
            "shared_memory_bytes_per_clock_per_sm",
            "l2_bytes",
            "l2_bytes_per_s",
            "boost_clock_hz",
        ):
            row[name] = getattr(acc, name)
        rows.append(row)
    return rows


# --------------------------------------------------------------------------------------------------
# Figures outside the Accelerator table: special-function throughput and memory as the driver reports it
# --------------------------------------------------------------------------------------------------

_FA3 = (
    "Shah et al., 'FlashAttention-3: Fast and Accurate Attention with Asynchrony and Low-precision' "
    "(NeurIPS 2024, arXiv:2407.08608), section 3.1: 'the H100 SXM5 GPU has 989 TFLOPS of FP16 matmul but "
    "only 3.9 TFLOPS of special functions'"
)

_SFU_A100 = (
    f"{_CUDA_GUIDE}, 'Throughput of Native Arithmetic Instructions' table: 16 results per clock per SM for "
    "32-bit reciprocal, reciprocal square root, base-2 logarithm and exponential, sine and cosine on compute "
    f"capability 8.0; x 108 SMs x 1410 MHz boost ({_A100_WP}) = 2.44e12 per second"
)

#: Special-function unit (SFU) throughput, operations per second (one exp2, rsqrt, sin, ... per op), for the
#: devices with a published figure. It is 132 SMs x 16 SFU results per clock x 1.83 GHz = 3.87e12 on GH100.
SPECIAL_FUNCTION_OPS_PER_S: Mapping[str, float] = MappingProxyType({
    "H100 SXM": 3.9e12,
    "H200 SXM": 3.9e12,
    "A100 40GB SXM": 16 * 108 * 1.410e9,
    "A100 80GB SXM": 16 * 108 * 1.410e9,
})

SPECIAL_FUNCTION_SOURCES: Mapping[str, str] = MappingProxyType({
    "H100 SXM": _FA3,
    "H200 SXM": f"{_FA3}; the H200 SXM has the H100 SXM's SMs and clocks ({_H200_DS}), so the same figure",
    "A100 40GB SXM": _SFU_A100,
    "A100 80GB SXM": _SFU_A100,
})

#: Device memory as the driver reports it (bytes): vendors' capacity "GB" count binary units, so a device
#: holds more than ``hbm_capacity_bytes`` says. Only where a reading is cited.
REPORTED_MEMORY_BYTES: Mapping[str, float] = MappingProxyType({
    "H200 SXM": 143_771 * MiB,
    "B200": 182_642 * MiB,
})

REPORTED_MEMORY_SOURCES: Mapping[str, str] = MappingProxyType({
    "H200 SXM": f"nvidia-smi memory.total = 143,771 MiB = 150.8e9 B, {_H200_MEASURED}",
    "B200": f"torch.cuda.get_device_properties total_memory = 182,642 MiB, {_B200_QUERY}",
})


def special_function_ops_per_s(name: str) -> float:
    """SFU operations per second of the accelerator ``name`` (:data:`SPECIAL_FUNCTION_OPS_PER_S`)."""
    acc = get_accelerator(name)
    if acc.name not in SPECIAL_FUNCTION_OPS_PER_S:
        raise ValueError(f"name {name!r}: no special-function figure is cited for {acc.name}; "
                         f"known: {sorted(SPECIAL_FUNCTION_OPS_PER_S)}")
    return SPECIAL_FUNCTION_OPS_PER_S[acc.name]


def reported_memory_bytes(name: str) -> float:
    """Device memory of ``name`` as its driver reports it, in bytes (:data:`REPORTED_MEMORY_BYTES`)."""
    acc = get_accelerator(name)
    if acc.name not in REPORTED_MEMORY_BYTES:
        raise ValueError(f"name {name!r}: no driver reading of the memory is cited for {acc.name}; "
                         f"known: {sorted(REPORTED_MEMORY_BYTES)}")
    return REPORTED_MEMORY_BYTES[acc.name]


# --------------------------------------------------------------------------------------------------
# Per-SM limits that decide occupancy (chapter 04), by compute capability
# --------------------------------------------------------------------------------------------------

_CC_TABLE = (
    f"{_CUDA_GUIDE}, 'Technical Specifications per Compute Capability' table (columns 7.5, 8.0, 9.0)"
)
_OCC_HEADER = (
    "cuda_occupancy.h, the occupancy calculator shipped in the CUDA Toolkit's include folder (the rules "
    "cudaOccupancyMaxActiveBlocksPerMultiprocessor applies)"
)
_RESERVED = (
    f"{_CUDA_GUIDE}, compute capability 8.x and 9.0 sections: 1 KB of shared memory per thread block is "
    "reserved for system use (cudaDevAttrReservedSharedMemoryPerBlock = 1024); none on 7.x"
)


@dataclass(frozen=True)
class SMLimits:
    """The per-SM resource limits of one compute capability, as the CUDA occupancy calculator uses them.

    Registers are counted in 32-bit registers, shared memory in bytes (the CUDA documents' "KB" is KiB).
    ``register_allocation_unit`` is the number of registers a warp's allocation is rounded up to;
    ``register_sub_partitions`` the number of SM sub-partitions (schedulers) the register file is split
    over, each holding whole warps. ``shared_memory_carveouts_bytes`` are the shared-memory sizes an SM can
    be configured to (the rest of the unified L1/shared array is L1 cache).
    """

    compute_capability: str
    warp_size: int
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    max_threads_per_block: int
    registers_per_sm: int
    max_registers_per_block: int
    max_registers_per_thread: int
    register_allocation_unit: int
    register_sub_partitions: int
    shared_memory_per_sm_bytes: int
    max_shared_memory_per_block_bytes: int  # with the opt-in attribute (cudaFuncSetAttribute)
    default_shared_memory_per_block_bytes: int  # without it (48 KiB)
    reserved_shared_memory_per_block_bytes: int
    shared_memory_allocation_unit_bytes: int
    shared_memory_carveouts_bytes: tuple[int, ...]
    sources: Mapping[str, str]

    def __post_init__(self) -> None:
        object.__setattr__(self, "sources", _frozen(self.sources))
        object.__setattr__(self, "shared_memory_carveouts_bytes", tuple(self.shared_memory_carveouts_bytes))
        if self.max_warps_per_sm * self.warp_size != self.max_threads_per_sm:
            raise ValueError(f"compute capability {self.compute_capability}: warps x 32 != threads per SM")


def _sm_limit_sources(threads: str, blocks: str, smem: str, per_block: str, carveouts: str, smem_unit: str):
    return {
        "warp_size": f"{_CC_TABLE}: warp size 32",
        "max_threads_per_sm": f"{_CC_TABLE}: maximum number of resident threads per SM {threads}",
        "max_warps_per_sm": f"{_CC_TABLE}: maximum number of resident warps per SM (threads / 32)",
        "max_blocks_per_sm": f"{_CC_TABLE}: maximum number of resident blocks per SM {blocks}",
        "max_threads_per_block": f"{_CC_TABLE}: maximum number of threads per block 1024",
        "registers_per_sm": f"{_CC_TABLE}: number of 32-bit registers per SM 64 K",
        "max_registers_per_block": f"{_CC_TABLE}: maximum number of 32-bit registers per thread block 64 K",
        "max_registers_per_thread": f"{_CC_TABLE}: maximum number of 32-bit registers per thread 255",
        "register_allocation_unit": f"{_OCC_HEADER}: cudaOccRegAllocationGranularity, 256 registers per warp",
        "register_sub_partitions": f"{_OCC_HEADER}: cudaOccSubPartitionsPerMultiprocessor, 4",
        "shared_memory_per_sm_bytes": f"{_CC_TABLE}: maximum amount of shared memory per SM {smem}",
        "max_shared_memory_per_block_bytes": f"{_CC_TABLE}: maximum amount of shared memory per thread block {per_block}",
        "default_shared_memory_per_block_bytes": (
            f"{_CUDA_GUIDE}: allocations above 48 KB per block must opt in with cudaFuncSetAttribute"
        ),
        "reserved_shared_memory_per_block_bytes": _RESERVED,
        "shared_memory_allocation_unit_bytes": f"{_OCC_HEADER}: cudaOccSMemAllocationGranularity, {smem_unit}",
        "shared_memory_carveouts_bytes": carveouts,
    }


_SM_LIMITS = {
    "7.5": SMLimits(
        compute_capability="7.5", warp_size=32, max_threads_per_sm=1024, max_warps_per_sm=32,
        max_blocks_per_sm=16, max_threads_per_block=1024, registers_per_sm=65536,
        max_registers_per_block=65536, max_registers_per_thread=255, register_allocation_unit=256,
        register_sub_partitions=4, shared_memory_per_sm_bytes=64 * KiB,
        max_shared_memory_per_block_bytes=64 * KiB, default_shared_memory_per_block_bytes=48 * KiB,
        reserved_shared_memory_per_block_bytes=0, shared_memory_allocation_unit_bytes=256,
        shared_memory_carveouts_bytes=(32 * KiB, 64 * KiB),
        sources=_sm_limit_sources(
            "1024", "16", "64 KB", "64 KB",
            f"{_OCC_HEADER}: cudaOccAlignUpShmemSizeVoltaPlus, Turing supports 32 KB and 64 KB",
            "256 bytes on 7.x"),
    ),
    "8.0": SMLimits(
        compute_capability="8.0", warp_size=32, max_threads_per_sm=2048, max_warps_per_sm=64,
        max_blocks_per_sm=32, max_threads_per_block=1024, registers_per_sm=65536,
        max_registers_per_block=65536, max_registers_per_thread=255, register_allocation_unit=256,
        register_sub_partitions=4, shared_memory_per_sm_bytes=164 * KiB,
        max_shared_memory_per_block_bytes=163 * KiB, default_shared_memory_per_block_bytes=48 * KiB,
        reserved_shared_memory_per_block_bytes=1 * KiB, shared_memory_allocation_unit_bytes=128,
        shared_memory_carveouts_bytes=tuple(k * KiB for k in (0, 8, 16, 32, 64, 100, 132, 164)),
        sources=_sm_limit_sources(
            "2048", "32", "164 KB", "163 KB",
            f"{_CUDA_GUIDE}, compute capability 8.x: shared memory capacity 0, 8, 16, 32, 64, 100, 132 or "
            "164 KB per SM (8.0)",
            "128 bytes on 8.x and 9.0"),
    ),
    "9.0": SMLimits(
        compute_capability="9.0", warp_size=32, max_threads_per_sm=2048, max_warps_per_sm=64,
        max_blocks_per_sm=32, max_threads_per_block=1024, registers_per_sm=65536,
        max_registers_per_block=65536, max_registers_per_thread=255, register_allocation_unit=256,
        register_sub_partitions=4, shared_memory_per_sm_bytes=228 * KiB,
        max_shared_memory_per_block_bytes=227 * KiB, default_shared_memory_per_block_bytes=48 * KiB,
        reserved_shared_memory_per_block_bytes=1 * KiB, shared_memory_allocation_unit_bytes=128,
        shared_memory_carveouts_bytes=tuple(k * KiB for k in (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)),
        sources=_sm_limit_sources(
            "2048", "32", "228 KB", "227 KB",
            f"{_CUDA_GUIDE}, compute capability 9.0: shared memory capacity 0, 8, 16, 32, 64, 100, 132, "
            "164, 196 or 228 KB per SM",
            "128 bytes on 8.x and 9.0"),
    ),
}

#: Compute capability of each NVIDIA part in the table (CUDA GPUs list, developer.nvidia.com/cuda-gpus).
COMPUTE_CAPABILITY = {
    "V100 SXM2": "7.0", "A100 40GB SXM": "8.0", "A100 80GB SXM": "8.0", "H100 SXM": "9.0",
    "H100 PCIe": "9.0", "H200 SXM": "9.0", "B200": "10.0", "L4": "8.9", "T4": "7.5",
}


def get_sm_limits(name: str) -> SMLimits:
    """Per-SM occupancy limits of an NVIDIA part (any spelling :func:`get_accelerator` accepts) or of a
    compute capability given as a string such as ``"9.0"``.

    Covered: compute capabilities 7.5 (T4), 8.0 (A100) and 9.0 (H100, H200). Raises ``ValueError`` naming
    ``name`` otherwise.
    """
    if isinstance(name, str) and name in _SM_LIMITS:
        return _SM_LIMITS[name]
    if isinstance(name, str) and re.fullmatch(r"\d+\.\d+", name.strip()):
        raise ValueError(f"name {name!r}: no per-SM limits for compute capability {name.strip()}; "
                         f"tabulated: {sorted(_SM_LIMITS)}")
    acc = get_accelerator(name)
    cc = COMPUTE_CAPABILITY.get(acc.name)
    if cc not in _SM_LIMITS:
        raise ValueError(
            f"name {name!r}: per-SM limits are tabulated for compute capabilities {sorted(_SM_LIMITS)} "
            f"(T4, A100, H100/H200), not for {acc.name} ({cc or 'no compute capability'})"
        )
    return _SM_LIMITS[cc]


# --------------------------------------------------------------------------------------------------
# TPU matrix units and on-chip memory (chapter 05)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TPUCore:
    """The matrix units and on-chip memory of one TPU chip. ``vmem_bytes_per_core`` is None where unpublished."""

    name: str
    tensorcores_per_chip: int
    mxus_per_tensorcore: int
    mxu_rows: int
    mxu_cols: int
    vmem_bytes_per_core: int | None
    cmem_bytes: int | None
    sources: Mapping[str, str]

    def __post_init__(self) -> None:
        object.__setattr__(self, "sources", _frozen(self.sources))

    @property
    def macs_per_cycle(self) -> int:
        """Multiply-accumulates per clock over the whole chip."""
        return self.tensorcores_per_chip * self.mxus_per_tensorcore * self.mxu_rows * self.mxu_cols


_TPU_ARCH = (
    "Google Cloud TPU documentation, 'TPU architecture' page: each MXU is a 128 x 128 systolic array "
    "(256 x 256 from v6e on)"
)

TPU_CORES = {
    "TPU v4": TPUCore(
        name="TPU v4", tensorcores_per_chip=2, mxus_per_tensorcore=4, mxu_rows=128, mxu_cols=128,
        vmem_bytes_per_core=16 * MiB, cmem_bytes=128 * MiB,
        sources={
            "tensorcores_per_chip": f"{_TPU_V4_DOCS}: two TensorCores per chip",
            "mxus_per_tensorcore": f"{_TPU_V4_DOCS}: each TensorCore has four MXUs; {_TPU_V4_PAPER}, Section 2",
            "mxu_rows": _TPU_ARCH, "mxu_cols": _TPU_ARCH,
            "vmem_bytes_per_core": f"{_TPU_V4_PAPER}, Section 2: 16 MiB of vector memory (VMEM) per TensorCore",
            "cmem_bytes": f"{_TPU_V4_PAPER}, Section 2 and Table 4: 128 MiB of CMEM per chip",
        },
    ),
    "TPU v5e": TPUCore(
        name="TPU v5e", tensorcores_per_chip=1, mxus_per_tensorcore=4, mxu_rows=128, mxu_cols=128,
        vmem_bytes_per_core=None, cmem_bytes=None,
        sources={
            "tensorcores_per_chip": f"{_TPU_V5E_DOCS}: one TensorCore per chip",
            "mxus_per_tensorcore": f"{_TPU_V5E_DOCS}: each TensorCore has four MXUs, a vector unit and a scalar unit",
            "mxu_rows": _TPU_ARCH, "mxu_cols": _TPU_ARCH,
            "vmem_bytes_per_core": "not published: Google's v5e documents give no VMEM size",
            "cmem_bytes": "not published: Google documents no CMEM for v5e",
        },
    ),
}


def get_tpu_core(name: str) -> TPUCore:
    """MXU layout and on-chip memory of ``name`` (a spelling :func:`get_accelerator` accepts for a TPU)."""
    acc = get_accelerator(name)
    if acc.name not in TPU_CORES:
        raise ValueError(f"name {name!r} is {acc.name}, not a TPU in {sorted(TPU_CORES)}")
    return TPU_CORES[acc.name]


#: Host link of each GPU (bytes/s, both directions together, as the vendors print it; half each way).
HOST_LINK_BYTES_PER_S = {
    "A100 80GB SXM": 64e9,
    "H100 SXM": 128e9,
    "H200 SXM": 128e9,
}
HOST_LINK_SOURCES = {
    "A100 80GB SXM": f"{_A100_DS}: PCIe Gen4 64 GB/s (both directions together)",
    "H100 SXM": f"{_H100_DS}: PCIe Gen5 128 GB/s (both directions together)",
    "H200 SXM": f"{_H200_DS}: PCIe Gen5 128 GB/s (both directions together)",
}

#: NVLink of each GPU to the other GPUs of its server (bytes/s, both directions together, as NVIDIA prints
#: it; half each way). Chapter 05 contrasts it with the TPU's inter-chip interconnect.
NVLINK_BYTES_PER_S = {
    "H100 SXM": 900e9,
    "H200 SXM": 900e9,
}
NVLINK_SOURCES = {
    "H100 SXM": f"{_H100_DS}, H100 SXM column: NVIDIA NVLink 900 GB/s",
    "H200 SXM": f"{_H200_DS}, H200 SXM column: NVIDIA NVLink 900 GB/s",
}


@dataclass(frozen=True)
class TPUPod:
    """A TPU generation's inter-chip interconnect (ICI) and pod, as Google's Cloud TPU pages print them.

    ``ici_bytes_per_s_per_chip`` counts both directions together (None where the page gives none);
    ``allreduce_bytes_per_s_per_pod`` and ``bisection_bytes_per_s_per_pod`` are the pod figures (None where
    not printed). Chapter 05 compares them with NVLink."""

    name: str
    chips_per_pod: int
    topology: str
    ici_bytes_per_s_per_chip: float | None
    allreduce_bytes_per_s_per_pod: float | None
    bisection_bytes_per_s_per_pod: float | None
    source: str


_TPU_V4_PAGE = "Google Cloud, 'TPU v4' (cloud.google.com/tpu/docs/v4), system architecture table"
_TPU_V5E_PAGE = "Google Cloud, 'TPU v5e' (cloud.google.com/tpu/docs/v5e), key chip and Pod specifications"
_TPU_V5P_PAGE = "Google Cloud, 'TPU v5p' (cloud.google.com/tpu/docs/v5p), key specifications"
TPU_PODS = {
    "TPU v4": TPUPod("TPU v4", 4096, "3-D mesh; 3-D torus on slices of the documented shapes", None,
                     1.1e15, 24e12, f"{_TPU_V4_PAGE}: 4096 chips, all-reduce 1.1 PB/s, bisection 24 TB/s"),
    "TPU v5e": TPUPod("TPU v5e", 256, "2-D torus", 400e9, 51.2e12, 1.6e12,
                      f"{_TPU_V5E_PAGE}: bidirectional ICI 400 GBps per chip, 256 chips, all-reduce "
                      "51.2 TBps, bisection 1.6 TBps"),
    "TPU v5p": TPUPod("TPU v5p", 8960, "3-D torus", 1200e9, None, None,
                      f"{_TPU_V5P_PAGE}: bidirectional ICI 1200 GBps per chip, 8960 chips per pod"),
}
