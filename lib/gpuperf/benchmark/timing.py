"""Measure the two roofline numbers of the machine you are on: matmul FLOP/s and copy bytes/s.

The roofline model needs a peak compute rate and a memory bandwidth. For a GPU we read them from the
datasheet (:mod:`gpuperf.hardware`); for the reader's own machine we measure them, at sizes small enough
to finish in about a second on a 2-core CPU:

* :func:`measure_matmul_flop_per_s` times an ``n x n`` by ``n x n`` matrix product, which does
  :func:`square_matmul_flop` = ``2 n^3`` FLOP (one multiply and one add per term of each dot product).
* :func:`measure_copy_bytes_per_s` times ``dst[:] = src`` over ``n_bytes`` bytes and counts
  :func:`copy_bytes_moved` = ``2 n_bytes`` (every byte is read once and written once), the convention of
  the STREAM benchmark (McCalpin, 1995). A CPU whose stores allocate cache lines also reads ``dst`` before
  writing it, 3 bytes of bus traffic per byte copied; the convention does not count that read, and large
  copies usually avoid it with non-temporal stores.

A third measurement is a point to place under those roofs rather than a roof:
:func:`measure_add_flop_per_s` times ``z = x + y`` over ``n_elements`` values, which does
:func:`add_flop` = ``n`` FLOP and moves :func:`add_bytes_moved` = ``3 n b`` bytes (read x and y, write z;
``b`` bytes per element), intensity ``1 / (3 b)`` FLOP/byte.

All three run numpy on the CPU by default, or torch on a CUDA GPU when ``device="cuda"`` (torch is imported
only then). Each times one warm-up call that is discarded, then ``repeats`` calls, and reports the
median rate, which a single slow call (a page fault, another process) does not move, and the best (fastest)
call, which is the better estimate of the hardware's own limit on a machine busy with other work.
"""

from __future__ import annotations

import numbers
import statistics
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from gpuperf.roofline import bytes_per_element

#: Accepted dtype spellings, mapped to the course's short names (those of :mod:`gpuperf.hardware`).
DTYPE_ALIASES = {
    "float64": "fp64", "fp64": "fp64",
    "float32": "fp32", "fp32": "fp32",
    "float16": "fp16", "fp16": "fp16",
    "bfloat16": "bf16", "bf16": "bf16",
}

#: Short dtype names numpy can multiply on the CPU (numpy has no bfloat16).
_NUMPY_DTYPES = {"fp64": "float64", "fp32": "float32", "fp16": "float16"}

#: Short dtype names torch can multiply on a GPU.
_TORCH_DTYPES = {"fp64": "float64", "fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


@dataclass(frozen=True)
class Measurement:
    """The median rate of repeated timed calls, with the raw samples behind it.

    Attributes
    ----------
    what: what was timed, e.g. ``"matmul 512x512x512 fp32 on cpu"``.
    value: median of ``samples``, in ``unit`` (see also :attr:`best`).
    unit: ``"FLOP/s"`` or ``"bytes/s"``.
    samples: one rate per timed call (work / time of that call), in ``unit``.
    times_s: the wall time of each timed call, in seconds (same order as ``samples``).
    work: FLOP (for FLOP/s) or bytes moved (for bytes/s) done by one call.
    device: ``"cpu"`` or ``"cuda"``.
    dtype: short dtype name (``"fp32"``...; ``"uint8"`` for a copy, which moves raw bytes).
    """

    what: str
    value: float
    unit: str
    samples: tuple[float, ...]
    times_s: tuple[float, ...]
    work: float
    device: str
    dtype: str

    @property
    def best(self) -> float:
        """The fastest call's rate, in ``unit``: on a shared machine other work only ever slows a call down,
        so the best sample is the closest estimate of what the hardware itself can do."""
        return max(self.samples)

    @property
    def summary(self) -> str:
        """One line: the median with an SI prefix, the number of samples and what was measured."""
        unit = "B/s" if self.unit == "bytes/s" else self.unit
        return f"{_si(self.value)}{unit} (median of {len(self.samples)}; {self.what})"


def _si(value: float) -> str:
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}"
    return f"{value:.3g} "


def square_matmul_flop(n: int) -> int:
    """FLOP of an ``n x n`` by ``n x n`` matrix product: ``2 n^3``.

    Each of the ``n^2`` outputs is a dot product of length ``n``: ``n`` multiplies and ``n`` adds (the
    first add, into zero, is counted too, as every vendor peak does: a fused multiply-add is 2 FLOP).
    """
    n = _check_positive_int("n", n)
    return 2 * n**3


