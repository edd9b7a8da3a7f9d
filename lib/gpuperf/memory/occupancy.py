"""Occupancy: how many blocks of a kernel fit on one SM at once, and which resource runs out first.

The calculation follows the rules of the CUDA occupancy calculator (``cuda_occupancy.h`` in the CUDA
Toolkit, which ``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` implements), for the default shared-memory
carve-out (the SM configured with as much shared memory as it can have):

* **warps**: ceil(threads / 32) warps per block against the SM's resident-warp limit;
* **blocks**: the SM's resident-block limit;
* **registers**: a warp's registers (registers per thread x 32) are rounded up to the allocation unit (256)
  and allocated in one of 4 sub-partitions, each holding a quarter of the register file and only whole warps;
* **shared memory**: static + dynamic + the per-block reservation (1 KiB from compute capability 8.0),
  rounded up to the allocation unit (128 bytes from 8.0, 256 before), against the SM's shared memory.

The limits themselves come from :func:`gpuperf.hardware.get_sm_limits`. ``bench/memory_gpu.py`` checks
this module against the CUDA occupancy API on an H200, query by query.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuperf.hardware import SMLimits, get_sm_limits

LIMITS = ("warps", "blocks", "registers", "shared_memory")


@dataclass(frozen=True)
class Occupancy:
    """Resident blocks per SM and what limits them.

    ``blocks_by_limit`` maps each of :data:`LIMITS` to the blocks that limit alone allows;
    ``binding`` names every limit that equals the minimum (several can bind at once).
    """

    device: str
    threads_per_block: int
    registers_per_thread: int
    shared_memory_per_block_bytes: int
    blocks_per_sm: int
    warps_per_block: int
    max_warps_per_sm: int
    blocks_by_limit: dict
    binding: tuple[str, ...]
    registers_per_block_allocated: int
    shared_memory_per_block_allocated_bytes: int

    @property
    def warps_per_sm(self) -> int:
        return self.blocks_per_sm * self.warps_per_block

    @property
    def threads_per_sm(self) -> int:
        return self.blocks_per_sm * self.threads_per_block

    @property
    def occupancy(self) -> float:
        """Resident warps over the SM's maximum (the "theoretical occupancy" Nsight Compute reports)."""
        return self.warps_per_sm / self.max_warps_per_sm


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def _int_arg(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return value


def sm_occupancy(device: str | SMLimits, threads_per_block: int, registers_per_thread: int,
              shared_memory_per_block_bytes: int = 0, opt_in: bool = True) -> Occupancy:
    """Resident blocks per SM of a kernel on ``device`` (a part name such as ``"H200 SXM"``, a compute
    capability such as ``"9.0"``, or an :class:`~gpuperf.hardware.SMLimits`).

    ``shared_memory_per_block_bytes`` is static plus dynamic shared memory, without the reservation.
    ``opt_in`` says whether the kernel opted in to more than 48 KiB per block (``cudaFuncSetAttribute``).
    A configuration that cannot launch at all (a block over 1024 threads, more than 255 registers per thread,
    a block's registers over the 64 K per block, more shared memory than a block may have) raises
    ``ValueError`` naming the argument; the CUDA API answers 0 blocks for the same inputs.
    """
    limits = device if isinstance(device, SMLimits) else get_sm_limits(device)
    threads = _int_arg("threads_per_block", threads_per_block, 1)
    regs = _int_arg("registers_per_thread", registers_per_thread, 0)
    smem = _int_arg("shared_memory_per_block_bytes", shared_memory_per_block_bytes, 0)
    if threads > limits.max_threads_per_block:
        raise ValueError(f"threads_per_block={threads} exceeds the {limits.max_threads_per_block} threads "
                         f"a block may have (compute capability {limits.compute_capability})")
    if regs > limits.max_registers_per_thread:
        raise ValueError(f"registers_per_thread={regs} exceeds the {limits.max_registers_per_thread} "
                         "registers a thread may have")
    per_block_limit = (limits.max_shared_memory_per_block_bytes if opt_in
                       else limits.default_shared_memory_per_block_bytes)
    warps_per_block = -(-threads // limits.warp_size)

    # registers: per warp, rounded to the allocation unit; whole warps per sub-partition
    regs_per_warp = _round_up(regs * limits.warp_size, limits.register_allocation_unit)
    regs_per_block = regs_per_warp * warps_per_block
    regs_assumed = regs_per_warp * _round_up(warps_per_block, limits.register_sub_partitions)
    if max(regs_per_block, regs_assumed) > limits.max_registers_per_block:
        raise ValueError(
            f"registers_per_thread={regs} with threads_per_block={threads}: the block needs "
            f"{max(regs_per_block, regs_assumed)} registers, more than the {limits.max_registers_per_block} "
            "a block may have"
        )
    if regs_per_warp:
        warps_per_sub = (limits.registers_per_sm // limits.register_sub_partitions) // regs_per_warp
        by_regs = warps_per_sub * limits.register_sub_partitions // warps_per_block
    else:
        by_regs = limits.max_blocks_per_sm  # no registers: no register limit (the API's INT_MAX)

    # shared memory: reservation added, rounded to the allocation unit
    smem_alloc = _round_up(smem + limits.reserved_shared_memory_per_block_bytes,
                           limits.shared_memory_allocation_unit_bytes)
    if smem > per_block_limit or smem_alloc > per_block_limit + limits.reserved_shared_memory_per_block_bytes:
        raise ValueError(
            f"shared_memory_per_block_bytes={smem} exceeds the {per_block_limit} bytes a block may have "
            f"({'with' if opt_in else 'without'} the opt-in; compute capability {limits.compute_capability})"
        )
    by_smem = limits.shared_memory_per_sm_bytes // smem_alloc if smem_alloc else limits.max_blocks_per_sm

    blocks_by_limit = {
        "warps": limits.max_warps_per_sm // warps_per_block,
        "blocks": limits.max_blocks_per_sm,
        "registers": by_regs,
        "shared_memory": by_smem,
    }
    blocks = min(blocks_by_limit.values())
    binding = tuple(name for name in LIMITS if blocks_by_limit[name] == blocks)
    name = device if isinstance(device, str) else f"compute capability {limits.compute_capability}"
    return Occupancy(name, threads, regs, smem, blocks, warps_per_block, limits.max_warps_per_sm,
                     blocks_by_limit, binding, regs_per_block, smem_alloc)


def max_registers_for_full_occupancy(device: str | SMLimits, threads_per_block: int) -> int:
    """The most registers per thread at which ``threads_per_block`` still reaches the SM's maximum
    resident warps (as far as warps and blocks allow; shared memory left out)."""
    limits = device if isinstance(device, SMLimits) else get_sm_limits(device)
    best = sm_occupancy(limits, threads_per_block, 0).warps_per_sm
    for regs in range(limits.max_registers_per_thread, -1, -1):
        try:
            if sm_occupancy(limits, threads_per_block, regs).warps_per_sm >= best:
                return regs
        except ValueError:
            continue
    return 0


@dataclass(frozen=True)
class InFlight:
    """Bytes a streaming kernel keeps in flight per SM, against what Little's law asks for."""

    warps_per_sm: int
    loads_in_flight_per_thread: int
    bytes_per_load: int
    bytes_in_flight_per_sm: int
    bytes_needed_per_sm: float

    @property
    def fraction_of_bandwidth(self) -> float:
        """Fraction of the memory bandwidth this much parallelism can sustain (at most 1)."""
        return min(1.0, self.bytes_in_flight_per_sm / self.bytes_needed_per_sm)


def bytes_in_flight(warps_per_sm: int, loads_in_flight_per_thread: int, bytes_per_load: int,
                    bandwidth_bytes_per_s: float, latency_s: float, sm_count: int) -> InFlight:
    """Little's law per SM: to sustain ``bandwidth_bytes_per_s`` over ``sm_count`` SMs at ``latency_s``,
    each SM needs bandwidth x latency / sm_count bytes in flight; it has warps x 32 threads x independent
    loads per thread x bytes per load. Fewer warps with more independent loads each (more registers per
    thread) can keep as many bytes in flight as many warps with one load each (Volkov, GTC 2010)."""
    for name, value in (("warps_per_sm", warps_per_sm), ("loads_in_flight_per_thread", loads_in_flight_per_thread),
                        ("bytes_per_load", bytes_per_load), ("sm_count", sm_count)):
        _int_arg(name, value, 1)
    if not bandwidth_bytes_per_s > 0 or not latency_s > 0:
        raise ValueError(f"bandwidth_bytes_per_s and latency_s must be > 0, got {bandwidth_bytes_per_s!r}, "
                         f"{latency_s!r}")
    have = warps_per_sm * 32 * loads_in_flight_per_thread * bytes_per_load
    need = bandwidth_bytes_per_s * latency_s / sm_count
    return InFlight(warps_per_sm, loads_in_flight_per_thread, bytes_per_load, have, need)
