"""The backward pass of attention, standard and FlashAttention, in numpy with explicit slow-memory counters.

What this module shows: the standard backward pass (Dao et al. 2022, Algorithm 3) reads the N x N matrix P
that the forward pass stored and writes and re-reads two more N x N matrices (dP, dS): its traffic grows like
N^2 whatever the on-chip memory. FlashAttention's backward pass (Algorithm 4) stores nothing of size N x N: it
recomputes each tile ``P_ij = diag(l_i)^-1 exp(S_ij - m_i)`` from Q, K and the forward's row statistics, and
uses the identity ``D_i = sum_j P_ij dP_ij = rowsum(dO * O)_i`` so that dS needs no full row of P. Its
traffic is Theta(N^2 d^2 / M): still quadratic in N, but smaller by a constant factor that grows with the
on-chip memory M and shrinks with the head dimension d (Theorem 5 of the paper; Theorem 2 for the forward).

Every function here simulates one algorithm on a machine with a slow memory (HBM) and an on-chip memory
(SRAM). Arrays "in HBM" are ordinary numpy arrays; every element an algorithm moves between the two is counted
by a :class:`SlowMemory` (reads and writes, in elements, per array). Arithmetic is float64. The closed forms
(:func:`standard_backward_io`, :func:`flash_backward_io`, and the forward pair) give the same counts as
formulas; the tests check that the counters equal them exactly for any N, d and M.

Counting conventions (the paper's, made exact):

* a matmul "loads its operands by blocks" and each element of an operand is read once, each element of the
  result written once (an ideal matmul kernel, as Algorithms 0 and 3 assume);
* Algorithm 4 keeps ``dK_j``, ``dV_j`` on chip while its inner loop runs and writes them once; ``dQ`` is
  zero-filled in HBM first (``N_q d`` writes, needed because every visit does read-modify-write), while the
  zero-fill of ``dK``, ``dV`` that the paper's line 5 also lists is skipped: line 24 overwrites them;
* block sizes ``B_c = ceil(M / 4d)``, ``B_r = min(B_c, d)`` (Algorithm 1, line 1), M in elements; the last
  block of each kind may be partial, and counts use its true size;
* causal masking (top-left: query i sees keys j <= i) skips every tile entirely above the diagonal, as in
  block-sparse FlashAttention (Proposition 4); tiles that cross the diagonal are loaded whole.

Sizes: ``q`` is (N_q, d), ``k`` and ``v`` are (N_k, d); one head (batches and heads multiply every count).
"""

from __future__ import annotations

import math
import numbers
from collections import Counter
from dataclasses import dataclass, field

import numpy as np


@dataclass
class SlowMemory:
    """Counts elements moved between slow memory (HBM) and on-chip memory, per array name."""

    reads: Counter = field(default_factory=Counter)
    writes: Counter = field(default_factory=Counter)

    def read(self, name: str, array: np.ndarray) -> np.ndarray:
        """Count ``array.size`` elements read from array ``name`` and return an on-chip copy."""
        self.reads[name] += int(np.size(array))
        return np.array(array, dtype=np.float64, copy=True)

    def write(self, name: str, elements: int) -> None:
        """Count ``elements`` elements written to array ``name``."""
        self.writes[name] += int(elements)

    @property
    def elements_read(self) -> int:
        return sum(self.reads.values())

    @property
    def elements_written(self) -> int:
        return sum(self.writes.values())

    @property
    def elements_moved(self) -> int:
        return self.elements_read + self.elements_written


@dataclass(frozen=True)
class IOCount:
    """Elements read from and written to slow memory by one algorithm on one head."""

    elements_read: int
    elements_written: int

    @property
    def elements_moved(self) -> int:
        return self.elements_read + self.elements_written

    def bytes_moved(self, bytes_per_element: int = 2) -> int:
        """Bytes moved at ``bytes_per_element`` bytes per element (2 for fp16/bf16)."""
        return self.elements_moved * bytes_per_element


@dataclass(frozen=True)
class Gradients:
    """dQ, dK, dV of one head, and the counter of the run that produced them."""

    dq: np.ndarray
    dk: np.ndarray
    dv: np.ndarray
    memory: SlowMemory

    @property
    def io(self) -> IOCount:
        return IOCount(self.memory.elements_read, self.memory.elements_written)


