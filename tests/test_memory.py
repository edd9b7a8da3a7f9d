"""gpuperf.memory: coalescing, bank conflicts and occupancy against closed forms and independent
brute-force references (hypothesis), and against the H200's recorded counters and occupancy API."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf import hardware
from gpuperf.memory import banks, coalescing
from gpuperf.memory import occupancy as occ_mod
from gpuperf.memory import bank_access, column_read, count_loads, pattern_addresses, sm_occupancy, row_chunk_read, warp_load

# ------------------------------------------------------------------------------------------------ coalescing


def _reference_sectors(addresses, element_bytes):
    """Independent count: a Python set of (warp, sector) per byte each thread touches."""
    touched = set()
    for i, a in enumerate(addresses):
        for byte in range(a, a + element_bytes):
            touched.add((i // 32, byte // 32))
    return len(touched)


def test_unit_stride_fp32_touches_four_sectors_per_warp():
    assert warp_load([4 * i for i in range(32)], 4).n_sectors == 4
    assert warp_load([4 * i for i in range(32)], 4).efficiency == 1.0


@given(st.integers(1, 8), st.integers(0, 1000))
def test_stride_k_up_to_8_touches_4k_sectors_when_aligned(k, line):
    base = line * 128 * k  # a start on a 128k-byte boundary
    load = warp_load([base + 4 * k * i for i in range(32)], 4)
    assert load.n_sectors == 4 * k
    assert load.bytes_moved == 128 * k and load.bytes_used == 128


@given(st.integers(8, 4096))
def test_stride_of_8_or_more_words_touches_one_sector_per_thread(k):
    assert warp_load([4 * k * i for i in range(32)], 4).n_sectors == 32


@given(st.sampled_from(coalescing.ELEMENT_SIZES), st.integers(0, 64), st.integers(0, 40),
       st.sampled_from(coalescing.PATTERNS), st.integers(1, 300))
@settings(max_examples=150, deadline=None)
def test_count_loads_matches_a_brute_force_set(element_bytes, stride, offset, pattern, n_threads):
    addresses = pattern_addresses(n_threads, element_bytes, stride, offset, pattern, gather_elements=4096)
    counts = count_loads(addresses, element_bytes)
    assert counts.sectors == _reference_sectors(addresses.tolist(), element_bytes)
    assert counts.instructions == -(-n_threads // 32)
    assert counts.bytes_moved == 32 * counts.sectors
    assert 0 < counts.efficiency <= 1


def test_misaligned_start_adds_one_sector():
    assert count_loads(pattern_addresses(4096, 4, 1, 1)).sectors_per_request == 5
    assert count_loads(pattern_addresses(4096, 4, 1, 8)).sectors_per_request == 4


def test_element_sizes_broadcast_and_permutation():
    for eb, sectors in ((1, 1), (2, 2), (4, 4), (8, 8), (16, 16)):
        assert count_loads(pattern_addresses(1024, eb, 1), eb).sectors_per_request == sectors
    assert count_loads(pattern_addresses(1024, 4, 1, 0, "broadcast")).sectors_per_request == 1
    assert count_loads(pattern_addresses(1024, 4, 1, 0, "warp_permutation")).sectors_per_request == 4


def test_coalescing_rejects_bad_input():
    with pytest.raises(ValueError, match="element_bytes"):
        warp_load([0], 3)
    with pytest.raises(ValueError, match="addresses_bytes"):
        warp_load([2], 4)
    with pytest.raises(ValueError, match="addresses_bytes"):
        warp_load(list(range(0, 33 * 4, 4)), 4)
    with pytest.raises(ValueError, match="pattern"):
        pattern_addresses(32, 4, 1, 0, "zigzag")
    with pytest.raises(ValueError, match="stride"):
        pattern_addresses(32, 4, -1)


# ------------------------------------------------------------------------------------------------ banks


def _reference_wavefronts(offsets, access_bytes):
    """Independent count: per phase, a dict bank -> set of words; passes = the largest set."""
    phases = max(1, access_bytes // 4)
    per = 32 // phases
    total = 0
    for p in range(phases):
        lanes = [l for l in range(len(offsets)) if p * per <= l < (p + 1) * per]
        if not lanes:
            continue
        banks_ = {}
        for l in lanes:
            first, last = offsets[l] // 4, (offsets[l] + access_bytes - 1) // 4
            for w in range(first, last + 1):
                banks_.setdefault(w % 32, set()).add(w)
        total += max(len(s) for s in banks_.values())
    return total


@given(st.permutations(list(range(32))), st.integers(0, 100))
def test_a_permutation_of_distinct_banks_has_no_conflict(perm, row):
    access = bank_access([128 * row + 4 * b for b in perm], 4)
    assert access.wavefronts == 1 and access.conflict_degree == 1 and access.bank_conflicts == 0


@given(st.integers(0, 4095))
def test_every_lane_reading_one_word_is_a_broadcast(word):
    assert bank_access([4 * word] * 32, 4).wavefronts == 1


@given(st.sampled_from(banks.ACCESS_SIZES), st.lists(st.integers(0, 511), min_size=1, max_size=32))
@settings(max_examples=200, deadline=None)
def test_bank_access_matches_a_brute_force_reference(access_bytes, slots):
    offsets = [s * access_bytes for s in slots]
    access = bank_access(offsets, access_bytes)
    assert access.wavefronts == _reference_wavefronts(offsets, access_bytes)
    assert 1 <= access.ideal_wavefronts <= access.wavefronts


@given(st.integers(1, 32))
def test_stride_of_s_words_conflicts_gcd_ways(s):
    from math import gcd

    assert bank_access([4 * s * l for l in range(32)], 4).conflict_degree == gcd(s, 32)


def test_the_seeds_padding_mistake_and_its_fixes():
    # half s[64][64]: a column read is a 32-way conflict
    assert column_read(64, 0).conflict_degree == 32
    # +8 halves (the seed's fix): rows start 4 banks apart, 8 banks in use, still 4-way
    assert column_read(64, 8).conflict_degree == 4
    assert len(set(column_read(64, 8).bank_of_lane)) == 8
    # +2 halves (one 32-bit word) is conflict-free; +1 half leaves 2-way
    assert column_read(64, 2).conflict_degree == 1
    assert column_read(64, 1).conflict_degree == 2
    # ... and +8 is right for 16-byte row reads (ldmatrix), where +0 is 8-way
    assert row_chunk_read(64, 0).conflict_degree == 8
    assert row_chunk_read(64, 8).conflict_degree == 1 and row_chunk_read(64, 8).wavefronts == 4
    # the XOR swizzle fixes the 16-byte reads without padding
    assert row_chunk_read(64, 0, swizzle=True).conflict_degree == 1
    with pytest.raises(ValueError, match="pad"):
        row_chunk_read(64, 2)


def test_wide_accesses_need_several_phases():
    assert bank_access([8 * l for l in range(32)], 8).wavefronts == 2
    assert bank_access([16 * l for l in range(32)], 16).wavefronts == 4
    assert bank_access([16 * l for l in range(32)], 16).slowdown == 1


def test_banks_reject_bad_input():
    with pytest.raises(ValueError, match="access_bytes"):
        bank_access([0], 12)
    with pytest.raises(ValueError, match="lane_offsets_bytes"):
        bank_access([2], 4)
    with pytest.raises(ValueError, match="lane_offsets_bytes"):
        bank_access([0] * 33, 4)
    with pytest.raises(ValueError, match="swizzle"):
        banks.tile_offsets([0], [0], 72, 2, swizzle=True)


# ------------------------------------------------------------------------------------------------ occupancy

DEVICES = ("T4", "A100 80GB SXM", "H100 SXM", "H200 SXM")


def _reference_blocks(limits, threads, regs, smem):
    """Independent count: add blocks one at a time while every resource still has room; each warp's
    registers go to the sub-partition with the most free registers."""
    warps = -(-threads // 32)
    per_warp = -(-regs * 32 // 256) * 256
    smem_alloc = -(-(smem + limits.reserved_shared_memory_per_block_bytes) // limits.shared_memory_allocation_unit_bytes) * limits.shared_memory_allocation_unit_bytes
    free = [limits.registers_per_sm // 4] * 4
    smem_free = limits.shared_memory_per_sm_bytes
    blocks = 0
    while blocks < limits.max_blocks_per_sm and (blocks + 1) * warps <= limits.max_warps_per_sm:
        trial = list(free)
        ok = smem_alloc <= smem_free
        for _ in range(warps):
            j = max(range(4), key=lambda q: trial[q])
            if trial[j] < per_warp:
                ok = False
                break
            trial[j] -= per_warp
        if not ok:
            break
        free = trial
        smem_free -= smem_alloc
        blocks += 1
    return blocks


@given(st.sampled_from(DEVICES), st.integers(1, 1024), st.integers(0, 255), st.integers(0, 240 * 1024))
@settings(max_examples=300, deadline=None)
def test_occupancy_matches_a_block_by_block_reference_and_never_exceeds_a_limit(device, threads, regs, smem):
    limits = hardware.get_sm_limits(device)
    try:
        r = sm_occupancy(device, threads, regs, smem)
    except ValueError:
        # impossible launches: a block's registers or shared memory over the per-block limit
        warps = -(-threads // 32)
        per_warp = -(-regs * 32 // 256) * 256
        assert (per_warp * (-(-warps // 4) * 4) > limits.max_registers_per_block
                or smem > limits.max_shared_memory_per_block_bytes)
        return
    assert r.blocks_per_sm == _reference_blocks(limits, threads, regs, smem)
    for name, allowed in r.blocks_by_limit.items():
        assert r.blocks_per_sm <= allowed
    assert r.warps_per_sm <= limits.max_warps_per_sm
    assert r.blocks_per_sm <= limits.max_blocks_per_sm
    assert r.blocks_per_sm * r.registers_per_block_allocated <= limits.registers_per_sm
    assert r.blocks_per_sm * r.shared_memory_per_block_allocated_bytes <= limits.shared_memory_per_sm_bytes
    assert 0 < r.occupancy <= 1 and r.binding


def test_occupancy_examples_on_the_h200():
    assert sm_occupancy("H200 SXM", 256, 32).blocks_per_sm == 8  # 64 warps: full
    assert sm_occupancy("H200 SXM", 256, 64).occupancy == 0.5  # 64 regs: 32 warps
    assert sm_occupancy("H200 SXM", 256, 64).binding == ("registers",)
    assert sm_occupancy("H200 SXM", 128, 32, 100_000).binding == ("shared_memory",)
    assert sm_occupancy("H200 SXM", 32, 16).binding == ("blocks",)  # 32 blocks of one warp: half the warps
    assert sm_occupancy("H200 SXM", 32, 16).occupancy == 0.5
    # the 1 KiB reservation: two blocks of 114 KiB do not fit in 228 KiB, two of 113 KiB do
    assert sm_occupancy("H200 SXM", 128, 32, 114 * 1024).blocks_per_sm == 1
    assert sm_occupancy("H200 SXM", 128, 32, 113 * 1024).blocks_per_sm == 2


def test_impossible_configurations_raise_naming_the_argument():
    with pytest.raises(ValueError, match="threads_per_block=2048"):
        sm_occupancy("H200 SXM", 2048, 32)
    with pytest.raises(ValueError, match="shared_memory_per_block_bytes"):
        sm_occupancy("H200 SXM", 128, 32, 229 * 1024)
    with pytest.raises(ValueError, match="shared_memory_per_block_bytes"):
        sm_occupancy("H200 SXM", 128, 32, 64 * 1024, opt_in=False)
    with pytest.raises(ValueError, match="registers_per_thread=256"):
        sm_occupancy("H200 SXM", 128, 256)
    with pytest.raises(ValueError, match="registers_per_thread=255"):
        sm_occupancy("H200 SXM", 1024, 255)
    with pytest.raises(ValueError, match="name"):
        sm_occupancy("B200", 128, 32)


def test_bytes_in_flight_littles_law():
    r = occ_mod.bytes_in_flight(64, 1, 4, 4.8e12, 700e-9, 132)
    assert r.bytes_in_flight_per_sm == 64 * 32 * 4
    assert r.bytes_needed_per_sm == pytest.approx(4.8e12 * 700e-9 / 132)
    assert r.fraction_of_bandwidth < 1
    assert occ_mod.bytes_in_flight(16, 4, 16, 4.8e12, 700e-9, 132).fraction_of_bandwidth == 1
    with pytest.raises(ValueError, match="warps_per_sm"):
        occ_mod.bytes_in_flight(0, 1, 4, 1e12, 1e-6, 1)


def test_max_registers_for_full_occupancy():
    assert occ_mod.max_registers_for_full_occupancy("H200 SXM", 256) == 32
    assert occ_mod.max_registers_for_full_occupancy("H200 SXM", 128) == 32


# ------------------------------------------------------------------------------------------------ the H200


def test_occupancy_agrees_with_the_cuda_api_on_every_recorded_h200_query():
    from gpuperf.records import load_run

    run = load_run("memory_occupancy_h200")["results"][0]
    dev = run["device"]
    limits = hardware.get_sm_limits("H200 SXM")
    # the device's own attributes are the table's
    assert dev["max_shared_memory_per_multiprocessor"] == limits.shared_memory_per_sm_bytes
    assert dev["max_shared_memory_per_block_optin"] == limits.max_shared_memory_per_block_bytes
    assert dev["reserved_shared_memory_per_block"] == limits.reserved_shared_memory_per_block_bytes
    assert dev["max_blocks_per_multiprocessor"] == limits.max_blocks_per_sm
    assert dev["max_threads_per_multiprocessor"] == limits.max_threads_per_sm
    assert dev["max_registers_per_multiprocessor"] == limits.registers_per_sm
    n = 0
    for k in run["kernels"]:
        for key, opt_in in (("queries", True), ("queries_default_limit", False)):
            for block, dyn, api in k[key]:
                try:
                    mine = sm_occupancy("H200 SXM", block, k["num_regs"], k["shared_size_bytes"] + dyn,
                                        opt_in=opt_in).blocks_per_sm
                except ValueError:
                    mine = 0  # the API answers 0 blocks where the calculator refuses the launch
                assert mine == api, (k["kernel"], k["options"], block, dyn)
                n += 1
    assert n == 21_840
    for t in run["triton"]:
        assert t["n_regs"] == t["driver_num_regs"]
        mine = sm_occupancy("H200 SXM", 32 * t["num_warps"], t["n_regs"], t["metadata_shared_bytes"])
        assert mine.blocks_per_sm == t["blocks_per_sm"], t


def test_sectors_per_request_agree_with_nsight_compute_on_the_h200():
    from gpuperf.records import load_run

    rows = [r for r in load_run("memory_coalescing_h200")["results"] if "ncu" in r]
    assert len(rows) == 57
    for r in rows:
        pred = count_loads(pattern_addresses(r["n_threads"], r["element_bytes"], r["stride"], r["offset"],
                                             r["pattern"], r["gather_elements"]), r["element_bytes"])
        assert r["ncu"]["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == pred.sectors, r
        assert r["ncu"]["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == pred.instructions, r


def test_bank_wavefronts_and_conflicts_agree_with_nsight_compute_on_the_h200():
    from gpuperf.records import load_run

    rows = load_run("memory_banks_h200")["results"]
    assert len(rows) == 22
    for r in rows:
        pred = bank_access(r["lane_offsets_bytes"], r["access_bytes"])
        warps = r["warps"]
        assert r["ncu"]["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == warps * pred.wavefronts, r
        assert r["ncu"]["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == warps * pred.bank_conflicts
        assert r["ncu"]["smsp__sass_inst_executed_op_shared_ld.sum"] == warps
