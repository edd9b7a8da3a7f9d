"""Chapter 04's GPU evidence: occupancy, coalescing and shared-memory bank conflicts on one GPU.

A standalone script (not a `gpuperf.benchmark` family: the harness times callables, while most of what
this script records are hardware counters read by Nsight Compute and answers of the CUDA occupancy API).
It needs CuPy, and for the Triton part torch and triton. On a GPU machine, one command does every mode and
writes ``memory_{coalescing,banks,latency,occupancy}_h200.json``::

    python3 bench/memory_gpu.py all RAW [--out-dir book/data]

or one mode at a time (each writes its raw results into RAW)::

    python3 bench/memory_gpu.py occupancy RAW        # CUDA occupancy API over a grid; Triton metadata
    python3 bench/memory_gpu.py counters RAW         # each counted kernel once (run it under ncu: `all` does)
    python3 bench/memory_gpu.py bandwidth RAW        # achieved bandwidth of strided loads (CUDA events)
    python3 bench/memory_gpu.py latency RAW          # pinned host <-> device copies (CUDA events)
    python3 bench/memory_gpu.py collect RAW [--out-dir DIR]   # pair ncu.csv with the launches; the records

The harness's pieces: ``counters`` runs under ``gpuperf.benchmark.profile.ncu_command`` (every
``coalesce_``/``bank_`` kernel from the start, base units, the counters of :data:`METRICS`), and ``collect``
pairs the report's kernels with the launch list in order (``profile.pair_launches``), so a missing or extra
profile fails loudly instead of mislabelling rows; times are CUDA events around each call
(``gpuperf.benchmark.event_times_s`` on CuPy's stream); provenance and recording are
``gpuperf.records``'s.

Every kernel here is CUDA C++ compiled by NVRTC through ``cupy.RawModule``: the access patterns (a stride
chosen at run time, one scalar load per thread, a shared-memory load at byte offsets given per lane) are
ones Triton does not let a program express lane by lane. The simulators in ``gpuperf.memory`` predict
every number recorded here from the same inputs (the per-lane offsets, the launch shape, the registers and
shared memory the compiler reported); the chapter compares them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))  # the repository's gpuperf, uninstalled
from gpuperf.benchmark.occupancy import REGISTER_HUNGRY_SOURCE  # noqa: E402  (the occupancy kernels' template)

METRICS = (
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "smsp__sass_inst_executed_op_global_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
)

# ------------------------------------------------------------------------------------------------
# Coalescing: one load per thread, index computed at run time
# ------------------------------------------------------------------------------------------------
#: element type name -> (C type, bytes)
ELEMENT_TYPES = {1: "unsigned char", 2: "unsigned short", 4: "float", 8: "double", 16: "float4"}

COALESCE_SRC = r"""
__device__ __forceinline__ bool is_sentinel(float v) { return v == -12345.0f; }
__device__ __forceinline__ bool is_sentinel(double v) { return v == -12345.0; }
__device__ __forceinline__ bool is_sentinel(unsigned char v) { return v == 77; }
__device__ __forceinline__ bool is_sentinel(unsigned short v) { return v == 7777; }
__device__ __forceinline__ bool is_sentinel(float4 v) { return v.x == -12345.0f; }

// pattern 0: j = offset + i*stride; 1: j = offset (broadcast);
// 2: j = offset + warp*32 + (lane*7 mod 32) (a permutation inside each warp);
// 3: j = (i * 2654435761u) mod n_elements (a scattered gather; 32-bit unsigned arithmetic)
// listing: coalesce
template <typename T>
__device__ void coalesce_body(const T* __restrict__ src, int* __restrict__ flag, long long n_threads,
                              long long offset, long long stride, int pattern, long long n_elements) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_threads) return;
    long long j;
    if (pattern == 0) j = offset + i * stride;
    else if (pattern == 1) j = offset;
    else if (pattern == 2) j = offset + (i & ~31LL) + ((i * 7) & 31);
    else j = (long long)(((unsigned int)i * 2654435761u) % (unsigned int)n_elements);
    T v = src[j];
    if (is_sentinel(v)) flag[0] = 1;  // never true: keeps the load alive without a store per thread
}
#define COALESCE(NAME, T) extern "C" __global__ void NAME(const T* src, int* flag, long long n_threads, \
    long long offset, long long stride, int pattern, long long n_elements) { \
    coalesce_body<T>(src, flag, n_threads, offset, stride, pattern, n_elements); }
