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
    from gpuperf import records as recorded

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


def _chapter05() -> list[Number]:
    """Chapter 05: NVLink and what an all-reduce costs on one 8-GPU server (the model, not a measurement)."""
    from gpuperf import interconnect

    one_way = hardware.NVLINK_BYTES_PER_S[DEVICE] / 2
    how = "alpha-beta model, bandwidth term, NVLink one way (gpuperf.interconnect)"
    return [
        Number("nvlink_one_way_bytes_per_s", "NVLink per GPU, one way", one_way, "B/s",
               "NVIDIA's H200 datasheet: 900 GB/s both ways", ("05",)),
        Number("allreduce_10gb_ring_s", "all-reduce of 10 GB on 8 GPUs, ring",
               interconnect.collective_time_s("all_reduce", 10e9, 8, one_way), "s", how, ("05",)),
        Number("allreduce_10gb_in_switch_s", "the same, reduced in the NVSwitches",
               interconnect.collective_time_s("all_reduce", 10e9, 8, one_way, algorithm="in_switch"), "s",
               how, ("05",)),
    ]


def _chapter09() -> list[Number]:
    """Chapter 09: what fusion bought on the H200, from the recorded runs."""
    from gpuperf import records as recorded
    from gpuperf.results import elementwise

    rows = elementwise.rows_for_dtype(recorded.load_run("elementwise_h200"), "bf16")
    eager = elementwise.find_row(rows, "torch_chain_unfused", 16)["time_s"]
    fused = elementwise.find_row(rows, "triton_chain_fused", 16)["time_s"]
    norm = {r["kernel"]: r for r in recorded.load_run("norm_h200")["results"]
            if r["dtype"] == "bf16" and (r["rows"], r["n"]) == (32768, 4096)}
    how = "median of L2-flushed do_bench, recorded on the H200"
    return [
        Number("chain16_fusion_speedup", "16 elementwise ops on 2^28 bf16 values, fused over eager", eager / fused,
               "x", how, ("09",)),
        Number("add_rmsnorm_vs_copy", "fused add + RMSNorm, rate over the copy's",
               norm["triton"]["bytes_per_s"] / norm["copy"]["bytes_per_s"], "", how, ("09",)),
    ]


def _chapter10() -> list[Number]:
    """Chapter 10: the decode step of Llama-3-8B and the memory of training, priced by the ledger."""
    from gpuperf import ledger

    cfg = ledger.LLAMA3_8B
    weights = (cfg.n_layers * cfg.matmul_params_per_layer + cfg.vocab_size * cfg.d_model) * 2
    step = ledger.ledger(cfg, "decode", 1, 4096, DEVICE, scope="model")
    how = "the ledger's roofline bound (gpuperf.ledger)"
    return [
        Number("decode_ridge_batch", "decode batch where a 4096 x 4096 bf16 projection turns compute-bound",
               ledger.decode_compute_bound_batch(DEVICE, "bf16"), "tokens", how, ("10",)),
        Number("llama8b_weights_read_bytes", "Llama-3-8B weights read per decode step", weights, "B", how,
               ("10",)),
        Number("llama8b_decode_step_s", "Llama-3-8B decode step, batch 1, 4096 tokens of context",
               step.time_s, "s", how, ("10",)),
        Number("adam_bytes_per_param", "training state per parameter (mixed-precision Adam)", 16.0, "B",
               "2 + 2 (BF16 weight, gradient) + 4 (FP32 master) + 8 (two FP32 moments)", ("10",)),
    ]


def _chapter11() -> list[Number]:
    """Chapter 11: the formats' reach and resolution, and what FP8 buys on the H200."""
    from gpuperf import formats

    h200 = hardware.get_accelerator(DEVICE)
    bf16, fp16, e4m3 = (formats.get_format(n) for n in ("bf16", "fp16", "fp8_e4m3fn"))
    spec = "IEEE 754 and OCP 8-bit formats (gpuperf.formats)"
    return [
        Number("bf16_epsilon", "BF16 machine epsilon", bf16.machine_epsilon, "", spec, ("11",)),
        Number("bf16_exact_integers", "integers exact in BF16 up to", 2.0 ** (bf16.mantissa_bits + 1), "", spec,
               ("11",)),
        Number("fp16_max", "largest FP16 value", fp16.max_value, "", spec, ("11",)),
        Number("e4m3_max", "largest FP8 E4M3 value", e4m3.max_value, "", spec, ("11",)),
        Number("fp8_peak_flop_per_s", "H200 dense FP8 peak (twice BF16)", h200.peak_flop_per_s("fp8"), "FLOP/s",
               "NVIDIA's H200 datasheet", ("11",)),
    ]


