"""The reader's own measurements of chapters 02 and 04: bandwidth against bytes in flight, and against stride.

Two short sweeps of the kernels of :mod:`gpuperf.kernels.streaming`, sized to take seconds on Colab's T4
(320 GB/s) as on an H200, each timed with :func:`gpuperf.benchmark.time_callable` (the median of
``triton.testing.do_bench``: CUDA events, L2 flushed before every call) beside a same-run reference, the
device-to-device copy of a tensor as large as the streamed one. Each sweep checks its kernel's XOR against
:mod:`gpuperf.kernels.streaming`'s torch reference once before timing it. Pure: the sweeps return rows
(dicts); the chapters draw them (:mod:`gpuperf.plotting.littles_law`, :mod:`gpuperf.plotting.memory`) over
the recorded H200 runs. Nothing here imports torch or triton at import time; the sweeps need a CUDA GPU.

What a chapter may do with the numbers: show them and compare them in words with the recorded run. A live
timing is never asserted (CONTRIBUTING, "Live measurements are shown, never asserted").
"""

from __future__ import annotations

from typing import Any, Sequence

#: Warps per SM the streaming sweep tries (programs of 4 warps; capped by the GPU's own limit).
WARPS_PER_SM = (4, 8, 16, 32, 64)
#: 16-byte loads each thread keeps in flight.
LOADS_PER_THREAD = (1, 2, 4)
#: Warps per program of the streaming sweep.
WARPS_PER_PROGRAM = 4
#: Strides (in 4-byte elements) of the strided sweep.
STRIDES = (1, 2, 4, 8, 16, 32)
#: Bytes the streaming sweep reads per call (256 MiB: far past any L2, under a millisecond on a T4).
STREAM_BYTES = 256 * 2**20
#: Useful elements the strided sweep reads per call (16 MiB of int32; its buffer is 32 times larger).
STRIDED_USED = 1 << 22


def _require_gpu():
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("the live sweeps need a CUDA GPU (the chapters show the recorded H200 run instead)")
    return torch


def device_description() -> dict[str, Any]:
    """The GPU the sweeps run on: name, SMs, compute capability, warps an SM holds, versions."""
    torch = _require_gpu()
    import triton

    props = torch.cuda.get_device_properties(0)
    threads_per_sm = getattr(props, "max_threads_per_multi_processor", 2048)
    return {"device": props.name, "sm_count": int(props.multi_processor_count),
            "capability": f"{props.major}.{props.minor}", "max_warps_per_sm": int(threads_per_sm) // 32,
            "torch": torch.__version__, "triton": triton.__version__}


def _copy_row(torch, x) -> dict[str, Any]:
    from gpuperf.benchmark import time_callable

    y = torch.empty_like(x)
    t = time_callable(lambda: y.copy_(x), warmup_ms=5.0, rep_ms=20.0)
    return {"reference": "copy", "time_s": t, "bytes_moved": 2 * x.numel() * x.element_size(),
            "bytes_per_s": 2 * x.numel() * x.element_size() / t}


def stream_plan(sm_count: int, max_warps_per_sm: int, warps_per_sm: Sequence[int] = WARPS_PER_SM,
                loads_per_thread: Sequence[int] = LOADS_PER_THREAD) -> list[dict[str, int]]:
    """The streaming sweep's configurations that fit the GPU: for each warps per SM (at most
    ``max_warps_per_sm``) and 16-byte loads per thread, the programs, block and bytes in flight per SM."""
    if sm_count < 1 or max_warps_per_sm < WARPS_PER_PROGRAM:
        raise ValueError(f"sm_count and max_warps_per_sm must be >= 1 and >= {WARPS_PER_PROGRAM}, got "
                         f"{sm_count}, {max_warps_per_sm}")
    plan = []
    for warps in warps_per_sm:
        if warps > max_warps_per_sm or warps % WARPS_PER_PROGRAM:
            continue
        programs_per_sm = warps // WARPS_PER_PROGRAM
        for loads in loads_per_thread:
            block = 32 * WARPS_PER_PROGRAM * loads * 16 // 4  # int32 elements per program tile
            plan.append({"warps_per_sm": warps, "loads_in_flight_per_thread": loads,
                         "programs": sm_count * programs_per_sm, "block": block,
                         "bytes_in_flight_per_sm": warps * 32 * loads * 16})
    return plan