// end listing: coalesce
COALESCE(coalesce_1, unsigned char)
COALESCE(coalesce_2, unsigned short)
COALESCE(coalesce_4, float)
COALESCE(coalesce_8, double)
COALESCE(coalesce_16, float4)
"""

# ------------------------------------------------------------------------------------------------
# Bank conflicts: each lane loads one element of shared memory at a byte offset given per lane
# ------------------------------------------------------------------------------------------------
BANK_SRC = r"""
struct u16 { unsigned short x; };
struct u32 { unsigned int x; };
__device__ __forceinline__ unsigned int fold(u16 v) { return v.x; }
__device__ __forceinline__ unsigned int fold(u32 v) { return v.x; }
__device__ __forceinline__ unsigned int fold(uint2 v) { return v.x ^ v.y; }
__device__ __forceinline__ unsigned int fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }
// listing: bank
template <typename T>
__device__ void bank_body(const int* __restrict__ lane_offset_bytes, unsigned int* __restrict__ out,
                          int smem_words) {
    extern __shared__ __align__(16) unsigned char smem[];
    unsigned int* words = reinterpret_cast<unsigned int*>(smem);
    for (int k = threadIdx.x; k < smem_words; k += blockDim.x) words[k] = k;  // stores only
    __syncthreads();
    int lane = threadIdx.x & 31;
    int off = lane_offset_bytes[lane];
    T v = *reinterpret_cast<const T*>(smem + off);  // the one shared load per warp
    out[blockIdx.x * blockDim.x + threadIdx.x] = fold(v);
}
#define BANK(NAME, T) extern "C" __global__ void NAME(const int* offs, unsigned int* out, int words) { \
    bank_body<T>(offs, out, words); }
