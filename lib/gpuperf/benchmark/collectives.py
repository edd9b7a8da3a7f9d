"""Collectives measured: all-reduce, all-gather and reduce-scatter over torch.distributed (chapter 05).

Run once per process under ``torchrun`` (``bench/collectives.py`` is the command line): on CUDA GPUs the
backend is NCCL, one process per GPU; without them gloo on the CPU, which is how CI runs the same code with
two processes. Each collective is checked (the result against the sum or the concatenation every rank can
compute itself) before it is timed; a time is the median over ``iters`` calls after ``warmup`` calls, each
call between two barriers, read on the slowest rank (CUDA events on a GPU, ``time.perf_counter`` on the CPU).
A row holds the algorithm bandwidth (size / time) and the NCCL tests' bus bandwidth
(:func:`gpuperf.interconnect.bus_bytes_per_s`), with the size ``S`` counted as the NCCL tests count it.

NVLink SHARP (NCCL's NVLS algorithm) stays off: on the course's machines a program that uses NVLink
multicast can put the host's shared GPUs out of service, so :func:`init` sets ``NCCL_NVLS_ENABLE=0`` (and
the multicast switches of PyTorch and NVSHMEM) before NCCL starts, and refuses to run if they were set
otherwise. The in-switch algorithm is therefore modelled (:mod:`gpuperf.interconnect`), not measured here.

Importing this module does not import torch.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Iterable

from gpuperf.interconnect import COLLECTIVES, bus_bytes_per_s

#: Environment that keeps NVLink multicast off (NCCL, PyTorch's symmetric memory, NVSHMEM).
MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}

#: Sizes of a full sweep (bytes): 1 KiB to 8 GiB in steps of 4x; CI's gloo run uses a few small ones.
FULL_SIZES = tuple(1024 * 4**k for k in range(13)) + (8 * 2**30,)


def init():
    """Start torch.distributed from torchrun's environment: NCCL on CUDA GPUs (one per process, by
    LOCAL_RANK), else gloo. Returns ``(rank, world_size, device)``. Raises RuntimeError if NVLink multicast
    was switched on in the environment."""
    import torch
    import torch.distributed as dist

    for key, value in MULTICAST_OFF.items():
        if os.environ.setdefault(key, value) != value:
            raise RuntimeError(f"{key}={os.environ[key]!r}: NVLink multicast must stay off ({key}={value})")
    if torch.cuda.is_available():
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        dist.init_process_group("nccl", device_id=torch.device("cuda", local))
        device = torch.device("cuda", local)
    else:
        dist.init_process_group("gloo")
        device = torch.device("cpu")
    return dist.get_rank(), dist.get_world_size(), device


def _buffers(collective: str, n_bytes: int, world: int, rank: int, device):
    """Input, output and the expected output of one collective over a buffer of ``n_bytes`` (NCCL tests'
    size: the whole array). fp32 values small enough that any order of addition is exact."""
    import torch

    n = n_bytes // 4
    if n % world:
        raise ValueError(f"n_bytes: {n_bytes} is not a whole number of fp32 values per rank for {world} ranks")
    share = n // world
    if collective == "all_reduce":
        x = torch.full((n,), float(rank + 1), device=device)
        return x, x, torch.full((n,), world * (world + 1) / 2, device=device)
    if collective == "all_gather":
        x = torch.full((share,), float(rank + 1), device=device)
        out = torch.empty(n, device=device)
        expected = torch.arange(1, world + 1, device=device, dtype=torch.float32).repeat_interleave(share)
        return x, out, expected
    x = torch.full((n,), float(rank + 1), device=device)
    return x, torch.empty(share, device=device), torch.full((share,), world * (world + 1) / 2, device=device)


def _call(collective: str, x, out):
    import torch.distributed as dist

    if collective == "all_reduce":
        dist.all_reduce(x)
    elif collective == "all_gather":  # torch >= 2.13 names it all_gather_single
        (getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor)(out, x)
    else:
        (getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor)(out, x)


def time_collective_s(collective: str, n_bytes: int, world: int, rank: int, device, iters: int = 20,
                      warmup: int = 5) -> tuple[float, bool]:
    """(median seconds per call on the slowest rank, result correct on every rank) for one collective."""
    import torch
    import torch.distributed as dist

    if collective not in COLLECTIVES:
        raise ValueError(f"collective must be one of {COLLECTIVES}, got {collective!r}")
    x, out, expected = _buffers(collective, n_bytes, world, rank, device)
    first = x.clone()
    _call(collective, x, out)
    result = x if collective == "all_reduce" else out
    ok = torch.tensor([int(torch.equal(result, expected))], device=device)
    dist.all_reduce(ok, op=dist.ReduceOp.MIN)
    cuda = device.type == "cuda"
    times = []
    for i in range(warmup + iters):
        x.copy_(first)  # an all-reduce works in place: start each call from the same input
        dist.barrier()
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            _call(collective, x, out)
            end.record()
            end.synchronize()
            elapsed = start.elapsed_time(end) / 1e3
        else:
            t0 = time.perf_counter()
            _call(collective, x, out)
            elapsed = time.perf_counter() - t0
        if i >= warmup:
            times.append(elapsed)
    slowest = torch.tensor([statistics.median(times)], dtype=torch.float64, device=device)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    return float(slowest.item()), bool(ok.item())


def run_collectives(sizes: Iterable[int], collectives: Iterable[str] = COLLECTIVES, iters: int = 20,
                    warmup: int = 5, progress=None) -> list[dict]:
    """Rows for every (collective, size) on the process group :func:`init` started: ``collective``,
    ``n_bytes``, ``n_ranks``, ``backend``, ``time_s``, ``algorithm_bytes_per_s``, ``bus_bytes_per_s``,
    ``correct``. ``progress(row)`` is called after each row (rank 0 prints it)."""
    import torch.distributed as dist

    rank, world = dist.get_rank(), dist.get_world_size()
    device = _device()
    rows = []
    for collective in collectives:
        for n_bytes in sizes:
            n_bytes = int(n_bytes) // (4 * world) * (4 * world)  # whole fp32 shares
            if n_bytes <= 0:
                continue
            t, ok = time_collective_s(collective, n_bytes, world, rank, device, iters, warmup)
            row = {"collective": collective, "n_bytes": n_bytes, "n_ranks": world,
                   "backend": dist.get_backend(), "time_s": t, "algorithm_bytes_per_s": n_bytes / t,
                   "bus_bytes_per_s": bus_bytes_per_s(collective, n_bytes, world, t), "correct": ok}
            rows.append(row)
            if progress is not None:
                progress(row)
    return rows


def _device():
    import torch

    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


__all__ = ["FULL_SIZES", "MULTICAST_OFF", "init", "run_collectives", "time_collective_s"]
