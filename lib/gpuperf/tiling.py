"""Tiling a matrix multiply: slow-memory traffic counted, the on-chip capacity limit, L2 sharing between
concurrent blocks, and tile and wave quantization.

Shapes follow the course's notation: C (m x n) = A (m x k) @ B (k x n). Traffic is counted in *elements*
(multiply by b bytes per element for bytes) between a slow memory (HBM) and a fast one (registers and shared
memory of one SM), the model of Hong and Kung ("I/O complexity: the red-blue pebble game", STOC 1981).

* :func:`tiled_matmul_io` computes C in numpy tile by tile and *counts* every element it reads from and writes
  to slow memory; :func:`tiled_io_closed_form` gives the same counts in closed form, for any tile sizes and
  shapes that tiles do not divide: reads of A = m k ceil(n / t_n), of B = k n ceil(m / t_m), writes = m n.
* Intensity of the tiled product ~ 2 / (b (1/t_m + 1/t_n + 1/k)): larger tiles, more reuse. The tile has to
  fit on chip (an accumulator t_m t_n plus slices t_m t_k and t_k t_n), which caps it:
  :func:`max_square_tile` and :func:`tile_fast_memory_bytes`.
* :func:`l2_traffic` counts the slow-memory traffic when blocks run ``concurrent`` at a time and the blocks
  running together share what they load (an L2 that holds one wave's operands), in row-major or grouped
  order; :func:`l2_traffic_bruteforce` is the independent reference (sets of loaded panels).
* :func:`wave_quantization` counts tiles, waves and the useful fraction of the work for any m, n, k, tile
  and SM count, and a predicted time (every wave as slow as a full one). The example is NVIDIA's
  (Matrix Multiplication Background User's Guide): 256 x 128 tiles of a 2304 x 1536 product on an A100's
  108 SMs are 108 tiles, one wave; n = 1544 needs 117 tiles, two waves.

This module imports neither torch nor triton.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from gpuperf.hardware import Accelerator
from gpuperf.roofline import as_accelerator, bytes_per_element

ORDERS = ("row-major", "grouped")


def _check_int(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


# --------------------------------------------------------------------------------------------------
# Counting the traffic of a tiled product
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TiledIO:
    """Slow-memory traffic of a tiled matmul, in elements, and the product itself (when computed).

    ``reads_a``, ``reads_b``: elements of A and B read; ``writes_c``: elements of C written; ``flop`` = 2 m n k;
    ``fast_memory_elements``: the most elements held on chip at once (accumulator + the two slices).
    """

    m: int
    n: int
    k: int
    tile_m: int
    tile_n: int
    tile_k: int
    reads_a: int
    reads_b: int
    writes_c: int
    flop: int
    fast_memory_elements: int
    product: np.ndarray | None = None

    @property
    def elements_moved(self) -> int:
        return self.reads_a + self.reads_b + self.writes_c

    def intensity_flop_per_byte(self, bytes_per_element: float) -> float:
        """FLOP per byte of slow-memory traffic, for ``bytes_per_element`` bytes per element."""
        return self.flop / (self.elements_moved * bytes_per_element)


def tiled_matmul_io(a: np.ndarray, b: np.ndarray, tile_m: int, tile_n: int, tile_k: int) -> TiledIO:
    """C = A @ B computed tile by tile, counting slow-memory traffic (an executable model, not a fast one).

    For each t_m x t_n tile of C: an accumulator is zeroed on chip; for each step of t_k along k, the t_m x t_k
    slice of A and the t_k x t_n slice of B are read from slow memory (edge tiles read only the elements that
    exist) and multiplied into the accumulator; the tile is written once. Returns a :class:`TiledIO` with the
    product (float64).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"a and b must be (m, k) and (k, n) matrices, got shapes {a.shape} and {b.shape}")
    m, k = a.shape
    n = b.shape[1]
    for name, v in (("m", m), ("n", n), ("k", k)):
        _check_int(name, v)
    tm, tn, tk = (_check_int(nm, v) for nm, v in (("tile_m", tile_m), ("tile_n", tile_n), ("tile_k", tile_k)))
    c = np.zeros((m, n))
    reads_a = reads_b = writes_c = 0
    peak = 0
    for i0 in range(0, m, tm):
        for j0 in range(0, n, tn):
            acc = np.zeros((min(tm, m - i0), min(tn, n - j0)))  # on chip
            for p0 in range(0, k, tk):
                a_slice = a[i0:i0 + tm, p0:p0 + tk]  # read from slow memory
                b_slice = b[p0:p0 + tk, j0:j0 + tn]
                reads_a += a_slice.size
                reads_b += b_slice.size
                peak = max(peak, acc.size + a_slice.size + b_slice.size)
                acc += a_slice @ b_slice
            c[i0:i0 + tm, j0:j0 + tn] = acc  # written once
            writes_c += acc.size
    return TiledIO(m, n, k, tm, tn, tk, reads_a, reads_b, writes_c, 2 * m * n * k, peak, c)


