"""The memory hierarchy's three first-order effects (chapter 04): coalescing of global loads into sectors,
shared-memory bank conflicts, and occupancy. Pure functions returning dataclasses; figures live in
:mod:`gpuperf.plotting.memory`, and asking the CUDA occupancy API of the GPU at hand (a measurement) in
:mod:`gpuperf.benchmark.occupancy`."""

from gpuperf.memory.banks import BankAccess, bank_access, column_read, row_chunk_read, tile_offsets, xor_swizzle_chunk
from gpuperf.memory.hierarchy import Level, hierarchy_levels
from gpuperf.memory.coalescing import (LoadCounts, WarpLoad, count_loads, pattern_addresses,
                                       strided_sectors_per_request, warp_load)
from gpuperf.memory.occupancy import (InFlight, Occupancy, bytes_in_flight, max_registers_for_full_occupancy,
                                      sm_occupancy)

__all__ = [
    "Level", "hierarchy_levels", "BankAccess", "bank_access", "column_read", "row_chunk_read", "tile_offsets", "xor_swizzle_chunk",
    "LoadCounts", "WarpLoad", "count_loads", "pattern_addresses", "strided_sectors_per_request", "warp_load",
    "InFlight", "Occupancy", "bytes_in_flight", "max_registers_for_full_occupancy", "sm_occupancy",
]