def copy_bytes_moved(n_bytes: int) -> int:
    """Bytes a copy of ``n_bytes`` moves through memory: read once plus written once, ``2 n_bytes``."""
    return 2 * _check_positive_int("n_bytes", n_bytes)


def add_flop(n_elements: int) -> int:
    """FLOP of an elementwise add ``z = x + y`` of ``n_elements`` values: one add per element, ``n``."""
    return _check_positive_int("n_elements", n_elements)


def add_bytes_moved(n_elements: int, dtype: str = "float32") -> int:
    """Bytes an elementwise add ``z = x + y`` must move: read ``x`` and ``y``, write ``z``, ``3 n b``.

    ``b`` is the size of one element of ``dtype`` in bytes (4 for the default float32, so ``12 n``).
    """
    n_elements = _check_positive_int("n_elements", n_elements)
    return 3 * n_elements * int(bytes_per_element(_short_dtype(dtype)))


def measure_matmul_flop_per_s(
    n: int = 512, dtype: str = "float32", repeats: int = 7, device: str = "cpu"
) -> Measurement:
    """FLOP/s of an ``n x n`` by ``n x n`` matrix product in ``dtype`` (median in ``value``, fastest in ``best``).

    On ``"cpu"`` it uses numpy, whose BLAS runs as many threads as it was started with (every core unless
    ``OPENBLAS_NUM_THREADS`` or the like was set before numpy was imported); ``dtype`` is one of float64,
    float32, float16 (or fp64/fp32/fp16; numpy's float16 matmul does not use BLAS and is far slower). numpy
    has no bfloat16, so bf16 is accepted only on ``"cuda"``, where torch runs the product (on Tensor Cores
    for fp16/bf16) and the GPU is synchronised around each call. The default ``n = 512`` (268 MFLOP) takes
    one to a few milliseconds per call on a CPU; n = 1024 or more is closer to the peak but takes longer.
    """
    n = _check_positive_int("n", n)
    _check_positive_int("repeats", repeats)
    device = _check_device(device)
    short = _short_dtype(dtype)
    flop = square_matmul_flop(n)
    if device == "cpu":
        numpy_dtype = _numpy_dtype(dtype, short, "matmul")
        rng = np.random.default_rng(0)
        a = rng.standard_normal((n, n)).astype(numpy_dtype)
        b = rng.standard_normal((n, n)).astype(numpy_dtype)
        out = np.empty((n, n), dtype=a.dtype)
        call = lambda: np.matmul(a, b, out=out)  # noqa: E731 - out= avoids timing an allocation
        sync = None
    else:
        import torch

        torch_dtype = getattr(torch, _TORCH_DTYPES[short])
        gen = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn((n, n), device="cuda", dtype=torch_dtype, generator=gen)
        b = torch.randn((n, n), device="cuda", dtype=torch_dtype, generator=gen)
        out = torch.empty((n, n), device="cuda", dtype=torch_dtype)
        call = lambda: torch.matmul(a, b, out=out)  # noqa: E731
        sync = torch.cuda.synchronize
    times_s = time_calls_s(call, repeats=repeats, synchronize=sync)
    return _measurement(f"matmul {n}x{n}x{n} {short} on {device}", flop, "FLOP/s", times_s, device, short)


def measure_copy_bytes_per_s(n_bytes: int = 2**26, repeats: int = 7, device: str = "cpu") -> Measurement:
    """Bandwidth of copying ``n_bytes`` bytes, counting bytes read plus bytes written (median and ``best``).

    The default, 64 MiB, is larger than the last-level cache of most CPUs, so the copy streams from main
    memory rather than from cache; it takes a few milliseconds per call. On ``"cuda"`` the copy is
    ``dst.copy_(src)`` between two buffers in GPU memory.
    """
    n_bytes = _check_positive_int("n_bytes", n_bytes)
    _check_positive_int("repeats", repeats)
    device = _check_device(device)
    moved = copy_bytes_moved(n_bytes)
    if device == "cpu":
        src = np.ones(n_bytes, dtype=np.uint8)
        dst = np.zeros(n_bytes, dtype=np.uint8)
        call = lambda: np.copyto(dst, src)  # noqa: E731
        sync = None
    else:
        import torch

        src = torch.ones(n_bytes, dtype=torch.uint8, device="cuda")
        dst = torch.zeros(n_bytes, dtype=torch.uint8, device="cuda")
        call = lambda: dst.copy_(src)  # noqa: E731
        sync = torch.cuda.synchronize
    times_s = time_calls_s(call, repeats=repeats, synchronize=sync)
    what = f"copy of {n_bytes} bytes on {device} (read + write)"
    return _measurement(what, moved, "bytes/s", times_s, device, "uint8")