def sweep_bytes_in_flight(warps_per_sm: Sequence[int] = WARPS_PER_SM,
                          loads_per_thread: Sequence[int] = LOADS_PER_THREAD,
                          n_bytes: int = STREAM_BYTES) -> dict[str, Any]:
    """Time :func:`gpuperf.kernels.streaming.stream_read` at each configuration of :func:`stream_plan` on
    this GPU; return ``{"device": ..., "copy": row, "results": rows}``, each row with ``time_s``,
    ``bytes_per_s`` (bytes read / time) and ``fraction_of_copy``."""
    torch = _require_gpu()
    from gpuperf.benchmark import time_callable
    from gpuperf.kernels import streaming

    dev = device_description()
    x = torch.randint(-2**31, 2**31 - 1, (n_bytes // 4,), dtype=torch.int32, device="cuda")
    copy = _copy_row(torch, x)
    rows = []
    for cfg in stream_plan(dev["sm_count"], dev["max_warps_per_sm"], warps_per_sm, loads_per_thread):
        out = torch.empty(cfg["programs"] * cfg["block"], dtype=torch.int32, device="cuda")

        def call(cfg=cfg, out=out):
            return streaming.stream_read(x, cfg["programs"], cfg["block"], WARPS_PER_PROGRAM, out=out)

        if not torch.equal(call(), streaming.stream_read_reference(x, cfg["programs"], cfg["block"])):
            raise AssertionError(f"stream_read gave a wrong XOR at {cfg}")
        n_iters = streaming.stream_read_shape(x.numel(), cfg["programs"], cfg["block"])
        bytes_read = cfg["programs"] * n_iters * cfg["block"] * 4
        t = time_callable(call, warmup_ms=5.0, rep_ms=20.0)
        rows.append({**cfg, "time_s": t, "bytes_read": bytes_read, "bytes_per_s": bytes_read / t,
                     "fraction_of_copy": bytes_read / t / copy["bytes_per_s"]})
    return {"device": dev, "copy": copy, "results": rows}


def sweep_strides(strides: Sequence[int] = STRIDES, n_used: int = STRIDED_USED) -> dict[str, Any]:
    """Time :func:`gpuperf.kernels.streaming.strided_read` at each stride on this GPU; return
    ``{"device": ..., "copy": row, "results": rows}``, each row with ``time_s``, ``useful_bytes_per_s``
    (4 x n_used / time) and ``fraction_of_stride_1``."""
    torch = _require_gpu()
    from gpuperf.benchmark import time_callable
    from gpuperf.kernels import streaming

    dev = device_description()
    x = torch.randint(-2**31, 2**31 - 1, ((n_used - 1) * max(strides) + 1,), dtype=torch.int32,
                      device="cuda")
    copy = _copy_row(torch, x[: 4 * n_used])
    rows = []
    for stride in strides:
        out = torch.empty(n_used // 1024, dtype=torch.int32, device="cuda")

        def call(stride=stride, out=out):
            return streaming.strided_read(x, n_used, stride, out=out)

        if not torch.equal(call(), streaming.strided_read_reference(x, n_used, stride)):
            raise AssertionError(f"strided_read gave a wrong XOR at stride {stride}")
        t = time_callable(call, warmup_ms=5.0, rep_ms=20.0)
        rows.append({"stride": stride, "element_bytes": 4, "n_used": n_used, "time_s": t,
                     "useful_bytes_per_s": 4 * n_used / t})
    first = rows[0]["useful_bytes_per_s"]
    for r in rows:
        r["fraction_of_stride_1"] = r["useful_bytes_per_s"] / first
    return {"device": dev, "copy": copy, "results": rows}


__all__ = ["LOADS_PER_THREAD", "STREAM_BYTES", "STRIDED_USED", "STRIDES", "WARPS_PER_PROGRAM", "WARPS_PER_SM",
           "device_description", "stream_plan", "sweep_bytes_in_flight", "sweep_strides"]