def _part2() -> list[Number]:
    """Chapters 06-08: roofs, ridge points, launch and host costs, tiles."""
    h200 = hardware.get_accelerator(DEVICE)
    from gpuperf import roofline, tiling
    from gpuperf import records as recorded
    from gpuperf.results import elementwise, matmul_targets

    ew_rows = elementwise.rows_for_dtype(recorded.load_run("elementwise_long_h200"), "bf16")
    copy = elementwise.find_row(ew_rows, "copy")["bytes_per_s"]
    smem = next(r for r in roofline.memory_roofs(h200) if r.name == "shared memory")
    launch = {(r["kernel"], r["mode"]): r["time_s"] for r in recorded.load_run("overhead_h200")["results"]
              if r["experiment"] == "launch"}
    host = {(r["kernel"], r["impl"]): r["time_s"] for r in recorded.load_run("host_h200")["results"]}
    matmul_host = [k for k in host if k[1] == "gpuperf" and k[0].startswith("matmul")]
    if len(matmul_host) != 1:
        raise ValueError(f"host_h200: expected one matmul row of the course's wrapper, got {matmul_host}")
    mm_key = matmul_host[0][0]
    targets = {t["case"]: t for t in matmul_targets.target_rows(
        recorded.load_run("matmul_targets_h200")["results"])}
    wall = "host wall clock per call, calls issued back to back from Python"
    return [
        Number("bf16_matrix_peak", "bf16 Tensor Core peak, dense (datasheet)",
               h200.peak_flop_per_s("bf16"), "FLOP/s", "NVIDIA's H200 datasheet", ("01", "06", "08")),
        Number("bf16_ridge", "bf16 ridge point P/B", h200.ridge_point_flop_per_byte("bf16"), "FLOP/byte",
               "datasheet peak over datasheet bandwidth", ("06", "08")),
        Number("fp32_vector_peak", "fp32 peak of the CUDA cores (FMA = 2 FLOP)",
               h200.peak_flop_per_s("fp32", "vector"), "FLOP/s", "the hardware table (NVIDIA's figures)",
               ("01", "06")),
        Number("copy_bytes_per_s", "device-to-device copy, measured", copy, "B/s",
               "2^28 bf16 values, L2-flushed do_bench median, bytes read + written", ("06", "07", "09")),
        Number("smem_ridge", "shared-memory ridge for the Tensor Cores", h200.peak_flop_per_s("bf16") / smem.value,
               "FLOP/byte", "datasheet peak over the hardware table's shared-memory bandwidth", ("06", "08")),
        Number("launch_eager_s", "eager torch.add launch from Python", launch[("torch.add 1024 fp32", "eager")]
               * 1e6, "µs", wall, ("07",)),
        Number("graph_replay_s", "one kernel replayed from a CUDA Graph",
               launch[("torch.add 1024 fp32", "cuda_graph")] * 1e6, "µs",
               "device time per kernel, graphs of 100 replayed back to back", ("07",)),
        Number("triton_matmul_host_s", "host time of the course's matmul call (256^3)",
               host[(mm_key, "gpuperf")] * 1e6, "µs", wall + " (Triton 3.6)", ("07", "08")),
        Number("torch_matmul_host_s", "host time of torch.matmul (256^3)", host[(mm_key, "torch")] * 1e6, "µs",
               wall, ("07", "08")),
        Number("tile_128x256_intensity", "one 128 x 256 tile, k = 4096, bf16",
               tiling.tile_intensity_flop_per_byte(128, 256, 4096, 2), "FLOP/byte",
               "the tile model: FLOP over the bytes the tile reads", ("08",)),
        Number("triton_over_cublas_4096", "course's Triton matmul / cuBLAS, bf16 4096^3",
               targets["bf16 4096^3"]["ratio"], "x", "medians of 7 interleaved rounds, L2-flushed do_bench",
               ("08",)),
    ]


def _part3() -> list[Number]:
    """Chapters 09-11: fusion, the ledger, number formats."""
    return []


@lru_cache(maxsize=1)
def h200_sheet() -> tuple[Number, ...]:
    """Every number of the sheet, in the order the book meets them. Raises ValueError on a repeated key."""
    numbers = (*_part1(), *_chapter05(), *_part2(), *_part3(), *_chapter09(), *_chapter10(), *_chapter11())
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