def tiled_io_closed_form(m: int, n: int, k: int, tile_m: int, tile_n: int, tile_k: int) -> TiledIO:
    """The counts of :func:`tiled_matmul_io` in closed form (no product).

    Every tile row of C (ceil(n / t_n) tiles) reads its full m_i x k panel of A, so A is read ceil(n / t_n)
    times; B is read ceil(m / t_m) times; C is written once. t_k changes only the fast memory in use.
    """
    m, n, k = (_check_int(nm, v) for nm, v in (("m", m), ("n", n), ("k", k)))
    tm, tn, tk = (_check_int(nm, v) for nm, v in (("tile_m", tile_m), ("tile_n", tile_n), ("tile_k", tile_k)))
    em, en, ek = min(tm, m), min(tn, n), min(tk, k)
    return TiledIO(m, n, k, tm, tn, tk, reads_a=m * k * _cdiv(n, tn), reads_b=k * n * _cdiv(m, tm),
                   writes_c=m * n, flop=2 * m * n * k, fast_memory_elements=em * en + em * ek + ek * en)


def naive_io(m: int, n: int, k: int) -> TiledIO:
    """The untiled product: each C element reads its row of A and column of B (t_m = t_n = t_k = 1 in the
    count; reads 2 m n k, intensity 2 m n k / (b (2 m n k + m n)), about 1/b FLOP per byte)."""
    return tiled_io_closed_form(m, n, k, 1, 1, 1)


def tile_fast_memory_bytes(tile_m: int, tile_n: int, tile_k: int, bytes_per_element: float,
                           accumulator_bytes: float = 4, stages: int = 1) -> float:
    """On-chip bytes of one tile: an fp32 accumulator t_m t_n (registers) plus ``stages`` copies of the A and
    B slices (t_m t_k + t_k t_n elements, shared memory; a pipeline keeps several in flight)."""
    tm, tn, tk = (_check_int(nm, v) for nm, v in (("tile_m", tile_m), ("tile_n", tile_n), ("tile_k", tile_k)))
    stages = _check_int("stages", stages)
    return tm * tn * accumulator_bytes + stages * (tm * tk + tk * tn) * bytes_per_element


def tile_intensity_flop_per_byte(tile_m: int, tile_n: int, k: int, bytes_per_element: float) -> float:
    """Intensity of one output tile: 2 t_m t_n k FLOP over b (t_m k + k t_n + t_m t_n) bytes."""
    tm, tn, k = (_check_int(nm, v) for nm, v in (("tile_m", tile_m), ("tile_n", tile_n), ("k", k)))
    return 2 * tm * tn * k / (bytes_per_element * (tm * k + k * tn + tm * tn))