def measure_add_flop_per_s(
    n_elements: int = 2**23, repeats: int = 7, device: str = "cpu", dtype: str = "float32"
) -> Measurement:
    """FLOP/s of the elementwise add ``z = x + y`` over ``n_elements`` values of ``dtype``.

    The work is :func:`add_flop` (1 FLOP per element); the bytes it moves are
    ``add_bytes_moved(n_elements, dtype)`` (``3 n b``), so its arithmetic intensity is
    ``gpuperf.roofline.arithmetic_intensity(m.work, add_bytes_moved(n_elements, dtype))``, ``1/12``
    FLOP/byte in fp32. An add is memory-bound on every processor, so its FLOP/s are its bandwidth times
    that intensity: a point on the slope of the roofline. The default, ``2**23`` fp32 values (32 MiB per
    array, 96 MiB moved), streams from main memory rather than from cache and takes a few milliseconds per
    call on a CPU. On ``"cpu"`` numpy adds (float64, float32 or float16); on ``"cuda"`` torch does (bf16
    too). ``z`` is allocated once, outside the timed calls.
    """
    n_elements = _check_positive_int("n_elements", n_elements)
    _check_positive_int("repeats", repeats)
    device = _check_device(device)
    short = _short_dtype(dtype)
    flop = add_flop(n_elements)
    if device == "cpu":
        numpy_dtype = _numpy_dtype(dtype, short, "add")
        x = np.ones(n_elements, dtype=numpy_dtype)
        y = np.ones(n_elements, dtype=numpy_dtype)
        z = np.empty_like(x)
        call = lambda: np.add(x, y, out=z)  # noqa: E731 - out= avoids timing an allocation
        sync = None
    else:
        import torch

        torch_dtype = getattr(torch, _TORCH_DTYPES[short])
        x = torch.ones(n_elements, device="cuda", dtype=torch_dtype)
        y = torch.ones(n_elements, device="cuda", dtype=torch_dtype)
        z = torch.empty_like(x)
        call = lambda: torch.add(x, y, out=z)  # noqa: E731
        sync = torch.cuda.synchronize
    times_s = time_calls_s(call, repeats=repeats, synchronize=sync)
    what = f"add of {n_elements} {short} elements on {device} (z = x + y)"
    return _measurement(what, flop, "FLOP/s", times_s, device, short)


def as_bandwidth(run: Measurement, bytes_moved: float) -> Measurement:
    """The bytes/s of a streaming kernel measured in FLOP/s (an add): every sample times ``bytes_moved``
    per ``run.work`` FLOP. Use it to put the add beside the copy as a candidate bandwidth roof."""
    if not isinstance(run, Measurement) or run.unit != "FLOP/s":
        raise ValueError(f"run must be a FLOP/s Measurement, got {run!r}")
    if isinstance(bytes_moved, bool) or not isinstance(bytes_moved, numbers.Real) or not bytes_moved > 0:
        raise ValueError(f"bytes_moved must be a number > 0, got {bytes_moved!r}")
    factor = bytes_moved / run.work
    return Measurement(
        what=f"{run.what}, as bytes/s ({bytes_moved:g} bytes per call)", value=run.value * factor,
        unit="bytes/s", samples=tuple(x * factor for x in run.samples), times_s=run.times_s,
        work=float(bytes_moved), device=run.device, dtype=run.dtype,
    )


def best_bandwidth(*runs: Measurement) -> Measurement:
    """Of several bytes/s measurements of the same device (a copy, an add, ...), the one with the fastest call.

    STREAM reports four kernels and the memory roof is the best of them (McCalpin 1995): a copy alone can
    underestimate what the memory delivers to a read-heavy mix such as an add's two reads per write.
    """
    if not runs:
        raise ValueError("runs must hold at least one Measurement, got none")
    for run in runs:
        if not isinstance(run, Measurement) or run.unit != "bytes/s":
            raise ValueError(f"runs must be bytes/s Measurements, got {run!r}")
    if len({run.device for run in runs}) != 1:
        raise ValueError(f"runs were measured on different devices: {sorted({run.device for run in runs})}")
    return max(runs, key=lambda run: run.best)