// end listing: bank
BANK(bank_2, u16)
BANK(bank_4, u32)
BANK(bank_8, uint2)
BANK(bank_16, uint4)
"""

#: Shared-memory buffer of the bank kernels (bytes): large enough for 64 rows of 72 halves and more.
BANK_SMEM_BYTES = 16384


def bank_cases() -> list[dict]:
    """The shared-memory access patterns: per-lane byte offsets and the access width (bytes)."""
    lanes = range(32)
    cases = []

    def add(name, width, offsets, note):
        offsets = [int(o) for o in offsets]
        assert len(offsets) == 32 and all(o % width == 0 and 0 <= o <= BANK_SMEM_BYTES - width for o in offsets)
        cases.append({"case": name, "access_bytes": width, "lane_offsets_bytes": offsets, "note": note})

    add("fp32 row (unit stride)", 4, [4 * l for l in lanes], "float s[32][32], lane l reads s[0][l]")
    add("fp32 stride 2 words", 4, [8 * l for l in lanes], "lane l reads word 2l")
    add("fp32 stride 3 words", 4, [12 * l for l in lanes], "odd stride: a permutation of banks")
    add("fp32 column of [32][32]", 4, [128 * l for l in lanes], "lane l reads s[l][0]")
    add("fp32 column of [32][33]", 4, [132 * l for l in lanes], "padding one word per row")
    add("fp32 broadcast", 4, [0 for _ in lanes], "every lane reads word 0")
    add("fp32 two words, one bank", 4, [128 * (l % 2) for l in lanes], "words 0 and 32 only")
    add("fp32 bank permutation", 4, [4 * ((l * 13 + 5) % 32) for l in lanes], "a permutation of words 0-31")
    add("fp16 row (unit stride)", 2, [2 * l for l in lanes], "two lanes share each word")
    for pad in (0, 2, 8):
        add(f"fp16 column of [64][{64 + pad}]", 2, [2 * (64 + pad) * l for l in lanes],
            f"half s[64][{64 + pad}], lane l reads s[l][0]")
    add("fp16 column 9 of [64][72]", 2, [2 * (72 * l + 9) for l in lanes], "another column, same conflict")
    add("fp16 column of [64][64], XOR swizzle", 2, [128 * l + 16 * (l % 8) for l in lanes],
        "16-byte chunk c of row r stored at chunk c ^ (r mod 8)")
    add("fp32x2 row", 8, [8 * l for l in lanes], "8-byte accesses, contiguous")
    add("fp32x2 stride 2", 8, [16 * l for l in lanes], "8-byte accesses 16 bytes apart")
    add("16-byte row", 16, [16 * l for l in lanes], "16-byte accesses, contiguous")
    for pad in (0, 8):
        add(f"16-byte row starts of [64][{64 + pad}] fp16", 16,
            [2 * (64 + pad) * (l % 8) + 16 * (l // 8) for l in lanes],
            "ldmatrix-like: 8 lanes read 16 bytes of 8 consecutive rows")
        add(f"16-byte column of [64][{64 + pad}] fp16", 16, [2 * (64 + pad) * l for l in lanes],
            "lane l reads 16 bytes at the start of row l")
    add("16-byte column of [64][64] fp16, XOR swizzle", 16, [128 * l + 16 * (l % 8) for l in lanes],
        "chunk 0 of row l stored at chunk (l mod 8)")
    return cases


def coalescing_cases() -> list[dict]:
    """Global-load patterns: element size, stride and offset (in elements), pattern."""
    cases = []
    for stride in range(1, 33):
        cases.append({"element_bytes": 4, "stride": stride, "offset": 0, "pattern": "strided"})
    for offset in (1, 2, 4, 7, 8, 16, 31, 32):
        cases.append({"element_bytes": 4, "stride": 1, "offset": offset, "pattern": "strided"})
    for eb in (1, 2, 8, 16):
        for stride in (1, 2, 4):
            cases.append({"element_bytes": eb, "stride": stride, "offset": 0, "pattern": "strided"})
    cases.append({"element_bytes": 8, "stride": 1, "offset": 1, "pattern": "strided"})
    cases.append({"element_bytes": 2, "stride": 1, "offset": 3, "pattern": "strided"})
    for pattern in ("broadcast", "warp_permutation", "hashed_gather"):
        cases.append({"element_bytes": 4, "stride": 1, "offset": 0, "pattern": pattern})
    return cases


PATTERN_CODES = {"strided": 0, "broadcast": 1, "warp_permutation": 2, "hashed_gather": 3}
#: Launch shape of the counted coalescing kernels: 16 blocks of 256 threads = 128 warps.
COUNT_THREADS = 4096
COUNT_BLOCK = 256
#: The hashed gather draws from this many elements.
GATHER_ELEMENTS = 1 << 20


def _log(*args):
    print(*args, file=sys.stderr, flush=True)


def run_counters(out: Path) -> None:
    """Launch every coalescing and bank case once (ncu wraps this process and reads the counters)."""
    import cupy as cp

    cmod = cp.RawModule(code=COALESCE_SRC, options=("--std=c++17",))
    bmod = cp.RawModule(code=BANK_SRC, options=("--std=c++17",))
    flag = cp.zeros(1, dtype=cp.int32)
    src = cp.zeros(64 * 1024 * 1024, dtype=cp.uint8)  # 64 MiB, zeros: never a sentinel
    launches = []
    for case in coalescing_cases():
        eb = case["element_bytes"]
        k = cmod.get_function(f"coalesce_{eb}")
        n_elements = GATHER_ELEMENTS
        need = (case["offset"] + (COUNT_THREADS - 1) * case["stride"] + 1) * eb
        assert need <= src.nbytes and GATHER_ELEMENTS * eb <= src.nbytes
        k((COUNT_THREADS // COUNT_BLOCK,), (COUNT_BLOCK,),
          (src, flag, cp.int64(COUNT_THREADS), cp.int64(case["offset"]), cp.int64(case["stride"]),
           cp.int32(PATTERN_CODES[case["pattern"]]), cp.int64(n_elements)))
        launches.append({"kind": "coalescing", "kernel": f"coalesce_{eb}", **case,
                         "n_threads": COUNT_THREADS, "block": COUNT_BLOCK,
                         "gather_elements": GATHER_ELEMENTS})
    bank_block = 128  # 4 warps, each with the same per-lane offsets
    outb = cp.zeros(bank_block, dtype=cp.uint32)
    for case in bank_cases():
        k = bmod.get_function(f"bank_{case['access_bytes']}")
        offs = cp.asarray(case["lane_offsets_bytes"], dtype=cp.int32)
        k((1,), (bank_block,), (offs, outb, cp.int32(BANK_SMEM_BYTES // 4)), shared_mem=BANK_SMEM_BYTES)
        launches.append({"kind": "bank", "kernel": f"bank_{case['access_bytes']}", **case,
                         "warps": bank_block // 32})
    cp.cuda.runtime.deviceSynchronize()
    (out / "launches.json").write_text(json.dumps(launches, indent=1))  # profile.read_launches reads it
    _log(f"launched {len(launches)} counted kernels")


def run_bandwidth(out: Path) -> None:
    """Achieved load bandwidth of 4-byte strided loads, stride 1-32, timed with CUDA events."""
    import cupy as cp

    from gpuperf.benchmark import event_times_s

    cmod = cp.RawModule(code=COALESCE_SRC, options=("--std=c++17",))
    k = cmod.get_function("coalesce_4")
    n_threads = 1 << 25  # 128 MiB of useful 4-byte loads: well past the 50 MB L2
    max_stride = 32
    src = cp.zeros(n_threads * max_stride, dtype=cp.float32)  # 4 GiB
    flag = cp.zeros(1, dtype=cp.int32)
    block = 256

    def time_once(fn, reps=10):
        """Median and sorted event times of ``reps`` calls after two untimed ones."""
        times = sorted(event_times_s(fn, reps=reps, warmup_calls=2, backend="cupy"))
        return times[len(times) // 2], times

    rows = []
    # same-run reference: a device-to-device copy of 1 GiB (bytes read + written)
    a = cp.zeros(1 << 28, dtype=cp.float32)
    b = cp.empty_like(a)
    t_copy, _ = time_once(lambda: b.__setitem__(Ellipsis, a))
    rows.append({"case": "copy", "time_s": t_copy, "bytes_moved": 2 * a.nbytes,
                 "bytes_per_s": 2 * a.nbytes / t_copy})
    del a, b
    for stride in range(1, max_stride + 1):
        args = (src, flag, cp.int64(n_threads), cp.int64(0), cp.int64(stride), cp.int32(0), cp.int64(0))
        t, times = time_once(lambda: k((n_threads // block,), (block,), args))
        rows.append({"case": "strided_load", "element_bytes": 4, "stride": stride, "n_threads": n_threads,
                     "time_s": t, "times_s": times, "bytes_used": 4 * n_threads,
                     "useful_bytes_per_s": 4 * n_threads / t})
        _log(f"stride {stride}: {t * 1e3:.3f} ms, useful {4 * n_threads / t / 1e9:.1f} GB/s")
    (out / "bandwidth.json").write_text(json.dumps(rows, indent=1))


# ------------------------------------------------------------------------------------------------
# Host-link bandwidth, for the hierarchy figure. (Latencies are not measured here: the course has one
# latency method, the pointer chase of bench/part1_gpu.py, whose pointer_chase_h200.json every chapter
# reads.)
# ------------------------------------------------------------------------------------------------
def run_latency(out: Path) -> None:
    """Pinned host <-> device copies of 1 GiB (the mode keeps its name; ``all`` runs it)."""
    import cupy as cp

    from gpuperf.benchmark import event_times_s

    rows = []
    # host link: pinned host <-> device copies of 1 GiB
    import cupyx

    nbytes = 1 << 30
    host = cupyx.empty_pinned((nbytes,), dtype=cp.uint8)
    dev = cp.empty(nbytes, dtype=cp.uint8)
    copies = {"host_to_device": lambda: dev.set(host), "device_to_host": lambda: dev.get(out=host)}
    for direction in ("host_to_device", "device_to_host"):
        times = event_times_s(copies[direction], reps=3, backend="cupy")
        rows.append({"level": "host", "direction": direction, "bytes": nbytes, "time_s": min(times),
                     "bytes_per_s": nbytes / min(times)})
    for r in rows:
        _log(r)
    (out / "latency.json").write_text(json.dumps(rows, indent=1))


# ------------------------------------------------------------------------------------------------
# Occupancy
# ------------------------------------------------------------------------------------------------
OCC_SRC = REGISTER_HUNGRY_SOURCE + r"""
#define HUNGRY(N) extern "C" __global__ void occ_regs_##N(const float* in, float* out, int n) { \
    hungry<N>(in, out, n); }