@dataclass(frozen=True)
class ForwardResult:
    """O, and what the forward pass keeps for the backward: P (standard) or the row statistics m, l."""

    o: np.ndarray
    row_max: np.ndarray  # m_i
    row_sum: np.ndarray  # l_i
    p: np.ndarray | None  # the stored probabilities (standard attention only)
    memory: SlowMemory

    @property
    def io(self) -> IOCount:
        return IOCount(self.memory.elements_read, self.memory.elements_written)

    @property
    def lse(self) -> np.ndarray:
        """Row log-sum-exp L_i = m_i + log l_i (what FlashAttention-2 keeps instead of m and l)."""
        return self.row_max + np.log(self.row_sum)


# --------------------------------------------------------------------------------------------------------
# Validation and block sizes.
# --------------------------------------------------------------------------------------------------------


def _check_int(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_qkv(q, k, v) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    arrays = []
    for name, a in (("q", q), ("k", k), ("v", v)):
        a = np.asarray(a, dtype=np.float64)
        if a.ndim != 2 or min(a.shape) < 1:
            raise ValueError(f"{name} must be a non-empty 2-D array (rows, head_dim), got shape {a.shape}")
        arrays.append(a)
    q, k, v = arrays
    _check_matching_shapes(q, k, v)
    return q, k, v


def _check_matching_shapes(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> None:
    """2-D ``q`` (n_q, d), ``k`` and ``v`` (n_k, d): one head dimension, one key per value."""
    if k.shape != v.shape:
        raise ValueError(f"v.shape must equal k.shape {k.shape}, got {v.shape}")
    if q.shape[1] != k.shape[1]:
        raise ValueError(f"k.shape[1] (head_dim) must equal q.shape[1] {q.shape[1]}, got {k.shape[1]}")


def _scale(head_dim: int, softmax_scale) -> float:
    if softmax_scale is None:
        return 1.0 / math.sqrt(head_dim)
    if (isinstance(softmax_scale, bool) or not isinstance(softmax_scale, numbers.Real)
            or not math.isfinite(softmax_scale) or softmax_scale <= 0):
        raise ValueError(f"softmax_scale must be None or a finite positive number, got {softmax_scale!r}")
    return float(softmax_scale)


def block_sizes(head_dim: int, sram_elements: int) -> tuple[int, int]:
    """(B_r, B_c) = (min(ceil(M/4d), d), ceil(M/4d)) for on-chip memory of M elements (Algorithm 1, line 1).

    Requires d <= M (the paper's range d <= M <= N d).
    """
    head_dim = _check_int("head_dim", head_dim)
    sram_elements = _check_int("sram_elements", sram_elements)
    if sram_elements < head_dim:
        raise ValueError(f"sram_elements must be >= head_dim {head_dim}, got {sram_elements}")
    block_cols = -(-sram_elements // (4 * head_dim))
    return min(block_cols, head_dim), block_cols


def _blocks(n: int, size: int) -> list[tuple[int, int]]:
    return [(start, min(start + size, n)) for start in range(0, n, size)]


def _tile_visible(r0: int, r1: int, c0: int, causal: bool) -> bool:
    # A tile (rows [r0, r1), keys from c0) has a visible entry unless every key is right of every row.
    return not causal or c0 <= r1 - 1


# --------------------------------------------------------------------------------------------------------
# Forward passes (what the backward passes need), counted.
# --------------------------------------------------------------------------------------------------------


def _masked_scores(q, k, scale, causal):
    s = scale * q @ k.T
    if causal:
        s = np.where(np.arange(k.shape[0])[None, :] <= np.arange(q.shape[0])[:, None], s, -np.inf)
    return s


def standard_forward(q, k, v, causal: bool = False, softmax_scale: float | None = None) -> ForwardResult:
    """Algorithm 0: S = scale Q K^T written to HBM, P = softmax(S) written to HBM, O = P V.

    Counts equal :func:`standard_forward_io`. Keeps P for the backward pass.
    """
    q, k, v = _check_qkv(q, k, v)
    scale = _scale(q.shape[1], softmax_scale)
    mem = SlowMemory()
    s = _masked_scores(mem.read("Q", q), mem.read("K", k), scale, causal)
    mem.write("S", s.size)
    s = mem.read("S", s)
    row_max = s.max(axis=1)
    e = np.exp(s - row_max[:, None])
    row_sum = e.sum(axis=1)
    p = e / row_sum[:, None]
    mem.write("P", p.size)
    o = mem.read("P", p) @ mem.read("V", v)
    mem.write("O", o.size)
    return ForwardResult(o=o, row_max=row_max, row_sum=row_sum, p=p, memory=mem)


def flash_forward(q, k, v, causal: bool = False, softmax_scale: float | None = None, *,
                  sram_elements: int | None = None, block_rows: int | None = None,
                  block_cols: int | None = None) -> ForwardResult:
    """Algorithm 1 (K/V blocks outer, Q blocks inner; O, l, m read and written back on every visit).

    Block sizes from ``sram_elements`` (M) by :func:`block_sizes`, or given. Counts equal
    :func:`flash_forward_io`.
    """
    q, k, v = _check_qkv(q, k, v)
    block_rows, block_cols = _resolve_blocks(q.shape[1], sram_elements, block_rows, block_cols)
    scale = _scale(q.shape[1], softmax_scale)
    n_q, d = q.shape
    mem = SlowMemory()
    o = np.zeros((n_q, d))
    row_sum = np.zeros(n_q)
    row_max = np.full(n_q, -np.inf)
    mem.write("O", o.size)
    mem.write("l", n_q)
    mem.write("m", n_q)
    for c0, c1 in _blocks(k.shape[0], block_cols):
        kj, vj = mem.read("K", k[c0:c1]), mem.read("V", v[c0:c1])
        for r0, r1 in _blocks(n_q, block_rows):
            if not _tile_visible(r0, r1, c0, causal):
                continue
            qi, oi = mem.read("Q", q[r0:r1]), mem.read("O", o[r0:r1])
            li, mi = mem.read("l", row_sum[r0:r1]), mem.read("m", row_max[r0:r1])
            s = scale * qi @ kj.T
            if causal:
                s = np.where(np.arange(c0, c1)[None, :] <= np.arange(r0, r1)[:, None], s, -np.inf)
            m_tile = s.max(axis=1)
            # Rows whose keys in this tile are all masked have m_tile = -inf: they gain nothing here.
            m_new = np.maximum(mi, m_tile)
            safe = np.where(np.isfinite(m_new), m_new, 0.0)
            p = np.exp(s - safe[:, None])
            alpha = np.exp(mi - safe)
            l_tile = p.sum(axis=1)
            l_new = alpha * li + l_tile  # p is already relative to m_new
            keep = l_new > 0
            o_new = np.where(keep[:, None], (alpha * li)[:, None] * oi + p @ vj, 0.0)
            o[r0:r1] = np.where(keep[:, None], o_new / np.where(keep, l_new, 1.0)[:, None], 0.0)
            row_sum[r0:r1], row_max[r0:r1] = l_new, m_new
            mem.write("O", oi.size)
            mem.write("l", r1 - r0)
            mem.write("m", r1 - r0)
    return ForwardResult(o=o, row_max=row_max, row_sum=row_sum, p=None, memory=mem)


def _resolve_blocks(head_dim, sram_elements, block_rows, block_cols) -> tuple[int, int]:
    if sram_elements is not None:
        if block_rows is not None or block_cols is not None:
            raise ValueError("give either sram_elements or block_rows and block_cols, not both "
                             f"(got sram_elements={sram_elements!r}, block_rows={block_rows!r}, "
                             f"block_cols={block_cols!r})")
        return block_sizes(head_dim, sram_elements)
    if block_rows is None or block_cols is None:
        raise ValueError(f"block_rows and block_cols are both needed without sram_elements, got "
                         f"block_rows={block_rows!r}, block_cols={block_cols!r}")
    return _check_int("block_rows", block_rows), _check_int("block_cols", block_cols)


# --------------------------------------------------------------------------------------------------------
# Backward passes, counted.
# --------------------------------------------------------------------------------------------------------


def standard_backward(q, k, v, p, do, softmax_scale: float | None = None) -> Gradients:
    """Algorithm 3: dV = P^T dO; dP = dO V^T (written); dS = P * (dP - rowsum(P * dP)) (written);
    dQ = scale dS K; dK = scale dS^T Q. Reads the stored P twice. Counts equal :func:`standard_backward_io`.

    (The paper's Algorithm 3 has no scale because its S = Q K^T; here S = scale Q K^T, so dQ and dK carry
    the factor.)
    """
    q, k, v = _check_qkv(q, k, v)
    p = np.asarray(p, dtype=np.float64)
    do = np.asarray(do, dtype=np.float64)
    if p.shape != (q.shape[0], k.shape[0]):
        raise ValueError(f"p.shape must be (N_q, N_k) = {(q.shape[0], k.shape[0])}, got {p.shape}")
    if do.shape != q.shape:
        raise ValueError(f"do.shape must equal q.shape {q.shape}, got {do.shape}")
    scale = _scale(q.shape[1], softmax_scale)
    mem = SlowMemory()
    dv = mem.read("P", p).T @ mem.read("dO", do)
    mem.write("dV", dv.size)
    dp = mem.read("dO", do) @ mem.read("V", v).T
    mem.write("dP", dp.size)
    p_chip, dp_chip = mem.read("P", p), mem.read("dP", dp)
    ds = p_chip * (dp_chip - (p_chip * dp_chip).sum(axis=1, keepdims=True))
    mem.write("dS", ds.size)
    dq = scale * mem.read("dS", ds) @ mem.read("K", k)
    mem.write("dQ", dq.size)
    dk = scale * mem.read("dS", ds).T @ mem.read("Q", q)
    mem.write("dK", dk.size)
    return Gradients(dq=dq, dk=dk, dv=dv, memory=mem)


def flash_backward(q, k, v, o, do, row_max, row_sum, causal: bool = False,
                   softmax_scale: float | None = None, *, sram_elements: int | None = None,
                   block_rows: int | None = None, block_cols: int | None = None) -> Gradients:
    """Algorithm 4 (no dropout): K/V blocks outer, Q blocks inner; P recomputed from m and l per tile.

    For each key block j: load K_j, V_j; keep dK_j, dV_j on chip; for each query block i load Q_i, O_i, dO_i,
    dQ_i, l_i, m_i; recompute ``P_ij = exp(S_ij - m_i) / l_i``; ``dV_j += P_ij^T dO_i``;
    ``dP_ij = dO_i V_j^T``; ``D_i = rowsum(dO_i * O_i)``; ``dS_ij = P_ij * (dP_ij - D_i)``;
    write ``dQ_i += scale dS_ij K_j``; ``dK_j += scale dS_ij^T Q_i``; after the inner loop write dK_j, dV_j.
    Counts equal :func:`flash_backward_io`.
    """
    q, k, v = _check_qkv(q, k, v)
    o, do = np.asarray(o, dtype=np.float64), np.asarray(do, dtype=np.float64)
    for name, a in (("o", o), ("do", do)):
        if a.shape != q.shape:
            raise ValueError(f"{name}.shape must equal q.shape {q.shape}, got {a.shape}")
    row_max, row_sum = np.asarray(row_max, dtype=np.float64), np.asarray(row_sum, dtype=np.float64)
    for name, a in (("row_max", row_max), ("row_sum", row_sum)):
        if a.shape != (q.shape[0],):
            raise ValueError(f"{name}.shape must be (N_q,) = {(q.shape[0],)}, got {a.shape}")
    block_rows, block_cols = _resolve_blocks(q.shape[1], sram_elements, block_rows, block_cols)
    scale = _scale(q.shape[1], softmax_scale)
    n_q, d = q.shape
    mem = SlowMemory()
    dq_hbm = np.zeros((n_q, d))
    mem.write("dQ", dq_hbm.size)
    dk_hbm, dv_hbm = np.empty_like(k), np.empty_like(v)
    for c0, c1 in _blocks(k.shape[0], block_cols):
        kj, vj = mem.read("K", k[c0:c1]), mem.read("V", v[c0:c1])
        dkj, dvj = np.zeros_like(kj), np.zeros_like(vj)
        for r0, r1 in _blocks(n_q, block_rows):
            if not _tile_visible(r0, r1, c0, causal):
                continue
            qi, oi, doi = mem.read("Q", q[r0:r1]), mem.read("O", o[r0:r1]), mem.read("dO", do[r0:r1])
            dqi = mem.read("dQ", dq_hbm[r0:r1])
            li, mi = mem.read("l", row_sum[r0:r1]), mem.read("m", row_max[r0:r1])
            s = scale * qi @ kj.T
            if causal:
                s = np.where(np.arange(c0, c1)[None, :] <= np.arange(r0, r1)[:, None], s, -np.inf)
            p = np.exp(s - mi[:, None]) / li[:, None]
            dvj += p.T @ doi
            dp = doi @ vj.T
            d_i = (doi * oi).sum(axis=1)  # D_i = rowsum(dO_i * O_i): no full row of P needed
            ds = p * (dp - d_i[:, None])
            dq_hbm[r0:r1] = dqi + scale * ds @ kj
            mem.write("dQ", (r1 - r0) * d)
            dkj += scale * ds.T @ qi
        dk_hbm[c0:c1], dv_hbm[c0:c1] = dkj, dvj
        mem.write("dK", dkj.size)
        mem.write("dV", dvj.size)
    return Gradients(dq=dq_hbm, dk=dk_hbm, dv=dv_hbm, memory=mem)


# --------------------------------------------------------------------------------------------------------
# Closed forms (elements; one head).
# --------------------------------------------------------------------------------------------------------


def _visible_rows_per_key_block(n_q: int, n_k: int, block_rows: int, block_cols: int,
                                causal: bool) -> list[tuple[int, int]]:
    """For each key block: (rows in the query blocks it visits, number of query blocks it visits)."""
    out = []
    t_r = -(-n_q // block_rows)
    for c0, _ in _blocks(n_k, block_cols):
        if not causal:
            out.append((n_q, t_r))
            continue
        # Query blocks i whose last row r1 - 1 >= c0: those from floor(c0 / B_r) on (none if c0 >= N_q).
        if c0 >= n_q:
            out.append((0, 0))
            continue
        first = c0 // block_rows
        visited = max(0, t_r - first)
        out.append((max(0, n_q - first * block_rows), visited))
    return out


def standard_forward_io(n_q: int, n_k: int, head_dim: int) -> IOCount:
    """Algorithm 0: reads Q, K (N_q d + N_k d), S, P (2 N_q N_k), V (N_k d); writes S, P, O.

    reads = 2 N_q N_k + N_q d + 2 N_k d, writes = 2 N_q N_k + N_q d (4 N^2 + 4 N d when N_q = N_k = N).
    """
    n_q, n_k, d = (_check_int(n, x) for n, x in (("n_q", n_q), ("n_k", n_k), ("head_dim", head_dim)))
    return IOCount(2 * n_q * n_k + n_q * d + 2 * n_k * d, 2 * n_q * n_k + n_q * d)


def standard_backward_io(n_q: int, n_k: int, head_dim: int) -> IOCount:
    """Algorithm 3: reads = 5 N_q N_k + 3 N_q d + 2 N_k d; writes = 2 N_q N_k + N_q d + 2 N_k d.

    (7 N^2 + 8 N d elements in all when N_q = N_k = N: Theta(N d + N^2), Theorem 5.)
    """
    n_q, n_k, d = (_check_int(n, x) for n, x in (("n_q", n_q), ("n_k", n_k), ("head_dim", head_dim)))
    return IOCount(5 * n_q * n_k + 3 * n_q * d + 2 * n_k * d, 2 * n_q * n_k + n_q * d + 2 * n_k * d)


def flash_forward_io(n_q: int, n_k: int, head_dim: int, *, sram_elements: int | None = None,
                     block_rows: int | None = None, block_cols: int | None = None,
                     causal: bool = False) -> IOCount:
    """Algorithm 1: writes the zero-filled O, l, m (N_q d + 2 N_q); reads K, V once (2 N_k d); each visit of
    a query block reads Q_i, O_i, l_i, m_i and writes O_i, l_i, m_i back.

    Without a mask: reads = 2 N_k d + T_c (2 N_q d + 2 N_q), writes = N_q d + 2 N_q + T_c (N_q d + 2 N_q),
    with T_c = ceil(N_k / B_c): about 12 N^2 d^2 / M in all (Theorem 2).
    """
    n_q, n_k, d = (_check_int(n, x) for n, x in (("n_q", n_q), ("n_k", n_k), ("head_dim", head_dim)))
    block_rows, block_cols = _resolve_blocks(d, sram_elements, block_rows, block_cols)
    visits = _visible_rows_per_key_block(n_q, n_k, block_rows, block_cols, causal)
    rows = sum(r for r, _ in visits)
    return IOCount(2 * n_k * d + rows * (2 * d + 2), n_q * d + 2 * n_q + rows * (d + 2))


def flash_backward_io(n_q: int, n_k: int, head_dim: int, *, sram_elements: int | None = None,
                      block_rows: int | None = None, block_cols: int | None = None,
                      causal: bool = False) -> IOCount:
    """Algorithm 4: zero-fill dQ (N_q d writes); read K, V once (2 N_k d); each visit of a query block reads
    Q_i, O_i, dO_i, dQ_i (4 B_r d) and l_i, m_i (2 B_r) and writes dQ_i (B_r d); write dK, dV once (2 N_k d).

    Without a mask: reads = 2 N_k d + T_c (4 N_q d + 2 N_q), writes = N_q d + 2 N_k d + T_c N_q d, with
    T_c = ceil(N_k / B_c): about 20 N^2 d^2 / M in all (Theta(N^2 d^2 / M), Theorem 5). With ``causal``,
    the tiles above the diagonal are skipped (each key block visits the query blocks from floor(c0 / B_r)).
    """
    n_q, n_k, d = (_check_int(n, x) for n, x in (("n_q", n_q), ("n_k", n_k), ("head_dim", head_dim)))
    block_rows, block_cols = _resolve_blocks(d, sram_elements, block_rows, block_cols)
    visits = _visible_rows_per_key_block(n_q, n_k, block_rows, block_cols, causal)
    rows = sum(r for r, _ in visits)
    return IOCount(2 * n_k * d + rows * (4 * d + 2), n_q * d + 2 * n_k * d + rows * d)


# --------------------------------------------------------------------------------------------------------
# FLOP and memory footprint.
# --------------------------------------------------------------------------------------------------------


def matmul_flop(n_q: int, n_k: int, head_dim: int, *, recompute: bool, causal: bool = False) -> dict:
    """Matmul FLOP of one head: forward (Q K^T, P V: 4 N_q N_k d), backward (dV, dP, dQ, dK: 8 N_q N_k d,
    plus Q K^T again when ``recompute``: 10 N_q N_k d). Halved for ``causal`` (the papers' convention).

    Returns ``{"forward": ..., "backward": ..., "total": ...}``. Standard: 12 N^2 d; FlashAttention:
    14 N^2 d, 17 % more.
    """
    n_q, n_k, d = (_check_int(n, x) for n, x in (("n_q", n_q), ("n_k", n_k), ("head_dim", head_dim)))
    unit = 2.0 * n_q * n_k * d * (0.5 if causal else 1.0)
    forward, backward = 2 * unit, (5 if recompute else 4) * unit
    return {"forward": forward, "backward": backward, "total": forward + backward}


def saved_for_backward_elements(n_q: int, n_k: int, head_dim: int, *, flash: bool) -> int:
    """Elements one head keeps from the forward pass for the backward, beyond Q, K, V and O.

    Standard attention keeps P (N_q N_k); FlashAttention-2 keeps one log-sum-exp per row (N_q) (the paper's
    Algorithm 1 keeps m and l, 2 N_q).
    """
    n_q, n_k, _ = (_check_int(n, x) for n, x in (("n_q", n_q), ("n_k", n_k), ("head_dim", head_dim)))
    return n_q if flash else n_q * n_k


@dataclass(frozen=True)
class TrafficPoint:
    """Backward (and forward + backward) slow-memory traffic of one head at one (N, d, M)."""

    n_seq: int
    head_dim: int
    sram_elements: int
    standard_backward: int
    flash_backward: int
    standard_total: int
    flash_total: int

    @property
    def backward_ratio(self) -> float:
        """Standard over FlashAttention, backward pass alone."""
        return self.standard_backward / self.flash_backward

    @property
    def total_ratio(self) -> float:
        """Standard over FlashAttention, forward + backward."""
        return self.standard_total / self.flash_total


def traffic_point(n_seq: int, head_dim: int, sram_elements: int) -> TrafficPoint:
    """Closed-form traffic (elements) of both algorithms at N_q = N_k = ``n_seq``, no mask."""
    sb = standard_backward_io(n_seq, n_seq, head_dim).elements_moved
    fb = flash_backward_io(n_seq, n_seq, head_dim, sram_elements=sram_elements).elements_moved
    sf = standard_forward_io(n_seq, n_seq, head_dim).elements_moved
    ff = flash_forward_io(n_seq, n_seq, head_dim, sram_elements=sram_elements).elements_moved
    return TrafficPoint(n_seq, head_dim, sram_elements, sb, fb, sb + sf, fb + ff)


def traffic_table(n_seqs, head_dims, sram_elements_list) -> list[TrafficPoint]:
    """:func:`traffic_point` over every combination (N, d, M), in that nesting order."""
    return [traffic_point(n, d, m) for n in n_seqs for d in head_dims for m in sram_elements_list]


__all__ = [
    "ForwardResult", "Gradients", "IOCount", "SlowMemory", "TrafficPoint", "block_sizes", "flash_backward",
    "flash_backward_io", "flash_forward", "flash_forward_io", "matmul_flop", "saved_for_backward_elements",
    "standard_backward", "standard_backward_io", "standard_forward", "standard_forward_io", "traffic_point",
    "traffic_table",
]
