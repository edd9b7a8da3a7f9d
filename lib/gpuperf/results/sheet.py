"""One H200 sheet: the numbers a reader should remember, each read from the hardware table or a recorded run.

Chapters 01-11 end with a "Numbers to remember" box drawn from this sheet, and their exercises use its
values, so that two chapters never quote two figures for one thing (an idle latency here, a loaded one
there) without saying which. Every entry says how it was obtained (``how``: the datasheet, the L2-flushed
``do_bench`` median, a clock read inside a kernel, Nsight Compute, ...). Pure: returns data; the box is
drawn by :func:`gpuperf.plotting.tables.format_numbers_box_html`.

Each part of the book keeps its entries in its own function below (``_part1`` ... ``_part3``); add a
number there, with the chapters that quote it, rather than computing it again in a notebook.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from gpuperf import hardware

DEVICE = "H200 SXM"


@dataclass(frozen=True)
class Number:
    """One number of the sheet: ``value`` in ``unit``; ``how`` it was obtained; the ``chapters`` that quote
    it (two-digit strings, e.g. ``("02", "04")``); ``label`` is how a box names it."""

    key: str
    label: str
    value: float
    unit: str
    how: str
    chapters: tuple[str, ...]


def _bytes_in_flight_measured() -> tuple[float, float]:
    """From the recorded streaming read (``bytes_in_flight_h200``): the same-run copy's bandwidth (B/s) and
    the fewest bytes in flight per SM at which the read reached 97% of it (whole blocks per SM only)."""
    from gpuperf.results import recorded

    run = recorded.load_run("bytes_in_flight_h200")["results"]
    copy = next(r for r in run if r.get("reference") == "copy")["bytes_per_s"]
    fits = [r for r in run if "warps_per_sm" in r and r["occupancy_blocks_per_sm"] >= r["blocks_per_sm"]]
    full = min(r["bytes_in_flight_per_sm"] for r in fits if r["bytes_per_s"] >= 0.97 * copy)
    return copy, full


def _part1() -> list[Number]:
    """Chapters 01-05: the device's two numbers, latencies and bytes in flight."""
    h200 = hardware.get_accelerator(DEVICE)
    limits = hardware.get_sm_limits(DEVICE)
    from gpuperf.results.latency import recorded_latency_levels

    levels, _run = recorded_latency_levels()
    copy_bytes_per_s, in_flight_measured = _bytes_in_flight_measured()
    chase = "pointer chase, one thread (an idle memory system), SM clock read in the kernel"
    idle_in_flight = h200.hbm_bytes_per_s * levels.seconds("hbm") / h200.sm_count
    rows = [
        Number("peak_bf16_matrix_flop_per_s", "dense bf16 matrix peak (Tensor Cores)",
               h200.peak_flop_per_s("bf16"), "FLOP/s", "NVIDIA's H200 datasheet", ("01",)),
        Number("peak_fp32_vector_flop_per_s", "FP32 peak of the general-purpose lanes",
               h200.peak_flop_per_s("fp32", "vector"), "FLOP/s", "NVIDIA's H200 datasheet", ("01",)),
        Number("hbm_bytes_per_s", "HBM bandwidth (datasheet)", h200.hbm_bytes_per_s, "B/s",
               "NVIDIA's H200 datasheet", ("02", "04", "06")),
        Number("copy_events_bytes_per_s", "device-to-device copy of 1 GiB", copy_bytes_per_s, "B/s",
               "CUDA events around each copy, median (bench/part1_gpu.py)", ("02", "04")),
        Number("sm_count", "streaming multiprocessors", h200.sm_count, "SMs", "NVIDIA's H200 datasheet",
               ("01", "02", "03", "04")),
        Number("max_warps_per_sm", "resident warps per SM, at most", limits.max_warps_per_sm, "warps",
               "CUDA programming guide, compute capability 9.0", ("02", "03", "04")),
        Number("warp_threads", "threads per warp", limits.warp_size, "threads",
               "CUDA programming guide, compute capability 9.0", ("03",)),
        Number("schedulers_per_sm", "warp schedulers per SM", limits.register_sub_partitions, "schedulers",
               "NVIDIA's Hopper whitepaper", ("03",)),
        Number("registers_per_sm_kib", "register file per SM", h200.registers_per_sm_bytes / 1024, "KiB",
               "CUDA programming guide (65,536 32-bit registers)", ("02", "04")),
        Number("l2_bytes", "L2 cache", h200.l2_bytes, "B", "the device's reported L2 size", ("02", "04")),
        Number("l1_cycles", "L1 hit, idle", levels.l1_cycles, "cycles", chase, ("02", "04")),
        Number("l2_hit_cycles", "L2 hit, idle (a line this SM read before)", levels.l2_cycles, "cycles",
               chase, ("02", "04")),
        Number("l2_first_read_cycles", "L2 hit, idle (a line this SM reads first)",
               levels.l2_first_touch_cycles, "cycles",
               chase + "; first pass over a chain another kernel wrote whole", ("02", "04")),
        Number("hbm_cycles", "HBM, idle", levels.hbm_cycles, "cycles", chase + ", L2 flushed", ("02", "04")),
        Number("hbm_latency_s", "HBM, idle", levels.seconds("hbm"), "s",
               "the chase's cycles at the SM clock measured after it", ("02", "04")),
        Number("in_flight_idle_per_sm", "bytes in flight per SM by Little's law with the idle latency",
               idle_in_flight / 1024, "KiB", "datasheet bandwidth x idle HBM latency / SMs: too few",
               ("02", "04")),
        Number("in_flight_measured_per_sm", "bytes in flight per SM a streaming read needed (loaded)",
               in_flight_measured / 1024, "KiB",
               "fewest at which a read reached 97% of the copy; CUDA events, median of 3 (bench/part1_gpu.py)",
               ("02", "04")),
    ]
    if levels.shared_cycles is not None:
        rows.insert(9, Number("shared_cycles", "shared memory, idle", levels.shared_cycles, "cycles",
                              "pointer chase in shared memory, SM clock read in the kernel", ("02", "04")))
    return rows


def _part2() -> list[Number]:
    """Chapters 06-08: roofs, ridge points, launch and host costs, tiles."""
    return []


def _part3() -> list[Number]:
    """Chapters 09-11: fusion, the ledger, number formats."""
    return []


@lru_cache(maxsize=1)
def h200_sheet() -> tuple[Number, ...]:
    """Every number of the sheet, in the order the book meets them. Raises ValueError on a repeated key."""
    numbers = (*_part1(), *_part2(), *_part3())
    keys = [n.key for n in numbers]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise ValueError(f"the H200 sheet names {repeated} more than once")
    return numbers


def sheet_value(key: str) -> float:
    """The value of one number of the sheet (raises KeyError naming the keys it has)."""
    for number in h200_sheet():
        if number.key == key:
            return number.value
    raise KeyError(f"{key!r} is not on the H200 sheet; it has {[n.key for n in h200_sheet()]}")


def numbers_to_remember(chapter: str) -> list[Number]:
    """The numbers of the sheet a chapter quotes (``chapter`` as two digits, e.g. ``"04"``)."""
    return [n for n in h200_sheet() if chapter in n.chapters]


__all__ = ["DEVICE", "Number", "h200_sheet", "numbers_to_remember", "sheet_value"]
