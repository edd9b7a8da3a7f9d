"""Shared-memory bank conflicts: how many passes (wavefronts) one warp's shared-memory access takes.

Shared memory on NVIDIA GPUs of compute capability 5.x and later is split into 32 banks; successive 4-byte
words sit in successive banks, and each bank delivers one word per clock. A warp's access is served in one
pass unless two threads need *different* words of the *same* bank; threads asking for the same word share it
(broadcast) (CUDA C++ Programming Guide, 'Shared Memory' of compute capability 5.x and later). 8-byte accesses
are modelled as served half a warp at a time and 16-byte accesses a quarter warp at a time, each phase moving
128 bytes, the banks' whole width. The guide's sections for 5.x and later give no rule for these wider
accesses, so the phases are a model here, checked against Nsight Compute's wavefront counts for 8- and 16-byte
loads on an H200 (``book/data/memory_banks_h200.json``).

The count per phase is the largest number of distinct words any one bank must deliver; the access takes the
sum over phases. Nsight Compute reads the same quantity on the GPU as
``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum`` (``bench/memory_gpu.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

NUM_BANKS = 32
BANK_WIDTH_BYTES = 4
WARP_SIZE = 32
ACCESS_SIZES = (1, 2, 4, 8, 16)


@dataclass(frozen=True)
class BankAccess:
    """One warp's shared-memory access.

    ``words_per_bank[p][b]`` is the number of distinct 4-byte words bank ``b`` delivers in phase ``p``;
    ``bank_of_lane[l]`` the bank of lane ``l``'s first word. ``wavefronts`` is the number of passes,
    ``ideal_wavefronts`` the passes the access width needs with no conflict (1, 2 or 4).
    """

    lane_offsets_bytes: tuple[int, ...]
    access_bytes: int
    words_per_bank: tuple[tuple[int, ...], ...]
    bank_of_lane: tuple[int, ...]
    wavefronts: int
    ideal_wavefronts: int

    @property
    def conflict_degree(self) -> int:
        """The n of an n-way conflict: the worst phase's passes (1 = conflict-free)."""
        return max(max(p) for p in self.words_per_bank) if self.words_per_bank else 1

    @property
    def slowdown(self) -> float:
        """Passes taken over passes needed: how much longer than a conflict-free access of the same width."""
        return self.wavefronts / self.ideal_wavefronts

    @property
    def bank_conflicts(self) -> int:
        """Extra passes, as Nsight Compute's ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld`` counts."""
        return self.wavefronts - self.ideal_wavefronts


