"""Row softmax in Gluon for Hopper: the row staged in shared memory by TMA, loads issued rows ahead.

Why this kernel exists. The plain Triton softmax (:mod:`gpuperf.kernels.softmax`) holds a row in registers
while it waits for it, so few programs fit on an SM and each keeps too few bytes in flight: by Little's law
an SM of the H200 needs about 31 KB in flight (4.1 TB/s over 132 SMs times ~1 us of latency), and rows of
32000-65536 values reach only 0.66-0.74 of a copy's speed there (bench/NOTES.md). Here the row lives in
*shared memory* instead: a persistent program per SM keeps a ring of chunk slots, and TMA copies fill free
slots with the chunks of the rows it will reduce next while it reduces the current one, so tens of KB stay
in flight whatever the arithmetic is doing. Each element is read from HBM once and written once.

One program (``num_warps`` warps, one or more per SM) walks rows ``pid, pid + P, ...``. Its rows form one
stream of chunks ``g = 0, 1, ...`` (``chunks_per_row`` per row); chunk ``g`` goes to ring slot ``g % slots``
and its TMA completion to that slot's mbarrier, whose phase parity is ``(g // slots) & 1``. A slot is
refilled (with chunk ``g + slots``) as soon as the last read of chunk ``g`` is done. Two schedules
(:data:`SCHEDULES`):

* ``"pipelined"`` (the default): software-pipelined over rows. Step ``j`` of the loop for row ``r``
  normalises chunk ``j`` of row ``r - 1`` (``y = exp(x - m) / l``, stored from registers; its slot goes
  back to TMA) and folds chunk ``j`` of row ``r`` into running statistics kept per 16-byte vector position
  (``m' = max(m, max of the vector)``, ``l' = l exp(m - m') + sum exp(x - m')``: one exponential per value
  and one per vector); the row's maximum and sum are merged from them once the row is folded. A slot is
  freed, and a chunk requested, at every step, so reads stream without pause; shared memory is read twice.
* ``"three_pass"``: per row, a pass for the maximum, one for ``l = sum(exp(x - m))`` and one that
  normalises, stores and frees the slots; no slot is freed during the first two passes, so the reads come
  in bursts (on the H200, with one program per SM, it reached only 0.60-0.70 of a copy's speed at
  32000-65536 columns; bench/NOTES.md). ``store_exp=True`` writes ``exp(x - m)`` back into the slot in
  the second pass, so the third only scales it.

Exponentials are the scarce resource of an SM here (16 per clock, against 128 bytes = 64 fp16 values per
clock from shared memory), which is why the running statistics are per vector rather than per value (an
online update per value costs a second exponential). Columns past the row's end (TMA fills them with
zeros) are masked to ``-inf``. HBM bytes: ``2 n b`` per row (read once, write once), as a copy.

Addressing. TMA needs 16-byte-aligned row strides. Rows that have them are read through a 2-D descriptor
``[n_rows, n_cols]`` with blocks of ``[1, chunk_cols]``; stores are 16-byte vectors. Other rows (a row
stride of 50257 fp16 values, say) are read through a *flat* view of the whole matrix, one long 2-D row
``[1, (n_rows - 1) * stride + n_cols]``: a row's chunks start at the 16-byte boundary at or before the row's
first element (TMA then reads up to 7 neighbouring values, masked), and stores go one element per thread
(16-byte vectors are impossible at such addresses).

The host side is pure functions (:func:`chunk_plan`, :func:`grid_size`, :func:`bytes_in_flight_per_sm`),
tested on the CPU. The kernel needs ``triton.experimental.gluon`` (Triton 3.5+; written for the H200's
Triton 3.6 and compiled on the CPU with 3.9, whose Gluon renamed a few calls: :data:`_tma_load`,
:data:`_cta_barrier`) and a Hopper GPU; :func:`available` says whether this process can run it and why not.
Gluon kernels do not run under the Triton interpreter.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers

import torch

from gpuperf.hardware import get_sm_limits
from gpuperf.kernels import _checks, interpreter_enabled

INTERPRETED = interpreter_enabled()

DTYPE_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}

#: Bytes of one chunk (one ring slot, one TMA block of ``[1, chunk_cols]``) unless the caller sets
#: ``chunk_cols``: 4096 fp16/bf16 or 2048 fp32 values.
CHUNK_BYTES = 8192

#: How a program orders its work on a row (module docstring): ``"pipelined"`` (the default) or
#: ``"three_pass"``.
SCHEDULES = ("pipelined", "three_pass")

#: Warps per program.
NUM_WARPS = 8

#: At most this many programs per SM (each with its own ring).
MAX_PROGRAMS_PER_SM = 4

#: Chunks a program's ring should hold ahead of the row it works on (32 KiB, Little's law's ~31 KB).
MIN_LOOKAHEAD_CHUNKS = 4

#: Bytes a lone program's ring should keep ahead of its row for :func:`default_launch` to take 16 KiB
#: chunks rather than 8 KiB (at 100000 fp16 columns 16 KiB chunks leave 16 KiB ahead and measured below
#: 8 KiB chunks with 24 KiB ahead).
ONE_PROGRAM_AHEAD_BYTES = 64 * 1024

#: Shared memory a program leaves for the compiler's own scratch (the cross-warp step of the two
#: reductions) besides the ring and its mbarriers.
SCRATCH_BYTES = 1024

#: Bytes per mbarrier (one per slot).
MBARRIER_BYTES = 8

#: TMA: row strides and the base address must be multiples of this many bytes.
TMA_ALIGN_BYTES = 16

#: TMA coordinates are signed 32-bit integers: the flat view must stay below this many elements.
MAX_FLAT_ELEMENTS = 2**31 - 1

try:  # Gluon: only where this Triton has it; the module imports without it
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    _IMPORT_ERROR = ""
except Exception as exc:  # noqa: BLE001 - any failure means "no Gluon here", with the reason kept
    gluon = gl = fence_async_shared = mbarrier = tma = TensorDescriptor = None
    _IMPORT_ERROR = f"{type(exc).__name__}: {exc}"

if gl is not None:
    # The same operations under the names of Triton 3.6 (the H200) and of later versions (3.9 here):
    # a TMA load into shared memory, and a barrier of all threads of the program.
    _tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
    _cta_barrier = getattr(gl, "barrier", None) or gl.thread_barrier


@dataclasses.dataclass(frozen=True)
class Availability:
    """Whether the Gluon kernel can run in this process; ``reason`` says why not (empty when it can).
    True in a boolean context exactly when it can run."""

    ok: bool
    reason: str

    def __bool__(self) -> bool:
        return self.ok


def available(device: int | str | torch.device | None = None) -> Availability:
    """Can :func:`softmax` run here? Needs Gluon, compiled kernels (not the interpreter), CUDA and a Hopper
    GPU (compute capability 9.x) as ``device`` (default: the current one)."""
    if gl is None:
        return Availability(False, f"triton.experimental.gluon does not import ({_IMPORT_ERROR})")
    if INTERPRETED:
        return Availability(False, "the Triton interpreter is on (TRITON_INTERPRET): it does not run Gluon")
    if not torch.cuda.is_available():
        return Availability(False, "torch sees no CUDA GPU")
    major, minor = _device_facts(_device_index(device))[0]
    if major != 9:
        return Availability(False, f"the kernel uses Hopper's TMA and shared-memory budget (compute "
                                   f"capability 9.x); this GPU is {major}.{minor}")
    return Availability(True, "")


def _device_index(device) -> int:
    if isinstance(device, torch.device) and device.index is not None:
        return device.index
    if isinstance(device, int):
        return device
    index = torch.device(device).index if device is not None else None
    return torch.cuda.current_device() if index is None else index


@functools.lru_cache(maxsize=None)
def _device_facts(index: int) -> tuple[tuple[int, int], int]:
    """(compute capability, SM count) of CUDA device ``index``, asked once: every call of :func:`softmax`
    needs both, and the host time of a call is part of what it costs (bench/NOTES.md)."""
    sm_count = torch.cuda.get_device_properties(index).multi_processor_count
    return torch.cuda.get_device_capability(index), sm_count


def usable_for(x: torch.Tensor) -> Availability:
    """Can :func:`softmax` take ``x`` with its default launch? :func:`available` for ``x``'s device and,
    if so, every check :func:`softmax` makes (dtype, layout, alignment, rows that fit); never raises."""
    try:
        _check_input("x", x)
        status = available(x.device)
        if not status:
            return status
        if x.shape[0] > 1 and x.stride(0) < x.shape[1]:
            return Availability(False, f"rows overlap (row stride {x.stride(0)} < {x.shape[1]} columns)")
        if x.numel():
            plan_for(x)
    except ValueError as exc:
        return Availability(False, str(exc))
    return Availability(True, "")


def softmax_reference(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension in float64 on the CPU (the accuracy reference)."""
    return torch.softmax(x.detach().to(device="cpu", dtype=torch.float64), dim=-1)


