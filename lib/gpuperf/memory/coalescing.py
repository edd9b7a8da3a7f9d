"""Global-memory coalescing: which 32-byte sectors and 128-byte lines a warp's loads touch.

An NVIDIA GPU (compute capability 6.0 and later) serves a warp's global load from L1/L2 in 32-byte
**sectors**, four to a 128-byte cache line. A warp instruction whose 32 addresses fall in a few sectors is
served with few sector transfers (coalesced); one whose addresses scatter needs up to 32, each carrying 32
bytes of which the warp may use only 4. (CUDA C++ Best Practices Guide, 'Coalesced Access to Global
Memory'; CUDA C++ Programming Guide, 'Global Memory' of compute capability 5.x and later.)

Everything here is counted from the addresses alone, so the same code predicts Nsight Compute's
``l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum`` for any pattern (``bench/memory_gpu.py`` measures it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

SECTOR_BYTES = 32
LINE_BYTES = 128
WARP_SIZE = 32
#: Widths of one thread's load that the hardware issues as one instruction (bytes).
ELEMENT_SIZES = (1, 2, 4, 8, 16)
PATTERNS = ("strided", "broadcast", "warp_permutation", "hashed_gather")


@dataclass(frozen=True)
class WarpLoad:
    """What one warp instruction touches: ``sectors`` and ``lines`` are sorted indices (address // 32 and
    // 128); ``bytes_used`` counts distinct bytes the threads asked for, ``bytes_moved`` the sectors' bytes."""

    addresses_bytes: tuple[int, ...]
    element_bytes: int
    sectors: tuple[int, ...]
    lines: tuple[int, ...]
    bytes_used: int
    bytes_moved: int

    @property
    def n_sectors(self) -> int:
        return len(self.sectors)

    @property
    def n_lines(self) -> int:
        return len(self.lines)

    @property
    def efficiency(self) -> float:
        """Fraction of the moved bytes that some thread used (1.0 = perfectly coalesced)."""
        return self.bytes_used / self.bytes_moved


@dataclass(frozen=True)
class LoadCounts:
    """Totals over every warp of a launch: one load instruction per thread."""

    n_threads: int
    element_bytes: int
    instructions: int  # warp-level load instructions (one per warp)
    sectors: int
    lines: int
    bytes_used: int
    bytes_moved: int

    @property
    def sectors_per_request(self) -> float:
        """Sectors per warp instruction: Nsight Compute's sectors / requests (one request per instruction)."""
        return self.sectors / self.instructions

    @property
    def efficiency(self) -> float:
        return self.bytes_used / self.bytes_moved


def _check_element_bytes(element_bytes: int) -> int:
    if isinstance(element_bytes, bool) or element_bytes not in ELEMENT_SIZES:
        raise ValueError(f"element_bytes must be one of {ELEMENT_SIZES}, got {element_bytes!r}")
    return int(element_bytes)


def _as_addresses(addresses_bytes, element_bytes: int) -> np.ndarray:
    a = np.asarray(addresses_bytes)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"addresses_bytes must be a non-empty 1-D sequence, got shape {a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"addresses_bytes must be integers, got dtype {a.dtype}")
    a = a.astype(np.int64)
    if (a < 0).any():
        raise ValueError(f"addresses_bytes must be >= 0, got {int(a.min())}")
    bad = a % element_bytes != 0
    if bad.any():
        raise ValueError(
            f"addresses_bytes must be multiples of element_bytes={element_bytes} (loads are naturally "
            f"aligned), got {int(a[bad][0])}"
        )
    return a


def warp_load(addresses_bytes: Sequence[int], element_bytes: int = 4) -> WarpLoad:
    """Sectors and lines one warp's load touches; ``addresses_bytes`` holds one byte address per active
    thread (at most 32), each a multiple of ``element_bytes``."""
    element_bytes = _check_element_bytes(element_bytes)
    a = _as_addresses(addresses_bytes, element_bytes)
    if a.size > WARP_SIZE:
        raise ValueError(f"addresses_bytes must hold at most {WARP_SIZE} addresses (one warp), got {a.size}")
    # an aligned element of <= 16 bytes never straddles a 32-byte sector
    sectors = np.unique(a // SECTOR_BYTES)
    lines = np.unique(a // LINE_BYTES)
    used = np.unique((a[:, None] + np.arange(element_bytes)[None, :]).ravel()).size
    return WarpLoad(tuple(int(x) for x in a), element_bytes, tuple(int(s) for s in sectors),
                    tuple(int(x) for x in lines), int(used), int(sectors.size * SECTOR_BYTES))


def count_loads(addresses_bytes, element_bytes: int = 4) -> LoadCounts:
    """Totals for a launch where thread ``i`` loads at ``addresses_bytes[i]`` (threads grouped into warps
    of 32 consecutive indices; the last warp may be partial)."""
    element_bytes = _check_element_bytes(element_bytes)
    a = _as_addresses(addresses_bytes, element_bytes)
    n = a.size
    n_warps = -(-n // WARP_SIZE)
    pad = n_warps * WARP_SIZE - n
    # pad the last warp with copies of its first address: duplicates add no sector
    if pad:
        a_full = np.concatenate([a, np.full(pad, a[(n_warps - 1) * WARP_SIZE])])
    else:
        a_full = a
    warps = a_full.reshape(n_warps, WARP_SIZE)

    def distinct_per_row(x):
        s = np.sort(x, axis=1)
        return int((1 + (np.diff(s, axis=1) != 0).sum(axis=1)).sum())

    sectors = distinct_per_row(warps // SECTOR_BYTES)
    lines = distinct_per_row(warps // LINE_BYTES)
    byte_rows = (warps[:, :, None] + np.arange(element_bytes)[None, None, :]).reshape(n_warps, -1)
    bytes_used = distinct_per_row(byte_rows)
    return LoadCounts(n, element_bytes, n_warps, sectors, lines, bytes_used, sectors * SECTOR_BYTES)


def pattern_addresses(n_threads: int, element_bytes: int = 4, stride: int = 1, offset: int = 0,
                      pattern: str = "strided", gather_elements: int = 1 << 20) -> np.ndarray:
    """Byte addresses of ``n_threads`` threads (thread i, element index j, address j * element_bytes):

    * ``strided``: j = offset + i * stride;
    * ``broadcast``: j = offset for every thread;
    * ``warp_permutation``: j = offset + 32 * (i // 32) + (7 i mod 32), a shuffle inside each warp;
    * ``hashed_gather``: j = (i * 2654435761 mod 2^32) mod gather_elements, a scattered gather
      (Knuth's multiplicative hash; the kernel in ``bench/memory_gpu.py`` computes the same in 32 bits).
    """
    element_bytes = _check_element_bytes(element_bytes)
    for name, value, low in (("n_threads", n_threads, 1), ("stride", stride, 0), ("offset", offset, 0),
                             ("gather_elements", gather_elements, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if pattern not in PATTERNS:
        raise ValueError(f"pattern must be one of {PATTERNS}, got {pattern!r}")
    i = np.arange(n_threads, dtype=np.int64)
    if pattern == "strided":
        j = offset + i * stride
    elif pattern == "broadcast":
        j = np.full(n_threads, offset, dtype=np.int64)
    elif pattern == "warp_permutation":
        j = offset + (i & ~31) + ((i * 7) & 31)
    else:
        j = ((i.astype(np.uint64) * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)) % np.uint64(gather_elements)
        j = j.astype(np.int64)
    return j * element_bytes


def strided_sectors_per_request(stride: int, element_bytes: int = 4, offset: int = 0) -> float:
    """Sectors per warp instruction of one aligned-start strided warp, ``offset`` elements from a
    sector boundary (the closed form the course states: min(32, ceil(32 s b / 32)) for aligned starts)."""
    return warp_load(pattern_addresses(WARP_SIZE, element_bytes, stride, offset), element_bytes).n_sectors