def register_tile_intensity_flop_per_byte(warp_m: int, warp_n: int, bytes_per_element: float) -> float:
    """Intensity of a register tile against shared memory: a group of threads that keeps a warp_m x warp_n
    accumulator in registers reads, per step of k, warp_m values of A and warp_n of B from shared memory and
    does 2 warp_m warp_n FLOP on them: 2 warp_m warp_n / (b (warp_m + warp_n)) FLOP per shared-memory byte
    (the second level of reuse; the first is the block's tile against HBM)."""
    wm, wn = _check_int("warp_m", warp_m), _check_int("warp_n", warp_n)
    if not bytes_per_element > 0:
        raise ValueError(f"bytes_per_element must be > 0, got {bytes_per_element!r}")
    return 2 * wm * wn / (bytes_per_element * (wm + wn))


def max_square_tile(fast_memory_bytes: float, bytes_per_element: float, tile_k: int = 64,
                    accumulator_bytes: float = 4, stages: int = 1) -> int:
    """The largest t (a multiple of 16, Tensor Core granularity) whose t x t tile fits in
    ``fast_memory_bytes`` by :func:`tile_fast_memory_bytes`; 0 if not even 16 fits. Its intensity, ~t / b
    FLOP per byte for large k, is the most reuse that memory allows: Hong and Kung's bound, Theta(sqrt(M))."""
    if not (isinstance(fast_memory_bytes, numbers.Real) and fast_memory_bytes > 0):
        raise ValueError(f"fast_memory_bytes must be > 0, got {fast_memory_bytes!r}")
    t = 0
    while tile_fast_memory_bytes(t + 16, t + 16, tile_k, bytes_per_element, accumulator_bytes,
                                 stages) <= fast_memory_bytes:
        t += 16
    return t


# --------------------------------------------------------------------------------------------------
# L2 sharing: which blocks run together decides what they load once between them
# --------------------------------------------------------------------------------------------------


def block_order(tiles_m: int, tiles_n: int, order: str = "row-major", group_m: int = 8) -> list[tuple[int, int]]:
    """The (tile row, tile column) each block id computes, in launch order.

    ``row-major``: along a row of tiles, then the next row. ``grouped``: ``group_m`` tile rows at a time,
    walked column by column (the order of :mod:`gpuperf.kernels.matmul`)."""
    tiles_m, tiles_n, group_m = (_check_int(nm, v) for nm, v in
                                 (("tiles_m", tiles_m), ("tiles_n", tiles_n), ("group_m", group_m)))
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    if order == "row-major":
        return [(i, j) for i in range(tiles_m) for j in range(tiles_n)]
    out = []
    for first in range(0, tiles_m, group_m):
        rows = min(group_m, tiles_m - first)
        out += [(first + r, j) for j in range(tiles_n) for r in range(rows)]
    return out


@dataclass(frozen=True)
class L2Traffic:
    """Slow-memory traffic (elements) when each wave of ``concurrent`` blocks loads every A row panel and B
    column panel it needs once, shared through L2; ``a_panels`` and ``b_panels`` count the panel loads."""

    order: str
    concurrent: int
    a_panels: int
    b_panels: int
    elements_read: int


def l2_traffic(m: int, n: int, k: int, tile_m: int, tile_n: int, concurrent: int,
               order: str = "row-major", group_m: int = 8) -> L2Traffic:
    """Panel loads when blocks run ``concurrent`` at a time (one wave), in ``order``.

    Model: the blocks of one wave share an L2 that holds their operands; each distinct A row panel
    (t_m x k) and B column panel (k x t_n) of the wave comes from slow memory once; nothing survives into
    the next wave. Per wave, counted from the wave's first and last block ids in closed form.
    """
    m, n, k = (_check_int(nm, v) for nm, v in (("m", m), ("n", n), ("k", k)))
    concurrent = _check_int("concurrent", concurrent)
    tiles_m, tiles_n = _cdiv(m, _check_int("tile_m", tile_m)), _cdiv(n, _check_int("tile_n", tile_n))
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    group_m = _check_int("group_m", group_m)
    total = tiles_m * tiles_n
    a_panels = b_panels = 0
    elements = 0
    for start in range(0, total, concurrent):
        stop = min(total, start + concurrent)
        rows, cols = _wave_rows_cols(start, stop, tiles_m, tiles_n, order, group_m)
        a_panels += len(rows)
        b_panels += len(cols)
        elements += sum(min(tile_m, m - i * tile_m) for i in rows) * k
        elements += sum(min(tile_n, n - j * tile_n) for j in cols) * k
    return L2Traffic(order, concurrent, a_panels, b_panels, elements)


