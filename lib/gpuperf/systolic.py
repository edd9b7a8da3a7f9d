"""A cycle-level weight-stationary systolic array (chapter 05): the matrix unit of a TPU (the MXU).

The array has ``rows`` x ``cols`` processing elements (PEs). For C = A @ B with A (m x k) and B (k x n):

* B is cut into tiles of ``rows`` x ``cols`` (k along the array's rows, n along its columns). For each
  tile the weights are shifted in from the top, one row of PEs per cycle (``rows`` cycles), and stay put:
  PE (r, c) holds B[k0 + r, n0 + c].
* The m rows of A stream in from the left, skewed: element A[i, k0 + r] enters PE row r at cycle i + r and
  moves one PE to the right per cycle.
* Partial sums move one PE down per cycle: PE (r, c) adds A[i, k0 + r] * B[k0 + r, n0 + c] to the sum
  arriving from above, so the sum leaving the bottom of column c is the tile's contribution to C[i, n0 + c];
  an accumulator below the array adds the contributions of successive k tiles.

With no overlap between tiles, one tile takes ``rows`` (weight load) + m + rows + cols - 2 cycles (the last
row of A leaves the last PE after the skew of rows - 1 and cols - 1 cycles), so

    cycles = tiles x (m + 2 rows + cols - 2),  tiles = ceil(k / rows) x ceil(n / cols),

and the PE utilisation m k n / (rows cols cycles) approaches k n / (tiles rows cols) (1 for full tiles) as m
grows: fill and drain are paid once per tile. (Kung and Leiserson 1978; Jouppi et al. 2017, Section 2.)

That is the simulator's model and a pessimistic bound, not how a real matrix unit runs. The first TPU
double-buffers its weights and lets the next tile's weights "take effect with the advancing wave alongside
the first data of a new block" (Jouppi et al. 2017, Section 2): consecutive tiles then follow each other
with no bubble, and fill and drain are paid once per sequence of tiles. :func:`pipelined_cycles` counts
that case; there a tile costs max(m, rows) cycles, since the next tile's weights take ``rows`` cycles to
shift in behind the current one.

The simulator moves every value through explicit PE registers cycle by cycle; the closed form above is
checked against it in the tests, never used by it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SystolicRun:
    """Result of :func:`simulate`: the product, cycle counts and utilisation.

    ``frames`` (only with ``record_frames``) holds, per cycle of the first tile, a (rows, cols) array of the
    A-row index each PE is working on (-1: idle) and the phase ("load weights" or "stream").
    """

    product: np.ndarray
    rows: int
    cols: int
    m: int
    k: int
    n: int
    tiles: int
    cycles: int
    weight_load_cycles: int
    busy_pe_cycles: int
    frames: tuple = ()

    @property
    def macs(self) -> int:
        return self.m * self.k * self.n

    @property
    def utilization(self) -> float:
        """Useful multiply-accumulates over PE-cycles (rows x cols x cycles)."""
        return self.macs / (self.rows * self.cols * self.cycles)


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def closed_form_cycles(m: int, k: int, n: int, rows: int, cols: int) -> int:
    """Cycles of :func:`simulate` without overlap between tiles: tiles x (rows + m + rows + cols - 2)."""
    for name, value in (("m", m), ("k", k), ("n", n), ("rows", rows), ("cols", cols)):
        _positive_int(name, value)
    tiles = -(-k // rows) * -(-n // cols)
    return tiles * (rows + m + rows + cols - 2)


def pipelined_cycles(m: int, k: int, n: int, rows: int, cols: int) -> int:
    """Cycles with overlapped tiles (double-buffered weights switching with the data wave): the first
    tile's weights load (``rows``), each tile streams for max(m, rows) cycles, and the last tile's wave
    drains (rows + cols - 2). An idealised count (it ignores how operands reach the array), the
    counterpart of :func:`closed_form_cycles`, which pays load, fill and drain on every tile."""
    for name, value in (("m", m), ("k", k), ("n", n), ("rows", rows), ("cols", cols)):
        _positive_int(name, value)
    tiles = -(-k // rows) * -(-n // cols)
    return rows + tiles * max(m, rows) + rows + cols - 2


def utilization(m: int, k: int, n: int, rows: int, cols: int, pipelined: bool = False) -> float:
    """Useful multiply-accumulates over PE-cycles for either cycle count (no overlap, or pipelined)."""
    cycles = (pipelined_cycles if pipelined else closed_form_cycles)(m, k, n, rows, cols)
    return m * k * n / (rows * cols * cycles)


def _stream_tile(a_tile: np.ndarray, w: np.ndarray, real: np.ndarray, record: bool):
    """Stream the m rows of ``a_tile`` (m x rows) through an array holding ``w`` (rows x cols).

    ``real`` marks the PEs that hold a real weight (False: zero padding of a partial tile). Returns the
    (m x cols) partial product, the cycles taken, the busy PE-cycles (real PEs at work), and the frames.
    """
    m, rows = a_tile.shape
    cols = w.shape[1]
    x_reg = np.zeros((rows, cols), dtype=a_tile.dtype)  # activation held by each PE
    i_reg = np.full((rows, cols), -1, dtype=np.int64)  # which A row that activation belongs to
    p_reg = np.zeros((rows, cols), dtype=np.result_type(a_tile, w))  # partial sum leaving each PE
    out = np.zeros((m, cols), dtype=p_reg.dtype)
    done = np.zeros((m, cols), dtype=bool)
    r_idx = np.arange(rows)
    cycles = 0
    busy = 0
    frames = []
    while not done.all():
        t = cycles
        # activations move right; column 0 takes the skewed input A[t - r, r]
        x_in = np.empty_like(x_reg)
        i_in = np.empty_like(i_reg)
        x_in[:, 1:] = x_reg[:, :-1]
        i_in[:, 1:] = i_reg[:, :-1]
        i_new = t - r_idx
        valid = (i_new >= 0) & (i_new < m)
        i_in[:, 0] = np.where(valid, i_new, -1)
        x_in[:, 0] = np.where(valid, a_tile[np.clip(i_new, 0, m - 1), r_idx], 0)
        # partial sums move down; row 0 starts from zero
        p_in = np.zeros_like(p_reg)
        p_in[1:, :] = p_reg[:-1, :]
        active = i_in >= 0
        p_reg = p_in + np.where(active, x_in * w, 0)
        x_reg, i_reg = x_in, i_in
        busy += int((active & real).sum())
        # the bottom row's sums are finished outputs
        bottom = i_reg[rows - 1]
        for c in np.nonzero(bottom >= 0)[0]:
            out[bottom[c], c] = p_reg[rows - 1, c]
            done[bottom[c], c] = True
        if record:
            frames.append(i_reg.copy())
        cycles += 1
    return out, cycles, busy, frames


def simulate(a, b, rows: int = 4, cols: int = 4, record_frames: bool = False) -> SystolicRun:
    """Multiply ``a`` (m x k) by ``b`` (k x n) on a ``rows`` x ``cols`` weight-stationary array, cycle by
    cycle, tiling k over the rows and n over the columns (partial tiles are zero-padded; their idle PEs
    count against utilisation). Exact for integer inputs; for floats the sums are added in k order within
    a tile and tile by tile across tiles."""
    rows = _positive_int("rows", rows)
    cols = _positive_int("cols", cols)
    a = np.asarray(a)
    b = np.asarray(b)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"a and b must be 2-D, got shapes {a.shape} and {b.shape}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"a's columns must equal b's rows, got a {a.shape} and b {b.shape}")
    if 0 in a.shape or 0 in b.shape:
        raise ValueError(f"a and b must be non-empty, got a {a.shape} and b {b.shape}")
    m, k = a.shape
    n = b.shape[1]
    dtype = np.result_type(a, b)
    product = np.zeros((m, n), dtype=dtype)
    cycles = busy = tiles = 0
    frames: list = []
    for k0 in range(0, k, rows):
        for n0 in range(0, n, cols):
            w = np.zeros((rows, cols), dtype=dtype)
            kk, nn = min(rows, k - k0), min(cols, n - n0)
            w[:kk, :nn] = b[k0:k0 + kk, n0:n0 + nn]
            a_tile = np.zeros((m, rows), dtype=dtype)
            a_tile[:, :kk] = a[:, k0:k0 + kk]
            record = record_frames and tiles == 0
            if record:  # weights enter from the top, one PE row per cycle
                for step in range(rows):
                    frames.append(("load weights", step + 1, np.full((rows, cols), -1)))
            real = np.zeros((rows, cols), dtype=bool)
            real[:kk, :nn] = True
            out, c, bz, fr = _stream_tile(a_tile, w, real, record)
            product[:, n0:n0 + nn] += out[:, :nn]
            cycles += rows + c
            busy += bz
            tiles += 1
            if record:
                frames.extend(("stream", t, f) for t, f in enumerate(fr))
    return SystolicRun(product, rows, cols, m, k, n, tiles, cycles, tiles * rows, busy, tuple(frames))


def wavefront(m: int, rows: int, cols: int, cycle: int) -> np.ndarray:
    """Which A row each PE works on at ``cycle`` of streaming (-1: idle): PE (r, c) works on row
    cycle - r - c. A closed form of the simulator's frames (the anti-diagonal wavefront)."""
    for name, value in (("m", m), ("rows", rows), ("cols", cols)):
        _positive_int(name, value)
    if isinstance(cycle, bool) or not isinstance(cycle, (int, np.integer)) or cycle < 0:
        raise ValueError(f"cycle must be an integer >= 0, got {cycle!r}")
    i = cycle - np.arange(rows)[:, None] - np.arange(cols)[None, :]
    return np.where((i >= 0) & (i < m), i, -1)