def measured_accelerator(
    matmul: Measurement, copy: Measurement, name: str = "this machine (measured)", statistic: str = "median"
):
    """An :class:`~gpuperf.hardware.Accelerator` whose two roofline numbers are the measured ones.

    The matrix-unit peak for ``matmul.dtype`` is the matmul's rate and the memory bandwidth
    (``hbm_bytes_per_s``, the slow memory whatever it is called) the copy's, each taken as ``statistic``:
    ``"median"`` (:attr:`Measurement.value`) or ``"best"`` (:attr:`Measurement.best`). Every roofline
    function and plot that takes an accelerator can draw the reader's own machine. Figures that were not
    measured are ``None`` (NaN for the capacity, which must be a number) and say so in ``sources``.
    """
    from gpuperf.hardware import Accelerator

    if not isinstance(matmul, Measurement) or matmul.unit != "FLOP/s":
        raise ValueError(f"matmul must be a FLOP/s Measurement, got {matmul!r}")
    if not isinstance(copy, Measurement) or copy.unit != "bytes/s":
        raise ValueError(f"copy must be a bytes/s Measurement, got {copy!r}")
    if matmul.device != copy.device:
        raise ValueError(f"matmul and copy were measured on different devices: {matmul.device!r}, {copy.device!r}")
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty str, got {name!r}")
    if statistic not in ("median", "best"):
        raise ValueError(f"statistic must be 'median' or 'best', got {statistic!r}")
    peak = matmul.value if statistic == "median" else matmul.best
    bandwidth = copy.value if statistic == "median" else copy.best
    nan = float("nan")
    return Accelerator(
        name=name,
        vendor="measured",
        kind=matmul.device,
        matrix_flop_per_s={matmul.dtype: peak},
        vector_flop_per_s={},
        hbm_bytes_per_s=bandwidth,
        hbm_capacity_bytes=nan,
        sm_count=None,
        registers_per_sm_bytes=None,
        shared_memory_per_sm_bytes=None,
        shared_memory_bytes_per_clock_per_sm=None,
        l2_bytes=None,
        boost_clock_hz=None,
        sources={
            "matrix_flop_per_s": f"measured ({statistic} of {len(matmul.samples)}): {matmul.what}",
            "hbm_bytes_per_s": f"measured ({statistic} of {len(copy.samples)}): {copy.what}",
            "other fields": "not measured (None, or NaN for hbm_capacity_bytes)",
        },
    )


def time_calls_s(
    call: Callable[[], object],
    repeats: int,
    warmup: int = 1,
    synchronize: Callable[[], object] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, ...]:
    """Wall time in seconds of each of ``repeats`` calls of ``call``, after ``warmup`` untimed calls.

    ``synchronize`` (e.g. ``torch.cuda.synchronize``) runs before starting and before stopping the
    clock, so that an asynchronous GPU call is timed to completion rather than to its launch.
    """
    _check_positive_int("repeats", repeats)
    if isinstance(warmup, bool) or not isinstance(warmup, numbers.Integral) or warmup < 0:
        raise ValueError(f"warmup must be an int >= 0, got {warmup!r}")
    if not callable(call):
        raise ValueError(f"call must be callable, got {call!r}")
    sync = synchronize if synchronize is not None else (lambda: None)
    for _ in range(warmup):
        call()
    sync()
    times_s = []
    for _ in range(repeats):
        start = clock()
        call()
        sync()
        times_s.append(clock() - start)
    return tuple(times_s)


def _measurement(what: str, work: float, unit: str, times_s, device: str, dtype: str) -> Measurement:
    # A clock with coarse resolution can report 0 s for a tiny call; floor it at 1 ns to keep rates finite.
    samples = tuple(work / max(t, 1e-9) for t in times_s)
    return Measurement(
        what=what,
        value=float(statistics.median(samples)),
        unit=unit,
        samples=samples,
        times_s=tuple(times_s),
        work=float(work),
        device=device,
        dtype=dtype,
    )


def _check_positive_int(name: str, value) -> int:
    # bool is an int in Python; True as a size is almost certainly a mistake. numpy integers are fine.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


def _numpy_dtype(dtype: str, short: str, operation: str) -> str:
    """The numpy dtype name for ``short``; ``ValueError`` naming ``dtype`` when numpy cannot run it."""
    if short not in _NUMPY_DTYPES:
        raise ValueError(
            f"dtype {dtype!r} is not available for a numpy {operation} on the cpu; "
            f"use one of {sorted(_NUMPY_DTYPES.values())}"
        )
    return _NUMPY_DTYPES[short]


def _short_dtype(dtype: str) -> str:
    if not isinstance(dtype, str) or dtype not in DTYPE_ALIASES:
        raise ValueError(f"dtype must be one of {sorted(DTYPE_ALIASES)}, got {dtype!r}")
    return DTYPE_ALIASES[dtype]


def _check_device(device: str) -> str:
    if device == "cpu":
        return "cpu"
    if device == "cuda":
        from gpuperf.records import cuda_available

        if not cuda_available():
            raise ValueError("device 'cuda' was asked for but torch sees no CUDA GPU; use device='cpu'")
        return "cuda"
    raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