def _span(lo: int, hi: int, width: int) -> tuple[set[int], set[int]]:
    """Ids [lo, hi) laid out as major * width + minor: the majors and the minors they touch."""
    majors = set(range(lo // width, (hi - 1) // width + 1))
    if hi - lo >= width:
        minors = set(range(width))
    elif lo // width == (hi - 1) // width:
        minors = set(range(lo % width, (hi - 1) % width + 1))
    else:  # fewer than width ids over two majors: the tail of one and the head of the next
        minors = set(range(lo % width, width)) | set(range(0, (hi - 1) % width + 1))
    return majors, minors


def _wave_rows_cols(start: int, stop: int, tiles_m: int, tiles_n: int, order: str, group_m: int):
    """Tile rows and columns touched by block ids [start, stop), by arithmetic on the ids (no enumeration
    of blocks): row-major ids are i tiles_n + j; grouped ids, group by group, are column * height + row."""
    if order == "row-major":
        return _span(start, stop, tiles_n)
    rows: set[int] = set()
    cols: set[int] = set()
    per_group = group_m * tiles_n
    for g in range(start // per_group, (stop - 1) // per_group + 1):
        first = g * group_m
        height = min(group_m, tiles_m - first)
        g_start = g * per_group
        lo = max(start, g_start) - g_start
        hi = min(stop, g_start + height * tiles_n) - g_start
        if hi > lo:
            group_cols, group_rows = _span(lo, hi, height)
            cols |= group_cols
            rows |= {first + r for r in group_rows}
    return rows, cols


def l2_traffic_bruteforce(m: int, n: int, k: int, tile_m: int, tile_n: int, concurrent: int,
                          order: str = "row-major", group_m: int = 8) -> L2Traffic:
    """The reference for :func:`l2_traffic`: enumerate the blocks of each wave and collect the panels they
    touch in sets."""
    tiles_m, tiles_n = _cdiv(m, tile_m), _cdiv(n, tile_n)
    blocks = block_order(tiles_m, tiles_n, order, group_m)
    a_panels = b_panels = elements = 0
    for start in range(0, len(blocks), concurrent):
        wave = blocks[start:start + concurrent]
        rows = {i for i, _ in wave}
        cols = {j for _, j in wave}
        a_panels += len(rows)
        b_panels += len(cols)
        elements += sum(min(tile_m, m - i * tile_m) for i in rows) * k
        elements += sum(min(tile_n, n - j * tile_n) for j in cols) * k
    return L2Traffic(order, concurrent, a_panels, b_panels, elements)


# --------------------------------------------------------------------------------------------------
# Tile and wave quantization
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WaveQuantization:
    """How a product's tiles fill the SMs.

    ``tiles`` = ceil(m / t_m) ceil(n / t_n); ``wave_size`` = SMs x blocks per SM; ``waves`` =
    ceil(tiles / wave_size); ``tile_useful_fraction`` = m n / (tiles t_m t_n) (work in tiles that is inside
    C); ``wave_useful_fraction`` = tiles / (waves wave_size) (SM slots busy); ``useful_fraction`` = their
    product. ``predicted_time_s``: every wave takes as long as a full one, each block running at 1 / wave_size
    of the peak: waves x 2 t_m t_n k wave_size / peak (and never less than the memory time of the minimum
    bytes, when the bandwidth is given)."""

    m: int
    n: int
    k: int
    tile_m: int
    tile_n: int
    sm_count: int
    blocks_per_sm: int
    tiles: int
    wave_size: int
    waves: int
    tile_useful_fraction: float
    wave_useful_fraction: float
    useful_fraction: float
    predicted_time_s: float | None
    predicted_flop_per_s: float | None


def wave_quantization(m: int, n: int, k: int, tile_m: int, tile_n: int, sm_count: int,
                      blocks_per_sm: int = 1, peak_flop_per_s: float | None = None,
                      bytes_per_s: float | None = None, bytes_per_element: float = 2) -> WaveQuantization:
    """Tiles, waves and useful fractions of an m x n x k product in t_m x t_n tiles (see the dataclass)."""
    m, n, k = (_check_int(nm, v) for nm, v in (("m", m), ("n", n), ("k", k)))
    tm, tn = _check_int("tile_m", tile_m), _check_int("tile_n", tile_n)
    sms, per_sm = _check_int("sm_count", sm_count), _check_int("blocks_per_sm", blocks_per_sm)
    tiles = _cdiv(m, tm) * _cdiv(n, tn)
    wave_size = sms * per_sm
    waves = _cdiv(tiles, wave_size)
    tile_frac = m * n / (tiles * tm * tn)
    wave_frac = tiles / (waves * wave_size)
    time_s = rate = None
    if peak_flop_per_s is not None:
        if not (isinstance(peak_flop_per_s, numbers.Real) and peak_flop_per_s > 0):
            raise ValueError(f"peak_flop_per_s must be > 0, got {peak_flop_per_s!r}")
        time_s = waves * 2 * tm * tn * k * wave_size / peak_flop_per_s
        if bytes_per_s is not None:
            if not (isinstance(bytes_per_s, numbers.Real) and bytes_per_s > 0):
                raise ValueError(f"bytes_per_s must be > 0, got {bytes_per_s!r}")
            time_s = max(time_s, bytes_per_element * (m * k + k * n + m * n) / bytes_per_s)
        rate = 2 * m * n * k / time_s
    return WaveQuantization(m, n, k, tm, tn, sms, per_sm, tiles, wave_size, waves, tile_frac, wave_frac,
                            tile_frac * wave_frac, time_s, rate)


def wave_quantization_on(accelerator: str | Accelerator, m: int, n: int, k: int, tile_m: int, tile_n: int,
                         dtype: str = "bf16", blocks_per_sm: int = 1,
                         efficiency: float = 1.0) -> WaveQuantization:
    """:func:`wave_quantization` with the SM count, the matrix peak in ``dtype`` (times ``efficiency``, the
    fraction of peak a full wave reaches) and HBM bandwidth of a device in :mod:`gpuperf.hardware`."""
    acc = as_accelerator(accelerator)
    if not (isinstance(efficiency, numbers.Real) and 0 < efficiency <= 1):
        raise ValueError(f"efficiency must be in (0, 1], got {efficiency!r}")
    if acc.sm_count is None:
        raise ValueError(f"accelerator {acc.name!r} has no published SM count")
    return wave_quantization(m, n, k, tile_m, tile_n, acc.sm_count, blocks_per_sm,
                             acc.peak_flop_per_s(dtype) * efficiency, acc.hbm_bytes_per_s,
                             bytes_per_element(dtype))


# --------------------------------------------------------------------------------------------------
# Splitting k: what split-K (or stream-K) buys a product with too few tiles
# --------------------------------------------------------------------------------------------------

#: Per program, the fixed cost in k steps of its own tile: filling the load pipeline before the first
#: multiply and storing the tile after the last (an assumption of the model, of the order of the pipeline's
#: depth).
OVERHEAD_STEPS = 3.0
#: The tile every predicted cost is expressed in: one k step of a 128 x 128 x 64 tile at full rate.
UNIT_TILE = (128, 128, 64)


@dataclass(frozen=True)
class SplitK:
    """An m x n x k product in t_m x t_n tiles, k cut into ``split_k`` slices of t_k steps, on ``sm_count``
    SMs running one program each.

    ``units`` = tiles x split (programs); ``waves`` = ceil(units / SMs); ``last_wave_fill`` = the fraction
    of the SMs the last wave keeps busy; ``steps_per_unit`` = ceil(ceil(k / t_k) / split).
    ``reduce_steps``: a slice writes its fp32 partial tile (4 t_m t_n bytes) and the last reads all of them,
    counted in k steps of the tile's own loads (b (t_m + t_n) t_k bytes): r = 4 t_m t_n / (b (t_m + t_n) t_k).
    ``predicted_steps`` = waves (steps_per_unit + :data:`OVERHEAD_STEPS` + r) + r split, for split > 1 (the
    last slice's reads); waves (steps_per_unit + overhead) unsplit. ``predicted_cost``: the same in k steps
    of :data:`UNIT_TILE` (a step's time is proportional to t_m t_n t_k at full rate), so tiles compare.
    ``useful_fraction``: the busy SM-steps over SMs x predicted steps. ``stream_k_steps``: the same product
    by stream-K with one program per SM, the slowest program's steps of :func:`stream_k_model`.

    Assumptions: every tile runs a k step at the SM's full rate whatever its size (``predicted_cost``
    scales by FLOPs, so a 128 x 64 tile's step costs half a 128 x 128 one, and so does its fill and
    drain, which is in truth latency); r is a ratio of bytes (partials against the tile's loads), so it
    assumes the loads, not the FLOPs, set a step's time. A GPU sweep (bench/matmul_small_sweep.py) is
    what tests them."""

    m: int
    n: int
    k: int
    tile_m: int
    tile_n: int
    tile_k: int
    sm_count: int
    split_k: int
    tiles: int
    units: int
    waves: int
    last_wave_fill: float
    steps_per_unit: int
    reduce_steps: float
    predicted_steps: float
    predicted_cost: float
    useful_fraction: float
    stream_k_steps: float


def split_k_model(m: int, n: int, k: int, tile_m: int, tile_n: int, tile_k: int, sm_count: int,
                  split_k: int = 1, bytes_per_element: float = 2) -> SplitK:
    """Waves, the last wave's fill and the predicted time of a split-K launch (see :class:`SplitK`).
    A split that would leave slices empty is reduced to the splits that have work."""
    m, n, k = (_check_int(nm, v) for nm, v in (("m", m), ("n", n), ("k", k)))
    tm, tn, tk = (_check_int(nm, v) for nm, v in (("tile_m", tile_m), ("tile_n", tile_n), ("tile_k", tile_k)))
    sms, split = _check_int("sm_count", sm_count), _check_int("split_k", split_k)
    if not (isinstance(bytes_per_element, numbers.Real) and bytes_per_element > 0):
        raise ValueError(f"bytes_per_element must be > 0, got {bytes_per_element!r}")
    tiles = _cdiv(m, tm) * _cdiv(n, tn)
    k_steps = _cdiv(k, tk)
    per_unit = _cdiv(k_steps, split)
    split = _cdiv(k_steps, per_unit)  # no empty slices
    units = tiles * split
    waves = _cdiv(units, sms)
    last_fill = (units - (waves - 1) * sms) / sms
    r = 4 * tm * tn / (bytes_per_element * (tm + tn) * tk)
    if split > 1:
        steps = waves * (per_unit + OVERHEAD_STEPS + r) + r * split
    else:
        steps = waves * (per_unit + OVERHEAD_STEPS)
    scale = tm * tn * tk / (UNIT_TILE[0] * UNIT_TILE[1] * UNIT_TILE[2])
    useful = tiles * k_steps / (sms * steps)
    stream = stream_k_model(m, n, k, tm, tn, tk, sms, bytes_per_element).predicted_steps
    return SplitK(m, n, k, tm, tn, tk, sms, split, tiles, units, waves, last_fill, per_unit, r, steps,
                  steps * scale, useful, stream)


@dataclass(frozen=True)
class StreamK:
    """Stream-K as :mod:`gpuperf.kernels.matmul_splitk` builds it: the ``tiles`` x ``k_steps`` steps, tile
    after tile, dealt in runs of ``run_steps`` = ceil(tiles k_steps / programs) to ``programs`` programs
    (fewer when the last would be empty). A program pays, besides its run, the fill and drain c
    (:data:`OVERHEAD_STEPS`) once per tile it touches (``segments``), r per partial it writes (at most
    one: the top of its run, when that tile ends in a later program) and r per partial it reads (for
    each tile it ends, one from every lower program that holds part of it). ``predicted_steps``: the
    slowest program's total; ``worst_program``: which one (the lowest of the ties)."""

    programs: int
    run_steps: int
    reduce_steps: float
    worst_program: int
    segments: int
    partials_written: int
    partials_read: int
    predicted_steps: float


def stream_k_model(m: int, n: int, k: int, tile_m: int, tile_n: int, tile_k: int, programs: int,
                   bytes_per_element: float = 2) -> StreamK:
    """The slowest program of a stream-K launch, counted tile by tile as the kernel walks its run (see
    :class:`StreamK`). Programs that wait for a lower one's partial are assumed not to wait long (the
    lower program computes that partial first)."""
    m, n, k = (_check_int(nm, v) for nm, v in (("m", m), ("n", n), ("k", k)))
    tm, tn, tk = (_check_int(nm, v) for nm, v in (("tile_m", tile_m), ("tile_n", tile_n), ("tile_k", tile_k)))
    programs = _check_int("programs", programs)
    if not (isinstance(bytes_per_element, numbers.Real) and bytes_per_element > 0):
        raise ValueError(f"bytes_per_element must be > 0, got {bytes_per_element!r}")
    k_steps = _cdiv(k, tk)
    total = _cdiv(m, tm) * _cdiv(n, tn) * k_steps
    run = _cdiv(total, programs)
    programs = _cdiv(total, run)
    r = 4 * tm * tn / (bytes_per_element * (tm + tn) * tk)
    worst = None
    for p in range(programs):
        lo, it = p * run, min(total, (p + 1) * run)
        segments = written = read = 0
        while it > lo:  # the kernel's walk: from the top of the run down
            tile_lo = (it - 1) // k_steps * k_steps
            seg_lo = max(tile_lo, lo)
            segments += 1
            if it < tile_lo + k_steps:
                written += 1
            else:
                read += p - tile_lo // run  # programs tile_lo // run .. p - 1 hold the rest
            it = seg_lo
        steps = min(total, (p + 1) * run) - lo + OVERHEAD_STEPS * segments + r * (written + read)
        if worst is None or steps > worst.predicted_steps:
            worst = StreamK(programs, run, r, p, segments, written, read, steps)
    return worst


def best_split_k(m: int, n: int, k: int, tile_m: int, tile_n: int, tile_k: int, sm_count: int,
                 max_split: int = 16, bytes_per_element: float = 2) -> SplitK:
    """The :func:`split_k_model` of the split (1 to ``max_split``) with the least predicted time; ties go
    to the smaller split (less reduction traffic)."""
    _check_int("max_split", max_split)
    best = None
    for split in range(1, max_split + 1):
        model = split_k_model(m, n, k, tile_m, tile_n, tile_k, sm_count, split, bytes_per_element)
        if best is None or model.predicted_steps < best.predicted_steps - 1e-9:
            best = model
    return best


def split_k_for_programs(tiles: int, k: int, tile_k: int, programs: int) -> int:
    """The smallest split of k (in whole t_k steps, no empty slice) that gives ``tiles`` x split >=
    ``programs``, or every step its own slice when k is too short. For products bound by reading an
    operand (a decoding step's weight): enough programs in flight, each streaming a slice."""
    tiles, k, tk, programs = (_check_int(nm, v) for nm, v in
                              (("tiles", tiles), ("k", k), ("tile_k", tile_k), ("programs", programs)))
    k_steps = _cdiv(k, tk)
    for split in range(min(k_steps, _cdiv(programs, tiles)), k_steps + 1):
        effective = _cdiv(k_steps, _cdiv(k_steps, split))  # slices that have work
        if tiles * effective >= programs:
            return effective
    return k_steps


# --------------------------------------------------------------------------------------------------
# The tile-size explorer's model
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TileChoice:
    """Everything the tile-size explorer shows for one choice of tile, shape and device."""

    device: str
    dtype: str
    quantization: WaveQuantization
    tile_k: int
    intensity_per_tile_flop_per_byte: float
    ridge_point_flop_per_byte: float
    fast_memory_bytes: float
    shared_memory_bytes: float
    shared_memory_per_sm_bytes: float
    fits: bool
    blocks_per_sm: int


def tile_choice(device: str, m: int, n: int, k: int, tile_m: int, tile_n: int, tile_k: int,
                dtype: str = "bf16", stages: int = 3) -> TileChoice:
    """The explorer's model: waves and useful fraction (:func:`wave_quantization_on`), intensity of one tile,
    shared memory per tile (``stages`` pipelined A and B slices; the fp32 accumulator is in registers) against
    the SM's, how many such blocks fit on an SM by shared memory, and the predicted time.

    Blocks per SM by shared memory follow :func:`gpuperf.memory.sm_occupancy` (the CUDA occupancy rules: the
    1 KiB reserved per block, the allocation unit, and the per-block maximum, 227 KiB on an H100/H200), capped
    at 2 as a stand-in for the register limit the model does not count (a 128 x 128 fp32 accumulator is a
    quarter of a 256 KiB register file before addresses and operand fragments, 128 x 256 half). A tile
    over the per-block maximum does not fit (0 blocks). ``device`` must have tabulated SM limits
    (:func:`gpuperf.hardware.get_sm_limits`: T4, A100, H100, H200); others raise ``ValueError``."""
    from gpuperf.memory.occupancy import sm_occupancy

    acc = as_accelerator(device)
    b = bytes_per_element(dtype)
    smem = stages * (tile_m * tile_k + tile_k * tile_n) * b
    smem_sm = acc.shared_memory_per_sm_bytes
    try:
        # threads and registers do not matter here: only the shared-memory limit is read
        occ = sm_occupancy(acc.name, 128, 0, int(math.ceil(smem)), opt_in=True)
        per_sm = min(2, occ.blocks_by_limit["shared_memory"])
    except ValueError as err:
        if "shared_memory_per_block_bytes" not in str(err):
            raise ValueError(f"device {device!r}: {err}") from err
        per_sm = 0  # more than one block may have: it cannot launch
    fits = per_sm >= 1
    wq = wave_quantization_on(acc, m, n, k, tile_m, tile_n, dtype, max(per_sm, 1))
    return TileChoice(acc.name, dtype, wq, tile_k, tile_intensity_flop_per_byte(tile_m, tile_n, k, b),
                      acc.ridge_point_flop_per_byte(dtype),
                      tile_fast_memory_bytes(tile_m, tile_n, tile_k, b, stages=stages), smem, smem_sm or 0.0,
                      fits, per_sm)


__all__ = [
    "L2Traffic",
    "ORDERS",
    "OVERHEAD_STEPS",
    "SplitK",
    "StreamK",
    "UNIT_TILE",
    "TileChoice",
    "TiledIO",
    "WaveQuantization",
    "best_split_k",
    "block_order",
    "l2_traffic",
    "l2_traffic_bruteforce",
    "max_square_tile",
    "register_tile_intensity_flop_per_byte",
    "split_k_for_programs",
    "split_k_model",
    "stream_k_model",
    "naive_io",
    "tile_choice",
    "tile_fast_memory_bytes",
    "tile_intensity_flop_per_byte",
    "tiled_io_closed_form",
    "tiled_matmul_io",
    "wave_quantization",
    "wave_quantization_on",
]