# ---- host side: pure functions ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ChunkPlan:
    """How a row of ``n_cols`` values is staged (all sizes per program unless named per SM).

    chunk_cols: values per chunk: one ring slot and one TMA block ``[1, chunk_cols]``.
    chunks_per_row: chunks a row spans (with the flat view, up to ``vector_cols - 1`` extra values in front).
    slots: ring slots of the program; ``slots >= chunks_per_row`` (the whole row is resident).
    lookahead_chunks: ``slots - chunks_per_row``: chunks of later rows loading while a row is reduced.
    programs_per_sm: programs (rings) sharing one SM.
    shared_bytes: the ring plus its mbarriers, per program.
    flat: rows read through the flat view (their stride is not a multiple of 16 bytes).
    vector_cols: values per 16-byte vector (8 for fp16/bf16, 4 for fp32).
    num_warps: warps per program.
    """

    n_cols: int
    bytes_per_element: int
    chunk_cols: int
    chunks_per_row: int
    slots: int
    lookahead_chunks: int
    programs_per_sm: int
    shared_bytes: int
    flat: bool
    vector_cols: int
    num_warps: int = NUM_WARPS

    @property
    def chunk_bytes(self) -> int:
        return self.chunk_cols * self.bytes_per_element


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def shared_bytes_per_program(programs_per_sm: int, device: str = "H200 SXM") -> int:
    """Shared memory one of ``programs_per_sm`` programs may use on an SM of ``device``: its share of the
    SM's shared memory less the 1 KiB the hardware reserves per block, at most the per-block maximum, less
    :data:`SCRATCH_BYTES` for the compiler's scratch. 227 KiB - 1 KiB on an H200 for one program."""
    programs_per_sm = _check_int("programs_per_sm", programs_per_sm, 1)
    lim = get_sm_limits(device)
    share = lim.shared_memory_per_sm_bytes // programs_per_sm - lim.reserved_shared_memory_per_block_bytes
    return min(share, lim.max_shared_memory_per_block_bytes) - SCRATCH_BYTES