def _phases(access_bytes: int) -> int:
    return max(1, access_bytes // BANK_WIDTH_BYTES)


def bank_access(lane_offsets_bytes: Sequence[int], access_bytes: int = 4) -> BankAccess:
    """Wavefronts of a warp in which lane ``l`` reads ``access_bytes`` at byte ``lane_offsets_bytes[l]``.

    At most 32 lanes (fewer = inactive lanes); each offset a multiple of ``access_bytes``.
    """
    if isinstance(access_bytes, bool) or access_bytes not in ACCESS_SIZES:
        raise ValueError(f"access_bytes must be one of {ACCESS_SIZES}, got {access_bytes!r}")
    offs = np.asarray(lane_offsets_bytes)
    if offs.ndim != 1 or not 1 <= offs.size <= WARP_SIZE:
        raise ValueError(f"lane_offsets_bytes must hold 1 to 32 offsets, got shape {offs.shape}")
    if not np.issubdtype(offs.dtype, np.integer):
        raise ValueError(f"lane_offsets_bytes must be integers, got dtype {offs.dtype}")
    offs = offs.astype(np.int64)
    if (offs < 0).any():
        raise ValueError(f"lane_offsets_bytes must be >= 0, got {int(offs.min())}")
    if (offs % access_bytes).any():
        bad = int(offs[offs % access_bytes != 0][0])
        raise ValueError(f"lane_offsets_bytes must be multiples of access_bytes={access_bytes}, got {bad}")
    n_phases = _phases(access_bytes)
    lanes_per_phase = WARP_SIZE // n_phases
    words_per_lane = max(1, access_bytes // BANK_WIDTH_BYTES)
    table = []
    wavefronts = 0
    for p in range(n_phases):
        lane_ids = range(p * lanes_per_phase, min((p + 1) * lanes_per_phase, offs.size))
        words = {int(offs[l]) // BANK_WIDTH_BYTES + w for l in lane_ids for w in range(words_per_lane)}
        counts = [0] * NUM_BANKS
        for word in words:
            counts[word % NUM_BANKS] += 1
        if words:
            table.append(tuple(counts))
            wavefronts += max(counts)
    first_banks = tuple(int(o // BANK_WIDTH_BYTES) % NUM_BANKS for o in offs)
    ideal = len(table)  # one pass per phase that has an active lane
    return BankAccess(tuple(int(o) for o in offs), access_bytes, tuple(table), first_banks, wavefronts, ideal)


def xor_swizzle_chunk(row: int, chunk: int, chunks_per_row: int = 8) -> int:
    """The 16-byte chunk where chunk ``chunk`` of row ``row`` is stored under an XOR swizzle:
    ``chunk ^ (row mod chunks_per_row)`` (the layout CUTLASS and Triton use for fp16 tiles)."""
    if chunks_per_row <= 0 or chunks_per_row & (chunks_per_row - 1):
        raise ValueError(f"chunks_per_row must be a power of two, got {chunks_per_row!r}")
    if not 0 <= chunk < chunks_per_row:
        raise ValueError(f"chunk must be in [0, {chunks_per_row}), got {chunk!r}")
    return chunk ^ (row % chunks_per_row)


def tile_offsets(rows: Sequence[int], cols: Sequence[int], row_pitch_elements: int, element_bytes: int,
                 swizzle: bool = False) -> list[int]:
    """Byte offsets of elements (rows[l], cols[l]) of a row-major tile whose rows are
    ``row_pitch_elements`` apart (columns + padding). With ``swizzle`` the 16-byte chunks of each row are
    permuted by :func:`xor_swizzle_chunk` (needs a 128-byte row pitch, the case the swizzle is made for)."""
    if len(rows) != len(cols):
        raise ValueError(f"rows and cols must have the same length, got {len(rows)} and {len(cols)}")
    if row_pitch_elements <= 0:
        raise ValueError(f"row_pitch_elements must be > 0, got {row_pitch_elements!r}")
    if element_bytes not in ACCESS_SIZES:
        raise ValueError(f"element_bytes must be one of {ACCESS_SIZES}, got {element_bytes!r}")
    pitch = row_pitch_elements * element_bytes
    if swizzle and pitch != 128:
        raise ValueError(f"swizzle needs a 128-byte row pitch, got row_pitch_elements={row_pitch_elements} "
                         f"x element_bytes={element_bytes} = {pitch}")
    out = []
    for r, c in zip(rows, cols):
        byte = c * element_bytes
        if swizzle:
            byte = 16 * xor_swizzle_chunk(r, byte // 16) + byte % 16
        out.append(r * pitch + byte)
    return out


def column_read(n_cols: int, pad: int, element_bytes: int = 2, col: int = 0,
                swizzle: bool = False) -> BankAccess:
    """Lane l reads element (l, col) of a row-major tile with ``n_cols`` columns padded by ``pad``
    elements per row (``half s[64][n_cols + pad]`` for element_bytes=2)."""
    if pad < 0:
        raise ValueError(f"pad must be >= 0, got {pad!r}")
    offsets = tile_offsets(range(WARP_SIZE), [col] * WARP_SIZE, n_cols + pad, element_bytes, swizzle)
    return bank_access(offsets, element_bytes)


def row_chunk_read(n_cols: int, pad: int, element_bytes: int = 2, swizzle: bool = False) -> BankAccess:
    """16-byte reads in the pattern of ``ldmatrix``: in quarter warp q, lane l reads the 16 bytes of chunk
    q of row l mod 8. Each row's start must be 16-byte aligned: ``(n_cols + pad) * element_bytes``
    a multiple of 16, else ``ValueError`` (a 16-byte load cannot start there)."""
    if pad < 0:
        raise ValueError(f"pad must be >= 0, got {pad!r}")
    pitch = (n_cols + pad) * element_bytes
    if pitch % 16:
        raise ValueError(f"pad={pad} gives a row pitch of {pitch} bytes, not a multiple of 16: 16-byte "
                         "loads of row starts would be misaligned")
    per_chunk = 16 // element_bytes
    rows = [l % 8 for l in range(WARP_SIZE)]
    cols = [(l // 8) * per_chunk for l in range(WARP_SIZE)]
    return bank_access(tile_offsets(rows, cols, n_cols + pad, element_bytes, swizzle), 16)
