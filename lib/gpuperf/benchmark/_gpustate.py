"""The GPU's state while a benchmark runs: SM clock, temperature and power, sampled in a thread.

A tensor-core-bound kernel on an H200 draws close to the board's power limit, so the SM clock falls below
its boost value as the chip warms; two kernels timed one after the other then run at different clocks.
:class:`GpuSampler` polls NVML (``pynvml``, when installed) or else ``nvidia-smi --query-gpu`` while a
timing runs, so each timing can be read with the clock it ran at. Not a family (the leading underscore
keeps it out of :func:`gpuperf.benchmark.family`); no torch import.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import threading
from dataclasses import dataclass
from typing import Callable, Sequence

#: nvidia-smi's fields, in the order :func:`parse_nvidia_smi` reads them.
SMI_FIELDS = ("clocks.sm", "temperature.gpu", "power.draw")


@dataclass(frozen=True)
class GpuSample:
    """One reading: SM clock (MHz), GPU temperature (deg C), board power (W); None where unreadable."""

    sm_clock_mhz: float | None
    temperature_c: float | None
    power_w: float | None


def parse_nvidia_smi(text: str) -> GpuSample:
    """The first line of ``nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw
    --format=csv,noheader,nounits`` as a :class:`GpuSample` (fields that are not numbers become None)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be nvidia-smi's output as a string, got {text!r}")
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        raise ValueError("text must hold one line of nvidia-smi output, got an empty string")
    fields = [f.strip() for f in lines[0].split(",")]
    if len(fields) != len(SMI_FIELDS):
        raise ValueError(f"text must have {len(SMI_FIELDS)} comma-separated fields {SMI_FIELDS}, got {lines[0]!r}")

    def number(s: str) -> float | None:
        try:
            return float(s)
        except ValueError:
            return None

    return GpuSample(*(number(f) for f in fields))


def _nvml_reader(index: int) -> Callable[[], GpuSample] | None:
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    except Exception:  # noqa: BLE001 - no driver access: fall back to nvidia-smi
        return None

    def read() -> GpuSample:
        clock = pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
        temp = pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)
        power_mw = pynvml.nvmlDeviceGetPowerUsage(handle)
        return GpuSample(float(clock), float(temp), power_mw / 1000.0)

    return read


def _smi_reader(index: int) -> Callable[[], GpuSample] | None:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    cmd = [exe, f"--id={index}", f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader,nounits"]

    def read() -> GpuSample:
        return parse_nvidia_smi(subprocess.run(cmd, capture_output=True, text=True, timeout=5).stdout)

    return read


def make_reader(index: int = 0) -> tuple[str, Callable[[], GpuSample]] | None:
    """``(source, read)`` for GPU ``index``: NVML if ``pynvml`` works, else nvidia-smi; None if neither."""
    for source, factory in (("nvml", _nvml_reader), ("nvidia-smi", _smi_reader)):
        read = factory(index)
        if read is not None:
            try:
                read()
            except Exception:  # noqa: BLE001 - a reader that fails once is not used
                continue
            return source, read
    return None


def summarize(samples: Sequence[GpuSample]) -> dict[str, float | None]:
    """Median SM clock, maximum temperature and median power over ``samples`` (None where no reading)."""
    def pick(values, how):
        values = [v for v in values if v is not None]
        return float(how(values)) if values else None

    return {
        "sm_clock_mhz": pick([s.sm_clock_mhz for s in samples], statistics.median),
        "temperature_c": pick([s.temperature_c for s in samples], max),
        "power_w": pick([s.power_w for s in samples], statistics.median),
    }


class GpuSampler:
    """Context manager: reads the GPU state every ``interval_s`` in a thread while its block runs.

    ``with GpuSampler(reader) as s: work()`` then ``s.summary()``. The first reading is taken on entry
    and the last on exit, so even a block shorter than one interval has two. ``reader`` None (no NVML,
    no nvidia-smi) gives a summary of Nones.
    """

    def __init__(self, reader: Callable[[], GpuSample] | None, interval_s: float = 0.02):
        if reader is not None and not callable(reader):
            raise ValueError(f"reader must be callable or None, got {reader!r}")
        if not interval_s > 0:
            raise ValueError(f"interval_s must be > 0, got {interval_s!r}")
        self.reader = reader
        self.interval_s = float(interval_s)
        self.samples: list[GpuSample] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _read(self) -> None:
        try:
            self.samples.append(self.reader())
        except Exception:  # noqa: BLE001 - a failed reading is skipped, never fatal to a benchmark
            pass

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._read()

    def __enter__(self) -> "GpuSampler":
        if self.reader is not None:
            self._read()
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._read()

    def summary(self) -> dict[str, float | None]:
        return summarize(self.samples)