def chunk_plan(n_cols: int, bytes_per_element: int, *, flat: bool = False, chunk_cols: int | None = None,
               programs_per_sm: int | None = None, num_warps: int = NUM_WARPS,
               device: str = "H200 SXM") -> ChunkPlan:
    """The chunk size, ring slots and programs per SM for rows of ``n_cols`` values of ``bytes_per_element``
    bytes on ``device``; raises ``ValueError`` when a row does not fit in one program's shared memory.

    ``chunk_cols`` defaults to :data:`CHUNK_BYTES` worth of values; it must be a power of two and cover one
    16-byte vector per thread (``vector_cols * 32 * num_warps``). ``programs_per_sm`` defaults to the most
    programs (at most :data:`MAX_PROGRAMS_PER_SM`) whose rings each hold a row and, ahead of it, at least
    :data:`MIN_LOOKAHEAD_CHUNKS` chunks and half a row; one program when none does. (On the H200, two
    programs per SM with 13 slots each beat one with 28 at 32000 columns: bench/NOTES.md.)
    """
    n_cols = _check_int("n_cols", n_cols, 1)
    if bytes_per_element not in (2, 4):
        raise ValueError(f"bytes_per_element must be 2 (fp16, bf16) or 4 (fp32), got {bytes_per_element!r}")
    num_warps = _check_int("num_warps", num_warps, 1)
    if num_warps & (num_warps - 1) or num_warps > 32:
        raise ValueError(f"num_warps must be a power of two from 1 to 32, got {num_warps}")
    vector_cols = TMA_ALIGN_BYTES // bytes_per_element
    if chunk_cols is None:
        chunk_cols = max(CHUNK_BYTES // bytes_per_element, vector_cols * 32 * num_warps)
    chunk_cols = _check_int("chunk_cols", chunk_cols, 1)
    if chunk_cols & (chunk_cols - 1) or chunk_cols < vector_cols * 32 * num_warps:
        raise ValueError(f"chunk_cols must be a power of two >= {vector_cols * 32 * num_warps} (one "
                         f"16-byte vector per thread of {num_warps} warps), got {chunk_cols}")
    chunk_bytes = chunk_cols * bytes_per_element
    # The flat view starts a row's first chunk up to vector_cols - 1 values early (the 16-byte boundary).
    chunks = math.ceil((n_cols + (vector_cols - 1 if flat else 0)) / chunk_cols)

    def slots_for(k: int) -> int:
        return shared_bytes_per_program(k, device) // (chunk_bytes + MBARRIER_BYTES)

    if programs_per_sm is None:
        wanted = chunks + max(MIN_LOOKAHEAD_CHUNKS, chunks // 2)
        fitting = [k for k in range(1, MAX_PROGRAMS_PER_SM + 1) if slots_for(k) >= wanted]
        programs_per_sm = max(fitting, default=1)
    programs_per_sm = _check_int("programs_per_sm", programs_per_sm, 1)
    slots = slots_for(programs_per_sm)
    if slots < chunks:
        max_cols = slots_for(1) * chunk_cols - (vector_cols - 1 if flat else 0)
        raise ValueError(f"n_cols: a row of {n_cols} values of {bytes_per_element} bytes needs {chunks} "
                         f"chunks of {chunk_bytes} bytes, but {programs_per_sm} program(s) per SM of the "
                         f"{device} leave room for {slots} (rows up to {max_cols} values fit one SM's shared "
                         f"memory; use gpuperf.kernels.softmax for longer rows)")
    return ChunkPlan(n_cols=n_cols, bytes_per_element=bytes_per_element, chunk_cols=chunk_cols,
                     chunks_per_row=chunks, slots=slots, lookahead_chunks=slots - chunks,
                     programs_per_sm=programs_per_sm, shared_bytes=slots * (chunk_bytes + MBARRIER_BYTES),
                     flat=flat, vector_cols=vector_cols, num_warps=num_warps)


def default_launch(n_cols: int, bytes_per_element: int, *, flat: bool = False,
                   device: str = "H200 SXM") -> ChunkPlan:
    """The launch :func:`softmax` uses when given no options: the rule the H200 measurements chose.

    Several programs per SM, of 4 warps each with 8 KiB chunks, when their rings each keep a row plus
    max(4, half a row) of chunks ahead (:func:`chunk_plan`'s default). Otherwise one program of 8 warps
    with 16 KiB chunks (fewer, larger TMA requests and fewer barriers) when its ring keeps
    :data:`ONE_PROGRAM_AHEAD_BYTES` ahead, else 8 KiB chunks (rows near the limit: finer chunks waste less
    of the ring). Measured (H200, pipelined schedule, ratio to a copy, fp16 / bf16, interleaved rounds;
    bench/NOTES.md, gluon run 4): 4096 x 32000, 2 programs of 4 warps 0.887 / 0.883 (8 warps 0.870 /
    0.870, 16 warps 0.868 / 0.852); 2048 x 40000, 16 KiB chunks 0.870 / 0.861 (32 KiB 0.801 / 0.778,
    8 KiB 0.733 / 0.726); 2048 x 65536, 16 KiB 0.859 / 0.868 (32 KiB 0.864 / 0.867, 8 KiB 0.863 / 0.836);
    1024 x 100000, 8 KiB 0.745 / 0.736 (16 KiB 0.730 / 0.726, 32 KiB 0.578 / 0.568).
    """
    several = chunk_plan(n_cols, bytes_per_element, flat=flat, num_warps=4, device=device)
    if several.programs_per_sm > 1:
        return several
    try:
        big = chunk_plan(n_cols, bytes_per_element, flat=flat,
                         chunk_cols=2 * CHUNK_BYTES // bytes_per_element, programs_per_sm=1, num_warps=8,
                         device=device)
    except ValueError:  # the row does not fit in 16 KiB chunks (rounding up wastes up to one)
        big = None
    if big is not None and big.lookahead_chunks * big.chunk_bytes >= ONE_PROGRAM_AHEAD_BYTES:
        return big
    return chunk_plan(n_cols, bytes_per_element, flat=flat, programs_per_sm=1, num_warps=8, device=device)


def grid_size(n_rows: int, sm_count: int, programs_per_sm: int) -> int:
    """Programs of the persistent grid: ``programs_per_sm`` per SM, never more than there are rows."""
    n_rows = _check_int("n_rows", n_rows, 1)
    sm_count = _check_int("sm_count", sm_count, 1)
    programs_per_sm = _check_int("programs_per_sm", programs_per_sm, 1)
    return min(n_rows, sm_count * programs_per_sm)


def bytes_in_flight_per_sm(plan: ChunkPlan) -> int:
    """The most bytes of HBM reads an SM has requested ahead of the row it reduces: every program's
    lookahead slots full of requested chunks (the Little's-law figure to compare with ~31 KB on an H200)."""
    return plan.programs_per_sm * plan.lookahead_chunks * plan.chunk_bytes


def uses_flat_view(row_stride: int, bytes_per_element: int) -> bool:
    """True when rows ``row_stride`` values apart cannot be a TMA dimension (stride not a multiple of 16
    bytes), so the kernel reads them through the flat view."""
    return (row_stride * bytes_per_element) % TMA_ALIGN_BYTES != 0


# ---- the kernel ------------------------------------------------------------------------------------------

if gl is not None:

    @gluon.jit
    def _issue(x_desc, ring, bars, g, pid, nprog, n_rows, stride_x, CHUNK: gl.constexpr,
               CHUNKS: gl.constexpr, SLOTS: gl.constexpr, CHUNK_BYTES_: gl.constexpr,
               VEC: gl.constexpr, FLAT: gl.constexpr):
        # Request chunk g of this program's stream (row pid + (g // CHUNKS) * nprog) into slot g % SLOTS;
        # nothing when that row does not exist.
        # listing: gluon-issue
        row = pid + (g // CHUNKS) * nprog
        col = (g % CHUNKS) * CHUNK
        s = g % SLOTS
        bar = bars.index(s)
        live = row < n_rows
        mbarrier.expect(bar, CHUNK_BYTES_, pred=live)  # the bytes TMA will deliver
        if FLAT:
            start = row.to(gl.int64) * stride_x
            aligned = ((start // VEC) * VEC).to(gl.int32)  # flat view: < 2^31 values
            _tma_load(x_desc, [0, aligned + col], bar, ring.index(s), pred=live)
        else:
            _tma_load(x_desc, [row, col], bar, ring.index(s), pred=live)
        # end listing: gluon-issue

    @gluon.jit
    def _softmax_kernel(x_desc, Y, n_rows, n_cols, stride_x, stride_y,
                        CHUNK: gl.constexpr, CHUNKS: gl.constexpr, SLOTS: gl.constexpr,
                        CHUNK_BYTES_: gl.constexpr, VEC: gl.constexpr, FLAT: gl.constexpr,
                        EVEN: gl.constexpr, WARPS: gl.constexpr, STORE_EXP: gl.constexpr):
        # HBM: each row read once (TMA into the ring) and written once (stores from registers): 2 n_cols b.
        LOG2E: gl.constexpr = 1.4426950408889634
        vec_layout: gl.constexpr = gl.BlockedLayout([1, VEC], [1, 32], [1, WARPS], [1, 0])
        # Stores of rows at unaligned addresses: one value per thread, neighbours in neighbouring lanes.
        one_layout: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [1, WARPS], [1, 0])
        pid = gl.program_id(0)
        nprog = gl.num_programs(0)
        ring = gl.allocate_shared_memory(x_desc.dtype, [SLOTS, 1, CHUNK], x_desc.layout)
        bars = gl.allocate_shared_memory(gl.int64, [SLOTS, 1], mbarrier.MBarrierLayout())
        for s in gl.static_range(SLOTS):
            mbarrier.init(bars.index(s), count=1)
        for g in range(SLOTS):  # fill the ring: the first rows' chunks
            _issue(x_desc, ring, bars, g, pid, nprog, n_rows, stride_x, CHUNK, CHUNKS, SLOTS, CHUNK_BYTES_,
                   VEC, FLAT)
        cols = gl.expand_dims(gl.arange(0, CHUNK, layout=gl.SliceLayout(0, vec_layout)), 0)
        cols1 = gl.expand_dims(gl.arange(0, CHUNK, layout=gl.SliceLayout(0, one_layout)), 0)
        i = 0
        for row in range(pid, n_rows, nprog):
            base = i * CHUNKS
            head = 0
            if FLAT:
                start = row.to(gl.int64) * stride_x
                head = (start % VEC).to(gl.int32)  # values in front of the row in its first chunk
            # Pass 1: the maximum, per lane, then across the program.
            m_lane = gl.full([1, CHUNK], float("-inf"), gl.float32, layout=vec_layout)
            for j in range(CHUNKS):
                g = base + j
                mbarrier.wait(bars.index(g % SLOTS), (g // SLOTS) & 1)
                x = ring.index(g % SLOTS).load(vec_layout).to(gl.float32)
                if not EVEN:
                    c = cols + (j * CHUNK - head)
                    x = gl.where((c >= 0) & (c < n_cols), x, float("-inf"))
                m_lane = gl.maximum(m_lane, x)
            m_row = gl.max(gl.max(m_lane, axis=1), axis=0)
            # Pass 2: the sum of exp(x - m), as exp2((x - m) log2(e)) (one MUFU.EX2). Subtracting first
            # keeps fp32 accurate at large x: x log2(e) - m log2(e) would lose the low bits of both.
            l_lane = gl.zeros([1, CHUNK], gl.float32, layout=vec_layout)
            for j in range(CHUNKS):
                g = base + j
                x = ring.index(g % SLOTS).load(vec_layout).to(gl.float32)
                if not EVEN:
                    c = cols + (j * CHUNK - head)
                    x = gl.where((c >= 0) & (c < n_cols), x, float("-inf"))
                e = gl.exp2((x - m_row) * LOG2E)
                l_lane += e
                if STORE_EXP:  # pass 3 reads exp(x - m) instead of recomputing it (rounded to the dtype)
                    ring.index(g % SLOTS).store(e.to(x_desc.dtype))
            inv = 1.0 / gl.sum(gl.sum(l_lane, axis=1), axis=0)
            if STORE_EXP and FLAT:
                _cta_barrier()  # pass 3 reads the slots with another thread-to-value mapping
            # Pass 3: normalise, store, and hand each slot back to TMA for the chunk SLOTS further on.
            y_row = Y + row.to(gl.int64) * stride_y
            for j in range(CHUNKS):
                g = base + j
                if FLAT:
                    c1 = cols1 + (j * CHUNK - head)
                    x = ring.index(g % SLOTS).load(one_layout).to(gl.float32)
                    y = x * inv if STORE_EXP else gl.exp2((x - m_row) * LOG2E) * inv
                    gl.store(y_row + c1, y.to(Y.dtype.element_ty), mask=(c1 >= 0) & (c1 < n_cols))
                else:
                    x = ring.index(g % SLOTS).load(vec_layout).to(gl.float32)
                    y = x * inv if STORE_EXP else gl.exp2((x - m_row) * LOG2E) * inv
                    c = cols + j * CHUNK
                    if EVEN:
                        gl.store(y_row + c, y.to(Y.dtype.element_ty))
                    else:
                        gl.store(y_row + c, y.to(Y.dtype.element_ty), mask=c < n_cols)
                _cta_barrier()  # every warp has read the slot ...
                fence_async_shared()  # ... before TMA (the async proxy) writes it again
                _issue(x_desc, ring, bars, g + SLOTS, pid, nprog, n_rows, stride_x, CHUNK, CHUNKS, SLOTS,
                       CHUNK_BYTES_, VEC, FLAT)
            i += 1
        for s in gl.static_range(SLOTS):
            mbarrier.invalidate(bars.index(s))


if gl is not None:

    @gluon.jit
    def _chunk_values(ring, g, cols, head, n_cols, j, SLOTS: gl.constexpr, CHUNK: gl.constexpr,
                      EVEN: gl.constexpr, layout: gl.constexpr):
        # Chunk g of the stream from its slot, in fp32; -inf outside the row (column j * CHUNK + cols - head).
        x = ring.index(g % SLOTS).load(layout).to(gl.float32)
        if not EVEN:
            c = cols + (j * CHUNK - head)
            x = gl.where((c >= 0) & (c < n_cols), x, float("-inf"))
        return x

    @gluon.jit
    def _row_head(row, stride_x, VEC: gl.constexpr, FLAT: gl.constexpr):
        # Values in front of the row in its first chunk (flat view only).
        head = 0
        if FLAT:
            head = ((row.to(gl.int64) * stride_x) % VEC).to(gl.int32)
        return head

    @gluon.jit
    def _pipelined_kernel(x_desc, Y, n_rows, n_cols, stride_x, stride_y,
                          CHUNK: gl.constexpr, CHUNKS: gl.constexpr, SLOTS: gl.constexpr,
                          CHUNK_BYTES_: gl.constexpr, VEC: gl.constexpr, FLAT: gl.constexpr,
                          EVEN: gl.constexpr, WARPS: gl.constexpr, FAST: gl.constexpr):
        # HBM: each row read once (TMA into the ring) and written once (stores from registers): 2 n_cols b.
        # Software-pipelined over rows: the loop over chunk j normalises chunk j of the previous row (and
        # hands its slot back to TMA) and folds chunk j of the current row into running statistics, so a
        # slot is freed, and a chunk requested, at every step: the reads stream without pause.
        LOG2E: gl.constexpr = 1.4426950408889634
        vec_layout: gl.constexpr = gl.BlockedLayout([1, VEC], [1, 32], [1, WARPS], [1, 0])
        one_layout: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [1, WARPS], [1, 0])
        # The chunk as [CHUNK / VEC, VEC]: each thread's 16 bytes are one row, so a maximum over axis 1
        # stays in the thread; the statistics are kept per 16-byte vector.
        grp_layout: gl.constexpr = gl.BlockedLayout([1, VEC], [32, 1], [WARPS, 1], [1, 0])
        GROUPS: gl.constexpr = CHUNK // VEC
        stat_layout: gl.constexpr = gl.SliceLayout(1, grp_layout)
        pid = gl.program_id(0)
        nprog = gl.num_programs(0)
        ring = gl.allocate_shared_memory(x_desc.dtype, [SLOTS, 1, CHUNK], x_desc.layout)
        bars = gl.allocate_shared_memory(gl.int64, [SLOTS, 1], mbarrier.MBarrierLayout())
        for s in gl.static_range(SLOTS):
            mbarrier.init(bars.index(s), count=1)
        for g in range(SLOTS):
            _issue(x_desc, ring, bars, g, pid, nprog, n_rows, stride_x, CHUNK, CHUNKS, SLOTS, CHUNK_BYTES_,
                   VEC, FLAT)
        cols = gl.expand_dims(gl.arange(0, CHUNK, layout=gl.SliceLayout(0, vec_layout)), 0)
        cols1 = gl.expand_dims(gl.arange(0, CHUNK, layout=gl.SliceLayout(0, one_layout)), 0)
        n_local = (n_rows - pid + nprog - 1) // nprog  # rows of this program (>= 1: grid <= n_rows)
        # Statistics of the program's first row.
        head = _row_head(pid, stride_x, VEC, FLAT)
        m_run = gl.full([GROUPS], float("-inf"), gl.float32, layout=stat_layout)
        l_run = gl.zeros([GROUPS], gl.float32, layout=stat_layout)
        for j in range(CHUNKS):
            m_run, l_run = _fold_chunk(ring, bars, j, cols, head, n_cols, j, m_run, l_run, SLOTS, CHUNK,
                                       EVEN, VEC, FAST, vec_layout, grp_layout)
        m_prev, inv_prev = _merge(m_run, l_run, FAST)
        # listing: gluon-pipeline
        for i in range(1, n_local):  # row i is folded while row i - 1 is normalised
            prev = pid + (i - 1) * nprog
            y_row = Y + prev.to(gl.int64) * stride_y
            head_prev = _row_head(prev, stride_x, VEC, FLAT)
            head_cur = _row_head(pid + i * nprog, stride_x, VEC, FLAT)
            m_run = gl.full([GROUPS], float("-inf"), gl.float32, layout=stat_layout)
            l_run = gl.zeros([GROUPS], gl.float32, layout=stat_layout)
            for j in range(CHUNKS):
                g = (i - 1) * CHUNKS + j  # chunk j of row i - 1; g + CHUNKS: of row i
                _normalise_chunk(
                    x_desc, ring, bars, y_row, g, j, cols, cols1, head_prev, n_cols,
                    m_prev, inv_prev, pid, nprog, n_rows, stride_x, CHUNK, CHUNKS,
                    SLOTS, CHUNK_BYTES_, VEC, FLAT, EVEN, FAST, vec_layout, one_layout)
                m_run, l_run = _fold_chunk(
                    ring, bars, g + CHUNKS, cols, head_cur, n_cols, j, m_run, l_run,
                    SLOTS, CHUNK, EVEN, VEC, FAST, vec_layout, grp_layout)
            m_prev, inv_prev = _merge(m_run, l_run, FAST)
        # end listing: gluon-pipeline
        last = pid + (n_local - 1) * nprog
        y_row = Y + last.to(gl.int64) * stride_y
        head_last = _row_head(last, stride_x, VEC, FLAT)
        for j in range(CHUNKS):
            _normalise_chunk(x_desc, ring, bars, y_row, (n_local - 1) * CHUNKS + j, j, cols, cols1, head_last,
                             n_cols, m_prev, inv_prev, pid, nprog, n_rows, stride_x, CHUNK, CHUNKS, SLOTS,
                             CHUNK_BYTES_, VEC, FLAT, EVEN, FAST, vec_layout, one_layout)
        for s in gl.static_range(SLOTS):
            mbarrier.invalidate(bars.index(s))

    @gluon.jit
    def _fold_chunk(ring, bars, g, cols, head, n_cols, j, m_run, l_run, SLOTS: gl.constexpr,
                    CHUNK: gl.constexpr, EVEN: gl.constexpr, VEC: gl.constexpr, FAST: gl.constexpr,
                    vec_layout: gl.constexpr, grp_layout: gl.constexpr):
        # Wait for chunk g and fold it into the running maximum and sum of each 16-byte vector position:
        # m' = max(m, max of the vector), l' = l exp(m - m') + sum exp(x - m'): one exponential per value
        # and one per vector.
        LOG2E: gl.constexpr = 1.4426950408889634
        # listing: gluon-fold
        mbarrier.wait(bars.index(g % SLOTS), (g // SLOTS) & 1)  # chunk g has landed
        x = _chunk_values(ring, g, cols, head, n_cols, j, SLOTS, CHUNK, EVEN, vec_layout)
        xg = gl.convert_layout(gl.reshape(x, [CHUNK // VEC, VEC]), grp_layout)  # free
        m_new = gl.maximum(m_run, gl.max(xg, axis=1))  # max over a thread's 16 bytes
        shift = gl.where(m_new > float("-inf"), m_new, 0.0)  # no -inf - -inf
        if FAST:  # 16-bit input: x log2(e) - m log2(e) is one FMA, exact enough
            e = gl.exp2(xg * LOG2E - gl.expand_dims(shift * LOG2E, 1))
        else:
            e = gl.exp2((xg - gl.expand_dims(shift, 1)) * LOG2E)
        l_new = l_run * gl.exp2((m_run - shift) * LOG2E) + gl.sum(e, axis=1)
        # end listing: gluon-fold
        return m_new, l_new

    @gluon.jit
    def _merge(m_run, l_run, FAST: gl.constexpr):
        # The row's maximum m and 1 / l, l = sum of exp(x - m), from the per-vector statistics; with FAST,
        # m log2(e) + log2(l) in place of m, so that the normalisation is exp2(x log2(e) - that): one FMA.
        LOG2E: gl.constexpr = 1.4426950408889634
        m_row = gl.max(m_run, axis=0)
        l_row = gl.sum(l_run * gl.exp2((m_run - m_row) * LOG2E), axis=0)
        if FAST:
            m_row = m_row * LOG2E + gl.log2(l_row)
        return m_row, 1.0 / l_row

    @gluon.jit
    def _scaled_exp(x, m_row, inv, FAST: gl.constexpr):
        # exp(x - m) / l; with FAST, m_row is m log2(e) + log2(l) (see _merge): one FMA and one EX2.
        LOG2E: gl.constexpr = 1.4426950408889634
        if FAST:
            y = gl.exp2(x * LOG2E - m_row)
        else:
            y = gl.exp2((x - m_row) * LOG2E) * inv
        return y

    @gluon.jit
    def _normalise_chunk(x_desc, ring, bars, y_row, g, j, cols, cols1, head, n_cols, m_row, inv,
                         pid, nprog, n_rows, stride_x, CHUNK: gl.constexpr, CHUNKS: gl.constexpr,
                         SLOTS: gl.constexpr, CHUNK_BYTES_: gl.constexpr, VEC: gl.constexpr,
                         FLAT: gl.constexpr, EVEN: gl.constexpr, FAST: gl.constexpr,
                         vec_layout: gl.constexpr, one_layout: gl.constexpr):
        # y = exp(x - m) / l for chunk g, stored; then its slot goes back to TMA for chunk g + SLOTS.
        # listing: gluon-normalise
        if FLAT:
            c1 = cols1 + (j * CHUNK - head)
            x = ring.index(g % SLOTS).load(one_layout).to(gl.float32)
            y = _scaled_exp(x, m_row, inv, FAST)
            gl.store(y_row + c1, y.to(y_row.dtype.element_ty), mask=(c1 >= 0) & (c1 < n_cols))
        else:
            x = ring.index(g % SLOTS).load(vec_layout).to(gl.float32)
            y = _scaled_exp(x, m_row, inv, FAST)
            c = cols + j * CHUNK
            if EVEN:
                gl.store(y_row + c, y.to(y_row.dtype.element_ty))
            else:
                gl.store(y_row + c, y.to(y_row.dtype.element_ty), mask=c < n_cols)
        _cta_barrier()  # every warp has read the slot ...
        fence_async_shared()  # ... before TMA (the async proxy) writes it again
        _issue(x_desc, ring, bars, g + SLOTS, pid, nprog, n_rows, stride_x, CHUNK, CHUNKS,
               SLOTS, CHUNK_BYTES_, VEC, FLAT)
        # end listing: gluon-normalise


def _shared_layout(bytes_per_element: int):
    # Unswizzled: the chunk is one long row, read by 16-byte vectors without bank conflicts.
    return gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=8 * bytes_per_element, rank=2)


def make_descriptor(x: torch.Tensor, plan: ChunkPlan):
    """The TMA descriptor the kernel reads ``x`` through: ``[n_rows, n_cols]`` (rows of 16-byte-aligned
    stride) or the flat view ``[1, (n_rows - 1) * stride + n_cols]``, both with blocks ``[1, chunk_cols]``."""
    n_rows, n_cols = x.shape
    block = [1, plan.chunk_cols]
    layout = _shared_layout(plan.bytes_per_element)
    if not plan.flat:
        # One row: its stride is never used, but TMA wants a multiple of 16 bytes.
        stride = x.stride(0) if n_rows > 1 else _round_up(n_cols, plan.vector_cols)
        return TensorDescriptor(x, [n_rows, n_cols], [stride, 1], block, layout)
    flat = (n_rows - 1) * x.stride(0) + n_cols
    # Dimension 0 has one entry, so its stride is never used; TMA still wants a multiple of 16 bytes.
    return TensorDescriptor(x, [1, flat], [_round_up(flat, plan.vector_cols), 1], block, layout)


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _check_input(name: str, t: object) -> None:
    _checks.check_is_tensor(name, t)
    _checks.check_ndim(name, t, 2, "must be a 2-D matrix (rows x columns)")
    _checks.check_dtype(name, t, DTYPE_NAMES)
    if t.device.type != "cuda":
        raise ValueError(f"{name} must be a CUDA tensor (the Gluon kernel runs only on a Hopper GPU), "
                         f"got device {t.device}")
    if t.shape[1] > 1 and t.stride(1) != 1:
        raise ValueError(f"{name} must have contiguous rows (stride 1 along the last dimension), got strides "
                         f"{tuple(t.stride())} (call .contiguous())")
    if t.data_ptr() % TMA_ALIGN_BYTES:
        raise ValueError(f"{name} must start at a 16-byte-aligned address (TMA), got data_ptr() % 16 = "
                         f"{t.data_ptr() % TMA_ALIGN_BYTES} (call .clone())")


def softmax(x: torch.Tensor, out: torch.Tensor | None = None, *, chunk_cols: int | None = None,
            num_warps: int | None = None, programs_per_sm: int | None = None, schedule: str = "pipelined",
            store_exp: bool = False) -> torch.Tensor:
    """Softmax over the last dimension of a 2-D CUDA tensor (fp16, bf16, fp32) on Hopper; returns ``out``.

    Rows must fit one SM's shared memory (:func:`chunk_plan`: up to 114688 fp16/bf16 or 57344 fp32 values
    on an H200 with the default chunk). Rows may be strided (last-dimension stride 1). ``chunk_cols``,
    ``num_warps`` and ``programs_per_sm`` tune the launch (:func:`chunk_plan`; when all three are None,
    :func:`default_launch` picks them, as measured on the H200). ``schedule`` is one of
    :data:`SCHEDULES` (module docstring). With ``"three_pass"``, ``store_exp=True`` writes
    ``exp(x - m)``, rounded to the dtype, back into the slot in pass 2 and pass 3 scales it: one exponential
    per value instead of two (the SM's exponential unit is its scarcest resource here), at the price of a
    second rounding (error up to about two units in the last place of the dtype instead of one). Raises
    ``ValueError`` naming the argument for a CPU tensor, a GPU that is not Hopper, rows that do not fit, or
    a bad option.
    """
    _check_input("x", x)
    status = available(x.device)
    if not status:
        raise ValueError(f"x: the Gluon softmax cannot run here: {status.reason}")
    n_rows, n_cols = x.shape
    if out is None:
        out = torch.empty_like(x)
    else:
        _check_input("out", out)
        _checks.check_out_like(out, x, "the kernel still reads rows of x after writing others")
    if n_rows == 0 or n_cols == 0:
        return out
    if n_rows > 1 and x.stride(0) < n_cols:
        raise ValueError(f"x: rows must not overlap (row stride >= n_cols), got shape {tuple(x.shape)} with "
                         f"strides {tuple(x.stride())}")
    plan = plan_for(x, chunk_cols=chunk_cols, programs_per_sm=programs_per_sm, num_warps=num_warps)
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    if not isinstance(store_exp, bool) or (store_exp and schedule != "three_pass"):
        raise ValueError(f"store_exp must be True or False, and True only with schedule='three_pass'; got "
                         f"{store_exp!r} with {schedule!r}")
    _launch(x, out, plan, store_exp, schedule)
    return out


def plan_for(x: torch.Tensor, *, chunk_cols: int | None = None, programs_per_sm: int | None = None,
             num_warps: int | None = None) -> ChunkPlan:
    """:func:`chunk_plan` for the matrix ``x`` (its row length, element size and row stride): the
    :func:`default_launch` when no option is given, else the options (``num_warps`` 8 when None)."""
    n_rows, n_cols = x.shape
    b = x.element_size()
    flat = n_rows > 1 and uses_flat_view(x.stride(0), b)
    options = (chunk_cols, programs_per_sm, num_warps)
    if all(o is None or (isinstance(o, int) and not isinstance(o, bool)) for o in options):
        plan = _plan_cached(n_cols, b, flat, *options)  # pure in its arguments: asked once per shape
    else:
        plan = _plan(n_cols, b, flat, *options)  # raises the ValueError naming the bad option
    if flat and (n_rows - 1) * x.stride(0) + n_cols > MAX_FLAT_ELEMENTS:
        raise ValueError(f"x: rows whose stride ({x.stride(0)} values) is not a multiple of 16 bytes are "
                         f"read through a flat view, which TMA's 32-bit coordinates limit to "
                         f"{MAX_FLAT_ELEMENTS} values; got shape {tuple(x.shape)} (pad the rows to a "
                         f"multiple of {plan.vector_cols} values)")
    return plan


def _plan(n_cols: int, b: int, flat: bool, chunk_cols, programs_per_sm, num_warps) -> ChunkPlan:
    if chunk_cols is None and programs_per_sm is None and num_warps is None:
        return default_launch(n_cols, b, flat=flat)
    return chunk_plan(n_cols, b, flat=flat, chunk_cols=chunk_cols, programs_per_sm=programs_per_sm,
                      num_warps=NUM_WARPS if num_warps is None else num_warps)


_plan_cached = functools.lru_cache(maxsize=1024)(_plan)


def _launch(x: torch.Tensor, out: torch.Tensor, plan: ChunkPlan, store_exp: bool = False,
            schedule: str = "pipelined"):
    """Launch the kernel for checked tensors; returns what the launch returns (Triton's compiled kernel)."""
    n_rows, n_cols = x.shape
    sm_count = _device_facts(_device_index(x.device))[1]
    grid = (grid_size(n_rows, sm_count, plan.programs_per_sm),)
    even = not plan.flat and n_cols % plan.chunk_cols == 0
    desc = make_descriptor(x, plan)
    if schedule == "pipelined":
        return _pipelined_kernel[grid](desc, out, n_rows, n_cols, x.stride(0), out.stride(0),
                                       CHUNK=plan.chunk_cols, CHUNKS=plan.chunks_per_row, SLOTS=plan.slots,
                                       CHUNK_BYTES_=plan.chunk_bytes, VEC=plan.vector_cols, FLAT=plan.flat,
                                       EVEN=even, WARPS=plan.num_warps, FAST=plan.bytes_per_element == 2,
                                       num_warps=plan.num_warps)
    return _softmax_kernel[grid](desc, out, n_rows, n_cols, x.stride(0), out.stride(0),
                                 CHUNK=plan.chunk_cols, CHUNKS=plan.chunks_per_row, SLOTS=plan.slots,
                                 CHUNK_BYTES_=plan.chunk_bytes, VEC=plan.vector_cols, FLAT=plan.flat,
                                 EVEN=even, WARPS=plan.num_warps, STORE_EXP=store_exp,
                                 num_warps=plan.num_warps)


__all__ = [
    "Availability",
    "ChunkPlan",
    "available",
    "bytes_in_flight_per_sm",
    "chunk_plan",
    "default_launch",
    "grid_size",
    "make_descriptor",
    "plan_for",
    "shared_bytes_per_program",
    "softmax",
    "softmax_reference",
    "usable_for",
    "uses_flat_view",
]