HUNGRY(4)
HUNGRY(16)
HUNGRY(32)
HUNGRY(64)
HUNGRY(128)
HUNGRY(256)
extern "C" __global__ void __launch_bounds__(1024) occ_lb_1024(const float* in, float* out, int n) {
    hungry<64>(in, out, n); }
extern "C" __global__ void __launch_bounds__(256, 4) occ_lb_256x4(const float* in, float* out, int n) {
    hungry<128>(in, out, n); }
#define SMEM(BYTES) extern "C" __global__ void occ_smem_##BYTES(const float* in, float* out, int n) { \
    __shared__ float buf[BYTES / 4]; \
    for (int k = threadIdx.x; k < BYTES / 4; k += blockDim.x) buf[k] = in[k % n]; \
    __syncthreads(); \
    out[blockIdx.x * blockDim.x + threadIdx.x] = buf[(threadIdx.x * 7) % (BYTES / 4)]; }
SMEM(1024)
SMEM(4096)
SMEM(12288)
SMEM(40000)
SMEM(49152)
extern "C" __global__ void occ_dynamic(const float* in, float* out, int n) {
    extern __shared__ float dyn[];
    dyn[threadIdx.x] = in[threadIdx.x % n];
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = dyn[(threadIdx.x * 7) % blockDim.x];
}
"""
OCC_KERNELS = ("occ_regs_4", "occ_regs_16", "occ_regs_32", "occ_regs_64", "occ_regs_128", "occ_regs_256", "occ_lb_1024",
               "occ_lb_256x4", "occ_smem_1024", "occ_smem_4096", "occ_smem_12288", "occ_smem_40000",
               "occ_smem_49152", "occ_dynamic")
OCC_OPTIONS = {"default": (), "maxrregcount=24": ("--maxrregcount=24",), "maxrregcount=40": ("--maxrregcount=40",),
               "maxrregcount=72": ("--maxrregcount=72",), "maxrregcount=128": ("--maxrregcount=128",),
               "maxrregcount=168": ("--maxrregcount=168",)}
OCC_BLOCKS = (1, 32, 33, 64, 96, 100, 128, 192, 256, 320, 384, 512, 640, 768, 1000, 1024, 1025)
OCC_DYNAMIC = (0, 1, 1000, 4096, 10000, 20000, 40000, 49152, 65536, 100000, 116000, 150000, 200000,
               227 * 1024, 228 * 1024)

# cudaDeviceAttr numbers (CUDA runtime API, cudaDeviceAttr enum)
DEVICE_ATTRS = {
    "max_threads_per_block": 1, "max_shared_memory_per_block": 8, "max_registers_per_block": 12,
    "warp_size": 10, "multiprocessor_count": 16, "max_threads_per_multiprocessor": 39,
    "compute_capability_major": 75, "compute_capability_minor": 76,
    "max_shared_memory_per_multiprocessor": 81, "max_registers_per_multiprocessor": 82,
    "max_shared_memory_per_block_optin": 97, "max_blocks_per_multiprocessor": 106,
    "reserved_shared_memory_per_block": 111,
}


def _occupancy_query(cp, func_ptr, block, dyn):
    try:
        return {"blocks_per_sm": int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(func_ptr, block, dyn))}
    except Exception as exc:  # record the API's refusal as data
        return {"blocks_per_sm": None, "error": f"{type(exc).__name__}: {exc}"}


def run_occupancy(out: Path) -> None:
    import cupy as cp

    device = {}
    for name, number in DEVICE_ATTRS.items():
        try:
            device[name] = int(cp.cuda.runtime.deviceGetAttribute(number, 0))
        except Exception as exc:
            device[name] = f"error: {exc}"
    props = cp.cuda.runtime.getDeviceProperties(0)
    device["name"] = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    rows = []
    for opt_name, options in OCC_OPTIONS.items():
        mod = cp.RawModule(code=OCC_SRC, options=("--std=c++17",) + options)
        for kname in OCC_KERNELS:
            k = mod.get_function(kname)
            ptr = k.kernel.ptr if hasattr(k, "kernel") else k.ptr
            attrs = dict(k.attributes)
            # queries with the default per-block limit (48 KiB) first, then opted in to the maximum
            default_rows = []
            for dyn in (0, 40000, 49152 - attrs["shared_size_bytes"], 49152 - attrs["shared_size_bytes"] + 1,
                        65536):
                default_rows.append({"block_size": 256, "dynamic_smem_bytes": dyn,
                                     **_occupancy_query(cp, ptr, 256, dyn)})
            optin = device["max_shared_memory_per_block_optin"] - attrs["shared_size_bytes"]
            try:
                k.max_dynamic_shared_size_bytes = optin
            except Exception:
                cp.cuda.driver.funcSetAttribute(ptr, 8, optin)  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            attrs_after = dict(k.attributes)
            queries = []
            for block in OCC_BLOCKS:
                for dyn in OCC_DYNAMIC:
                    queries.append({"block_size": block, "dynamic_smem_bytes": dyn,
                                    **_occupancy_query(cp, ptr, block, dyn)})
            rows.append({"kernel": kname, "options": opt_name, "attributes": attrs,
                         "attributes_opted_in": attrs_after, "queries_default_limit": default_rows,
                         "queries": queries})
            _log(f"{opt_name:18s} {kname:16s} regs {attrs['num_regs']:3d} static smem "
                 f"{attrs['shared_size_bytes']:6d} local {attrs.get('local_size_bytes')}")
    triton_rows = []
    try:
        triton_rows = _triton_occupancy(cp)
    except Exception as exc:
        import traceback
        traceback.print_exc()
        triton_rows = [{"error": f"{type(exc).__name__}: {exc}"}]
    (out / "occupancy.json").write_text(json.dumps({"device": device, "kernels": rows, "triton": triton_rows},
                                                   indent=1))


def _triton_occupancy(cp) -> list[dict]:
    """Compile a few Triton kernels, read registers and shared memory from their metadata, ask the API."""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    @triton.jit
    def softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        tl.store(out_ptr + row * n_cols + cols, (e / tl.sum(e, axis=0)).to(out_ptr.dtype.element_ty),
                 mask=cols < n_cols)

    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pm = tl.program_id(0)
        pn = tl.program_id(1)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
            b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))

    dev = "cuda"
    rows = []
    x = torch.randn(1 << 20, device=dev)
    y = torch.randn_like(x)
    o = torch.empty_like(x)
    for block, warps in ((1024, 4), (4096, 8)):
        ck = add_kernel[(x.numel() // block,)](x, y, o, x.numel(), BLOCK=block, num_warps=warps)
        rows.append(_triton_row(cp, "vector add", {"BLOCK": block}, ck))
    s = torch.randn(256, 4096, device=dev, dtype=torch.float16)
    so = torch.empty_like(s)
    for warps in (4, 16):
        ck = softmax_kernel[(s.shape[0],)](s, so, s.shape[1], BLOCK=4096, num_warps=warps)
        rows.append(_triton_row(cp, "softmax row", {"BLOCK": 4096}, ck))
    m = n = k = 1024
    a = torch.randn(m, k, device=dev, dtype=torch.float16)
    b = torch.randn(k, n, device=dev, dtype=torch.float16)
    c = torch.empty(m, n, device=dev, dtype=torch.float16)
    for bm, bn, bk, warps, stages in ((64, 64, 32, 4, 2), (128, 128, 64, 8, 3), (128, 256, 64, 8, 3),
                                      (128, 128, 64, 4, 4)):
        ck = matmul_kernel[(m // bm, n // bn)](a, b, c, m, n, k, BM=bm, BN=bn, BK=bk, num_warps=warps,
                                               num_stages=stages)
        torch.cuda.synchronize()
        ref = (a.double() @ b.double())
        err = (c.double() - ref).abs().max().item()
        row = _triton_row(cp, "matmul", {"BM": bm, "BN": bn, "BK": bk, "num_stages": stages}, ck)
        row["max_abs_error_vs_float64"] = err
        rows.append(row)
    return rows


def _triton_row(cp, name, params, ck) -> dict:
    if getattr(ck, "function", None) is None and hasattr(ck, "_init_handles"):
        ck._init_handles()
    md = ck.metadata
    num_warps = int(md.num_warps)
    shared = int(md.shared)
    row = {"kernel": name, "params": params, "num_warps": num_warps, "n_regs": int(ck.n_regs),
           "n_spills": int(getattr(ck, "n_spills", -1)), "metadata_shared_bytes": shared,
           "num_ctas": int(getattr(md, "num_ctas", 1))}
    func = int(ck.function)
    for label, attr in (("driver_num_regs", 4), ("driver_static_shared_bytes", 1),
                        ("driver_max_dynamic_shared_bytes", 8)):
        try:
            row[label] = int(cp.cuda.driver.funcGetAttribute(attr, func))
        except Exception as exc:
            row[label] = f"error: {exc}"
    row.update(_occupancy_query(cp, func, 32 * num_warps, shared))
    _log(f"triton {name} {params}: warps {num_warps} regs {row['n_regs']} shared {shared} -> "
         f"{row.get('blocks_per_sm')} blocks/SM")
    return row


# ------------------------------------------------------------------------------------------------
# Collect: parse ncu's CSV, pair rows with launches, save with provenance
# ------------------------------------------------------------------------------------------------
def ncu_command(out: Path) -> list[str]:
    """The ncu command line of the ``counters`` mode: every coalescing and bank kernel from the start."""
    from gpuperf.benchmark import profile

    program = [sys.executable, __file__, "counters", str(out)]
    return profile.ncu_command(program, sections=(), metrics=METRICS, window=False, base_units=True,
                               kernel_regex="^(coalesce|bank)_")


def run_collect(out: Path, data_dir: Path | None = None) -> None:
    """Pair ``out/ncu.csv`` with ``out/launches.json`` and save the four records into ``data_dir``
    (default: ``out``)."""
    from gpuperf.benchmark import profile
    from gpuperf.records import provenance, save_run

    data_dir = out if data_dir is None else data_dir
    launches = profile.read_launches(out / "launches.json")
    profiled = profile.parse_ncu_csv((out / "ncu.csv").read_text())
    pairs = profile.pair_launches(launches, profiled,
                                  lambda launch, kernel: launch["kernel"] == kernel.split("(")[0].strip())
    coalescing, banks = [], []
    for launch, prof in pairs:
        row = {**launch, "ncu": profile.metric_values(prof)}
        (coalescing if launch["kind"] == "coalescing" else banks).append(row)
    cmd = "bench/memory_gpu.py (occupancy, counters under ncu --clock-control none, bandwidth)"
    prov = provenance(cmd)
    try:
        import cupy
        prov["cupy"] = cupy.__version__
    except ImportError:
        pass
    ncu_version = (out / "ncu_version.txt")
    if ncu_version.is_file():
        prov["ncu"] = ncu_version.read_text().strip().splitlines()[-1]
    save_run("memory_coalescing_h200", coalescing + json.loads((out / "bandwidth.json").read_text()), prov,
             data_dir=data_dir)
    save_run("memory_banks_h200", banks, prov, data_dir=data_dir)
    if (out / "latency.json").is_file():
        save_run("memory_latency_h200", json.loads((out / "latency.json").read_text()), prov, data_dir=data_dir)
    occ = json.loads((out / "occupancy.json").read_text())
    save_run("memory_occupancy_h200", [occ], prov, data_dir=data_dir)
    _log(f"saved memory_coalescing_h200, memory_banks_h200, memory_occupancy_h200 into {data_dir}")


def run_all(out: Path, data_dir: Path | None = None) -> None:
    """Every mode in order: occupancy, the counters under ncu, bandwidth, latency, then collect."""
    from gpuperf.benchmark import profile

    run_occupancy(out)
    version = subprocess.run(["ncu", "--version"], capture_output=True, text=True, check=True).stdout
    (out / "ncu_version.txt").write_text(version)
    profile.run_ncu(ncu_command(out), out / "ncu.csv")
    run_bandwidth(out)
    run_latency(out)
    run_collect(out, data_dir)


MODES = ("all", "occupancy", "counters", "bandwidth", "latency", "collect")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("out", type=Path, help="folder for the raw results (RAW)")
    parser.add_argument("--out-dir", type=Path, default=None,
                        help="all, collect: folder for the records (default: RAW)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.mode in ("all", "collect"):
        {"all": run_all, "collect": run_collect}[args.mode](args.out, args.out_dir)
    else:
        {"counters": run_counters, "bandwidth": run_bandwidth, "occupancy": run_occupancy,
         "latency": run_latency}[args.mode](args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
