"""Attention in numpy with every access to slow memory (HBM) counted: standard attention, softmax in three
passes and online, and the FlashAttention forward pass in both loop orders (Dao et al., NeurIPS 2022,
"FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness", Algorithms 0 and 1 and
Theorem 2; Dao 2023, "FlashAttention-2", for the query-outer order and deferred normalisation).

Slow memory is modelled by the caller's numpy arrays; fast memory (SRAM) by local variables. An
:class:`IOCounter` counts **elements** read from and written to slow memory (multiply by the bytes per
element for bytes). Every function takes float arrays (float64 gives outputs equal to the reference to
rounding) of shapes ``q: (N_q, d)``, ``k, v: (N_k, d)``, one head.

Names (stable; chapters 12-16 use them):

* :class:`IOCounter` (``reads``, ``writes``, ``total``; ``read(array)``, ``write(n)``).
* :func:`standard_attention` -> :class:`StandardAttentionResult` (``output``, ``scores``, ``probabilities``,
  ``lse``, ``counter``): Algorithm 0, S and P written to and read back from HBM.
* :func:`safe_softmax` -> :class:`SoftmaxResult` (three passes), :func:`online_softmax` ->
  :class:`SoftmaxResult` with a ``trace`` of :class:`OnlineStep` (two passes), :func:`blockwise_softmax_wrong`;
  :func:`row_reduction` -> :class:`RowReduction`, the stages of a GPU block's max or sum over a row.
* :class:`PartialState` ``(row_max, row_sum, output)`` and :func:`merge_states`: combine two partial
  softmax-attention states over disjoint key sets (the basis of split-KV decoding).
* :func:`flash_attention_forward` -> :class:`FlashAttentionResult` (``output``, ``lse``, ``row_max``,
  ``row_sum``, ``counter``, ``block_rows``, ``block_cols``, ``blocks_visited``, ``kv_passes``, ``trace`` of
  :class:`FlashStep`). ``loop_order="kv_outer"`` is Algorithm 1 (K/V blocks outside, Q blocks inside, O, m, l
  read and written back each step); ``"q_outer"`` is FlashAttention-2's order (Q blocks outside, one
  final normalisation and one write of O and L per query block). Causal masks skip whole blocks above the
  diagonal; ``block_mask`` (a T_r x T_c boolean array) skips blocks for block-sparse attention.
* Closed forms: :func:`standard_io` (and its three steps, :func:`standard_ledger`), :func:`flash_io` (exact element counts, equal to the counters for any
  N, d, block sizes), :func:`flash_block_sizes` (from on-chip memory M), :func:`theorem2_flash_accesses`
  (``N^2 d^2 / M``), :func:`on_chip_elements`, :func:`compare_traffic` -> :class:`TrafficComparison` (the
  explorer's model), :func:`attention_memory_bytes` (what stays in HBM for the
  backward pass: P, or only the row statistics).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

LOOP_ORDERS = ("kv_outer", "q_outer")


# --------------------------------------------------------------------------------------------------------
# The counter of slow-memory traffic.
# --------------------------------------------------------------------------------------------------------


@dataclass
class IOCounter:
    """Elements read from and written to slow memory (HBM)."""

    reads: int = 0
    writes: int = 0

    def read(self, array: np.ndarray) -> np.ndarray:
        """Load ``array`` (a view of slow memory) into fast memory: count its elements, return a copy."""
        self.reads += int(np.size(array))
        return np.array(array, copy=True)

    def write(self, n_elements: int) -> None:
        """Count ``n_elements`` stored to slow memory."""
        self.writes += int(n_elements)

    @property
    def total(self) -> int:
        """Reads plus writes, in elements."""
        return self.reads + self.writes

    def bytes_moved(self, bytes_per_element: int) -> int:
        """Total traffic in bytes for a format of ``bytes_per_element`` bytes."""
        return self.total * int(bytes_per_element)


@dataclass(frozen=True)
class IOCount:
    """A closed-form count of slow-memory accesses, in elements."""

    reads: int
    writes: int

    @property
    def total(self) -> int:
        return self.reads + self.writes


# --------------------------------------------------------------------------------------------------------
# Checks.
# --------------------------------------------------------------------------------------------------------


def _check_int(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_qkv(q, k, v):
    arrays = []
    for name, a in (("q", q), ("k", k), ("v", v)):
        a = np.asarray(a)
        if a.ndim != 2 or not np.issubdtype(a.dtype, np.floating):
            raise ValueError(f"{name} must be a 2-D float array (tokens, head_dim), got shape {a.shape}, "
                             f"dtype {a.dtype}")
        arrays.append(a)
    q, k, v = arrays
    if k.shape[1] != q.shape[1]:
        raise ValueError(f"k.shape[1] must equal q.shape[1] = {q.shape[1]}, got {k.shape[1]}")
    if v.shape != k.shape:
        raise ValueError(f"v.shape must equal k.shape {k.shape}, got {v.shape}")
    if q.shape[0] < 1 or k.shape[0] < 1:
        raise ValueError(f"q and k must have at least one row, got q.shape {q.shape}, k.shape {k.shape}")
    return q, k, v


def _scale(head_dim: int, scale) -> float:
    if scale is None:
        return 1.0 / math.sqrt(head_dim)
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a positive finite number or None, got {scale!r}")
    return float(scale)


def attention_mask(n_q: int, n_k: int, causal: bool = False, window: int | None = None) -> np.ndarray:
    """Boolean (N_q, N_k) array, True where query i may see key j: all, or j <= i when causal (top-left
    aligned), and additionally i - j < window for a sliding window of ``window`` keys (causal only)."""
    n_q = _check_int("n_q", n_q)
    n_k = _check_int("n_k", n_k)
    i = np.arange(n_q)[:, None]
    j = np.arange(n_k)[None, :]
    keep = np.ones((n_q, n_k), dtype=bool)
    if causal:
        keep &= j <= i
    if window is not None:
        window = _check_int("window", window)
        if not causal:
            raise ValueError(f"window needs causal=True (a window of past keys), got window={window}")
        keep &= i - j < window
    return keep


# --------------------------------------------------------------------------------------------------------
# Standard attention (Algorithm 0).
# --------------------------------------------------------------------------------------------------------


@dataclass
class StandardAttentionResult:
    output: np.ndarray
    scores: np.ndarray
    probabilities: np.ndarray
    lse: np.ndarray
    counter: IOCounter


def standard_attention(q, k, v, causal: bool = False, scale: float | None = None,
                       mask: np.ndarray | None = None) -> StandardAttentionResult:
    """Algorithm 0 of the FlashAttention paper, counted: read Q and K, write S = scale Q K^T; read S, write
    P = softmax(S); read P and V, write O = P V. Reads N_q d + 2 N_k d + 2 N_q N_k, writes 2 N_q N_k + N_q d
    (each matrix moved once: the most favourable count for the standard implementation).

    ``mask`` (boolean (N_q, N_k), True = keep) is combined with ``causal``; every row must keep a key.
    """
    q, k, v = _check_qkv(q, k, v)
    n_q, n_k = q.shape[0], k.shape[0]
    keep = attention_mask(n_q, n_k, causal)
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (n_q, n_k):
            raise ValueError(f"mask.shape must be (N_q, N_k) = {(n_q, n_k)}, got {mask.shape}")
        keep &= mask
    if not keep.any(axis=1).all():
        raise ValueError("mask must leave every query row at least one key")
    c = IOCounter()
    s = _scale(q.shape[1], scale) * (c.read(q) @ c.read(k).T)
    s = np.where(keep, s, -np.inf)
    c.write(s.size)  # S to HBM
    s_in = c.read(s)
    m = s_in.max(axis=1, keepdims=True)
    e = np.exp(s_in - m)
    row_sum = e.sum(axis=1, keepdims=True)
    p = e / row_sum
    c.write(p.size)  # P to HBM
    o = c.read(p) @ c.read(v)
    c.write(o.size)  # O to HBM
    return StandardAttentionResult(o, s, p, (m + np.log(row_sum))[:, 0], c)


def standard_io(n_q: int, n_k: int, head_dim: int) -> IOCount:
    """Closed form of :func:`standard_attention`'s counter (elements)."""
    n_q, n_k, d = (_check_int(a, b) for a, b in (("n_q", n_q), ("n_k", n_k), ("head_dim", head_dim)))
    return IOCount(reads=n_q * d + 2 * n_k * d + 2 * n_q * n_k, writes=2 * n_q * n_k + n_q * d)


def standard_ledger(n_q: int, n_k: int, head_dim: int) -> list[tuple[str, int, int]]:
    """Algorithm 0 step by step: ``(step, elements read, elements written)``; the sums equal
    :func:`standard_io`."""
    n_q, n_k, d = (_check_int(a, b) for a, b in (("n_q", n_q), ("n_k", n_k), ("head_dim", head_dim)))
    return [
        ("S = Q Kᵀ (read Q, K; write S)", n_q * d + n_k * d, n_q * n_k),
        ("P = softmax(S) (read S; write P)", n_q * n_k, n_q * n_k),
        ("O = P V (read P, V; write O)", n_q * n_k + n_k * d, n_q * d),
    ]


# --------------------------------------------------------------------------------------------------------
# Softmax: three passes, online, and the wrong blockwise version.
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OnlineStep:
    """State after block ``block`` (0-based) of online softmax: the block's values and (m, l) so far."""

    block: int
    values: np.ndarray
    block_max: float
    row_max: float
    row_sum: float
    rescale: float  # exp(m_old - m_new): the factor the old sum was multiplied by


@dataclass
class SoftmaxResult:
    output: np.ndarray
    row_max: float
    row_sum: float
    passes: int
    counter: IOCounter
    trace: list[OnlineStep] = field(default_factory=list)


def _check_vector(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size < 1:
        raise ValueError(f"x must be a non-empty 1-D array, got shape {x.shape}")
    return x


def safe_softmax(x) -> SoftmaxResult:
    """Safe softmax as written on paper: pass 1 reads x for its max m, pass 2 reads x for
    l = sum exp(x - m), pass 3 reads x and writes exp(x - m) / l. 3n reads, n writes."""
    x = _check_vector(x)
    c = IOCounter()
    m = float(c.read(x).max())
    l = float(np.exp(c.read(x) - m).sum())
    y = np.exp(c.read(x) - m) / l
    c.write(y.size)
    return SoftmaxResult(y, m, l, 3, c)


def online_softmax(x, block: int) -> SoftmaxResult:
    """Online softmax (Milakov and Gimelshein 2018): one pass over blocks of ``block`` values keeps a running
    max m and a running sum l, rescaling l by exp(m_old - m_new) whenever m grows; a second pass writes
    exp(x - m) / l. 2n reads, n writes. ``trace`` has one :class:`OnlineStep` per block."""
    x = _check_vector(x)
    block = _check_int("block", block)
    c = IOCounter()
    m, l = -math.inf, 0.0
    trace = []
    for b, start in enumerate(range(0, x.size, block)):
        xb = c.read(x[start:start + block])
        m_new = max(m, float(xb.max()))
        rescale = math.exp(m - m_new)  # exp(-inf) = 0 on the first block
        l = l * rescale + float(np.exp(xb - m_new).sum())
        m = m_new
        trace.append(OnlineStep(b, xb, float(xb.max()), m, l, rescale))
    y = np.exp(c.read(x) - m) / l
    c.write(y.size)
    return SoftmaxResult(y, m, l, 2, c, trace)


def blockwise_softmax_wrong(x, block: int) -> np.ndarray:
    """The tempting mistake: softmax each block on its own and concatenate. Each block then sums to 1, so
    the whole sums to the number of blocks, and values are normalised by their own block's sum."""
    x = _check_vector(x)
    block = _check_int("block", block)
    parts = []
    for start in range(0, x.size, block):
        xb = x[start:start + block]
        e = np.exp(xb - xb.max())
        parts.append(e / e.sum())
    return np.concatenate(parts)


@dataclass(frozen=True)
class RowReduction:
    """How one GPU block (a Triton program) reduces ``n_values`` values to one (a max or a sum), in the
    three stages a compiler emits for ``tl.max``/``tl.sum`` over a block spread across its threads:

    1. each thread combines the ``values_per_thread`` values it holds in registers
       (``in_thread_ops = values_per_thread - 1`` operations);
    2. the threads of a warp combine their values with ``shuffle_steps = log2(warp_size)`` butterfly
       exchanges of registers (``shfl.sync.bfly`` in PTX), no memory involved;
    3. when there are several warps, each writes its partial to shared memory (``warp_partials`` values),
       the block waits at a barrier, and ``cross_warp_steps = log2(num_warps)`` more shuffles combine the
       partials read back.
    """

    n_values: int
    num_warps: int
    warp_size: int
    values_per_thread: int
    in_thread_ops: int
    shuffle_steps: int
    warp_partials: int
    cross_warp_steps: int

    @property
    def combine_ops(self) -> int:
        """Operations on one thread's critical path: in-thread, in-warp and across warps."""
        return self.in_thread_ops + self.shuffle_steps + self.cross_warp_steps


def row_reduction(n_values: int, num_warps: int, warp_size: int = 32) -> RowReduction:
    """The stages of a block reduction of ``n_values`` values over ``num_warps`` warps of ``warp_size``
    threads (all powers of two; a block smaller than the threads leaves one value per thread)."""
    n, w, ws = (_check_int(a, v) for a, v in (("n_values", n_values), ("num_warps", num_warps),
                                              ("warp_size", warp_size)))
    for name, v in (("n_values", n), ("num_warps", w), ("warp_size", ws)):
        if v & (v - 1):
            raise ValueError(f"{name} must be a power of two, got {v}")
    per_thread = max(1, n // (w * ws))
    return RowReduction(n, w, ws, per_thread, per_thread - 1, ws.bit_length() - 1, w if w > 1 else 0,
                        w.bit_length() - 1)


@dataclass(frozen=True)
class PartialState:
    """Attention of some queries over a subset of the keys, kept unnormalised: per row the max m of the
    scores seen, l = sum exp(s - m) and output = sum exp(s - m) v (divide by l for the normalised output)."""

    row_max: np.ndarray
    row_sum: np.ndarray
    output: np.ndarray

    def normalized(self) -> np.ndarray:
        return self.output / self.row_sum[:, None]

    @property
    def lse(self) -> np.ndarray:
        return self.row_max + np.log(self.row_sum)


def partial_state(q, k, v, scale: float | None = None) -> PartialState:
    """The :class:`PartialState` of queries ``q`` over keys ``k`` and values ``v`` (no masking)."""
    q, k, v = _check_qkv(q, k, v)
    s = _scale(q.shape[1], scale) * (q @ k.T)
    m = s.max(axis=1)
    e = np.exp(s - m[:, None])
    return PartialState(m, e.sum(axis=1), e @ v)


def merge_states(a: PartialState, b: PartialState) -> PartialState:
    """Combine the states of two disjoint key sets: m = max(m_a, m_b), each side rescaled by exp(m_x - m).
    Associative and commutative (up to rounding), so the key sets can be processed in any order or in
    parallel (split-KV / Flash-Decoding) and merged at the end."""
    if a.output.shape != b.output.shape:
        raise ValueError(f"b.output.shape must equal a.output.shape {a.output.shape}, got {b.output.shape}")
    m = np.maximum(a.row_max, b.row_max)
    fa_, fb = np.exp(a.row_max - m), np.exp(b.row_max - m)
    return PartialState(m, fa_ * a.row_sum + fb * b.row_sum, fa_[:, None] * a.output + fb[:, None] * b.output)


# --------------------------------------------------------------------------------------------------------
# FlashAttention forward.
# --------------------------------------------------------------------------------------------------------


def flash_block_sizes(sram_elements: int, head_dim: int, loop_order: str = "kv_outer") -> tuple[int, int]:
    """(B_r, B_c) from on-chip memory of M elements, as Algorithm 1 sets them: B_c = ceil(M / 4d),
    B_r = min(ceil(M / 4d), d). The four d-wide tiles (Q_i, O_i, K_j, V_j) then take at most M (up to
    rounding), and the B_r x B_c score tile at most M / 4, which is why B_r <= d. For ``"q_outer"`` the
    roles swap: the resident block (queries) gets ceil(M / 4d) rows and the streamed one min(., d)."""
    sram_elements = _check_int("sram_elements", sram_elements)
    head_dim = _check_int("head_dim", head_dim)
    if loop_order not in LOOP_ORDERS:
        raise ValueError(f"loop_order must be one of {LOOP_ORDERS}, got {loop_order!r}")
    big = math.ceil(sram_elements / (4 * head_dim))
    small = min(big, head_dim)
    return (small, big) if loop_order == "kv_outer" else (big, small)


def on_chip_elements(block_rows: int, block_cols: int, head_dim: int) -> int:
    """Fast-memory elements one step holds: Q_i and O_i (2 B_r d), K_j and V_j (2 B_c d), the score/
    probability tile (B_r B_c) and the row statistics m, l (2 B_r)."""
    br, bc, d = (_check_int(a, b) for a, b in (("block_rows", block_rows), ("block_cols", block_cols),
                                               ("head_dim", head_dim)))
    return 2 * br * d + 2 * bc * d + br * bc + 2 * br


@dataclass(frozen=True)
class FlashStep:
    """One (query block, key block) step: ``outer``/``inner`` block indices in loop order, the rows and
    columns it covers, the running (m, l) of those rows after the step, and the counter so far."""

    outer: int
    inner: int
    rows: tuple[int, int]
    cols: tuple[int, int]
    row_max: np.ndarray
    row_sum: np.ndarray
    reads: int
    writes: int


@dataclass
class FlashAttentionResult:
    output: np.ndarray
    lse: np.ndarray
    row_max: np.ndarray
    row_sum: np.ndarray
    counter: IOCounter
    block_rows: int
    block_cols: int
    loop_order: str
    blocks_visited: int
    blocks_total: int
    kv_passes: int  # times the whole of K and V is streamed from HBM (kv_outer: 1; q_outer: T_r)
    trace: list[FlashStep] = field(default_factory=list)


def _visited(n_q, n_k, br, bc, causal, block_mask):
    t_r, t_c = math.ceil(n_q / br), math.ceil(n_k / bc)
    vis = np.ones((t_r, t_c), dtype=bool)
    if causal:  # skip a block when even its last row precedes its first key
        last_row = np.minimum(np.arange(t_r) * br + br, n_q) - 1
        vis &= (np.arange(t_c) * bc)[None, :] <= last_row[:, None]
    if block_mask is not None:
        block_mask = np.asarray(block_mask, dtype=bool)
        if block_mask.shape != (t_r, t_c):
            raise ValueError(f"block_mask.shape must be (T_r, T_c) = {(t_r, t_c)}, got {block_mask.shape}")
        vis &= block_mask
    if not vis.any(axis=1).all():
        raise ValueError("block_mask must leave every query block at least one key block")
    return vis


def flash_attention_forward(q, k, v, causal: bool = False, scale: float | None = None, *,
                            sram_elements: int | None = None, block_rows: int | None = None,
                            block_cols: int | None = None, loop_order: str = "kv_outer",
                            block_mask: np.ndarray | None = None, trace: bool = False) -> FlashAttentionResult:
    """The FlashAttention forward pass, every HBM access counted (module docstring).

    Block sizes: given, or from ``sram_elements`` by :func:`flash_block_sizes`. ``block_mask``: True where a
    (query block, key block) pair is computed; the result equals :func:`standard_attention` with the
    element mask that expands it (and the causal mask). Counted per step:

    * ``kv_outer`` (Algorithm 1): O, m, l initialised in HBM (N_q d + 2 N_q writes); for each key block j:
      read K_j, V_j; for each visited query block i: read Q_i, O_i, m_i, l_i, write O_i, m_i, l_i.
      O is kept normalised (divided by l every step) as in the paper.
    * ``q_outer`` (FlashAttention-2): for each query block: read Q_i; for each visited key block read K_j,
      V_j; at the end divide by l once and write O_i and L_i = m_i + log l_i (B_r d + B_r).
    """
    q, k, v = _check_qkv(q, k, v)
    if loop_order not in LOOP_ORDERS:
        raise ValueError(f"loop_order must be one of {LOOP_ORDERS}, got {loop_order!r}")
    if not isinstance(causal, bool):
        raise ValueError(f"causal must be a bool, got {causal!r}")
    n_q, n_k, d = q.shape[0], k.shape[0], q.shape[1]
    scale = _scale(d, scale)
    if block_rows is None or block_cols is None:
        if sram_elements is None:
            raise ValueError("give sram_elements, or both block_rows and block_cols")
        br, bc = flash_block_sizes(sram_elements, d, loop_order)
        br = block_rows if block_rows is not None else br
        bc = block_cols if block_cols is not None else bc
    else:
        br, bc = block_rows, block_cols
    br, bc = _check_int("block_rows", br), _check_int("block_cols", bc)
    vis = _visited(n_q, n_k, br, bc, causal, block_mask)
    t_r, t_c = vis.shape
    c = IOCounter()
    steps: list[FlashStep] = []
    dtype = np.result_type(q, k, v)

    def scores(qi, kj, r0, c0):
        s = scale * (qi @ kj.T)
        if causal:
            rows = np.arange(r0, r0 + qi.shape[0])[:, None]
            cols = np.arange(c0, c0 + kj.shape[0])[None, :]
            s = np.where(cols <= rows, s, -np.inf)
        return s

    if loop_order == "kv_outer":
        o = np.zeros((n_q, d), dtype=dtype)
        m = np.full(n_q, -np.inf)
        l = np.zeros(n_q)
        c.write(o.size + m.size + l.size)  # initialise O, m, l in HBM
        for j in range(t_c):
            c0, c1 = j * bc, min((j + 1) * bc, n_k)
            if not vis[:, j].any():
                continue
            kj, vj = c.read(k[c0:c1]), c.read(v[c0:c1])
            for i in range(t_r):
                if not vis[i, j]:
                    continue
                r0, r1 = i * br, min((i + 1) * br, n_q)
                qi, oi, mi, li = c.read(q[r0:r1]), c.read(o[r0:r1]), c.read(m[r0:r1]), c.read(l[r0:r1])
                s = scores(qi, kj, r0, c0)
                m_blk = s.max(axis=1)
                m_new = np.maximum(mi, m_blk)
                # Rows whose every key in this block is masked have m_blk = -inf and keep their state.
                safe = np.where(np.isfinite(m_new), m_new, 0.0)
                p = np.exp(s - safe[:, None])
                a_old = np.exp(mi - safe)
                l_new = a_old * li + p.sum(axis=1)
                with np.errstate(invalid="ignore", divide="ignore"):
                    o_new = np.where(l_new[:, None] > 0,
                                     ((a_old * li)[:, None] * oi + p @ vj) / l_new[:, None], 0.0)
                o[r0:r1], m[r0:r1], l[r0:r1] = o_new, m_new, l_new
                c.write(o_new.size + m_new.size + l_new.size)
                if trace:
                    steps.append(FlashStep(j, i, (r0, r1), (c0, c1), m_new.copy(), l_new.copy(), c.reads, c.writes))
        kv_passes = 1
        lse = m + np.log(l)
    else:
        o = np.empty((n_q, d), dtype=dtype)
        lse = np.empty(n_q)
        m = np.empty(n_q)
        l = np.empty(n_q)
        for i in range(t_r):
            r0, r1 = i * br, min((i + 1) * br, n_q)
            qi = c.read(q[r0:r1])
            mi = np.full(r1 - r0, -np.inf)
            li = np.zeros(r1 - r0)
            acc = np.zeros((r1 - r0, d), dtype=dtype)
            for j in range(t_c):
                if not vis[i, j]:
                    continue
                c0, c1 = j * bc, min((j + 1) * bc, n_k)
                kj, vj = c.read(k[c0:c1]), c.read(v[c0:c1])
                s = scores(qi, kj, r0, c0)
                m_new = np.maximum(mi, s.max(axis=1))
                safe = np.where(np.isfinite(m_new), m_new, 0.0)
                p = np.exp(s - safe[:, None])
                alpha = np.exp(mi - safe)
                li = alpha * li + p.sum(axis=1)
                acc = alpha[:, None] * acc + p @ vj  # unnormalised: divided by l once, after the loop
                mi = m_new
                if trace:
                    steps.append(FlashStep(i, j, (r0, r1), (c0, c1), mi.copy(), li.copy(), c.reads, c.writes))
            o[r0:r1] = acc / li[:, None]
            lse[r0:r1] = mi + np.log(li)
            m[r0:r1], l[r0:r1] = mi, li
            c.write(acc.size + (r1 - r0))  # O_i and L_i
        kv_passes = t_r
    return FlashAttentionResult(o, lse, m, l, c, br, bc, loop_order, int(vis.sum()), t_r * t_c, kv_passes, steps)


def flash_io(n_q: int, n_k: int, head_dim: int, block_rows: int, block_cols: int,
             loop_order: str = "kv_outer", causal: bool = False) -> IOCount:
    """Closed form of :func:`flash_attention_forward`'s counter (elements), any N, d and block sizes.

    Dense, T_r = ceil(N_q / B_r), T_c = ceil(N_k / B_c):

    * ``kv_outer``: reads 2 N_k d + T_c (2 N_q d + 2 N_q), writes (T_c + 1)(N_q d + 2 N_q).
    * ``q_outer``: reads N_q d + T_r 2 N_k d, writes N_q d + N_q.

    Causal: only the rows (kv_outer) or keys (q_outer) of visited blocks count. For key block j (first
    key c_j = j B_c) the visited query blocks are i >= floor(c_j / B_r), i.e. N_q - floor(c_j / B_r) B_r rows;
    for query block i (last row r_i) the visited key blocks cover min(N_k, (floor(r_i / B_c) + 1) B_c) keys.
    """
    n_q, n_k, d, br, bc = (_check_int(a, b) for a, b in (("n_q", n_q), ("n_k", n_k), ("head_dim", head_dim),
                                                         ("block_rows", block_rows), ("block_cols", block_cols)))
    if loop_order not in LOOP_ORDERS:
        raise ValueError(f"loop_order must be one of {LOOP_ORDERS}, got {loop_order!r}")
    t_r, t_c = math.ceil(n_q / br), math.ceil(n_k / bc)
    if loop_order == "kv_outer":
        if not causal:
            return IOCount(2 * n_k * d + t_c * (2 * n_q * d + 2 * n_q), (t_c + 1) * (n_q * d + 2 * n_q))
        reads, writes = 0, n_q * d + 2 * n_q
        for j in range(t_c):
            if j * bc > n_q - 1:  # every query precedes this block's first key
                continue
            rows = n_q - ((j * bc) // br) * br
            keys = min(bc, n_k - j * bc)
            reads += 2 * keys * d + rows * (2 * d + 2)
            writes += rows * (d + 2)
        return IOCount(reads, writes)
    if not causal:
        return IOCount(n_q * d + t_r * 2 * n_k * d, n_q * d + n_q)
    reads = n_q * d
    for i in range(t_r):
        last_row = min((i + 1) * br, n_q) - 1
        keys = min(n_k, (last_row // bc + 1) * bc)
        reads += 2 * keys * d
    return IOCount(reads, n_q * d + n_q)


@dataclass(frozen=True)
class TrafficComparison:
    """HBM traffic of standard attention and of FlashAttention for one head (elements), with the on-chip
    footprint of a FlashAttention step, the passes over K/V and over Q/O, and what each keeps in HBM."""

    n_seq: int
    head_dim: int
    sram_elements: int
    loop_order: str
    causal: bool
    block_rows: int
    block_cols: int
    standard: IOCount
    flash: IOCount
    on_chip_elements: int
    kv_passes: int
    qo_passes: int
    standard_stored_elements: int  # S and P (N^2 each) written to HBM; P kept for the backward pass
    flash_stored_elements: int  # the row statistics: m and l (kv_outer) or L (q_outer)

    @property
    def traffic_ratio(self) -> float:
        """Standard traffic over FlashAttention traffic."""
        return self.standard.total / self.flash.total

    @property
    def fits_on_chip(self) -> bool:
        return self.on_chip_elements <= self.sram_elements


def compare_traffic(n_seq: int, head_dim: int, sram_elements: int, loop_order: str = "kv_outer",
                    block_rows: int | None = None, block_cols: int | None = None,
                    causal: bool = False) -> TrafficComparison:
    """The explorer's model: :func:`standard_io` against :func:`flash_io` for N = ``n_seq`` (queries and
    keys), with block sizes from ``sram_elements`` (:func:`flash_block_sizes`) unless given."""
    n, d = _check_int("n_seq", n_seq), _check_int("head_dim", head_dim)
    br, bc = flash_block_sizes(sram_elements, d, loop_order)
    br = _check_int("block_rows", block_rows) if block_rows is not None else br
    bc = _check_int("block_cols", block_cols) if block_cols is not None else bc
    t_r, t_c = math.ceil(n / br), math.ceil(n / bc)
    flash = flash_io(n, n, d, br, bc, loop_order, causal)
    return TrafficComparison(
        n_seq=n, head_dim=d, sram_elements=int(sram_elements), loop_order=loop_order, causal=causal,
        block_rows=br, block_cols=bc, standard=standard_io(n, n, d), flash=flash,
        on_chip_elements=on_chip_elements(br, bc, d),
        kv_passes=1 if loop_order == "kv_outer" else t_r, qo_passes=t_c if loop_order == "kv_outer" else 1,
        standard_stored_elements=2 * n * n, flash_stored_elements=2 * n if loop_order == "kv_outer" else n)


def theorem2_flash_accesses(n_seq: int, head_dim: int, sram_elements: int) -> float:
    """The order of FlashAttention's HBM accesses in Theorem 2: N^2 d^2 / M (elements, constant dropped)."""
    return float(n_seq) ** 2 * float(head_dim) ** 2 / float(_check_int("sram_elements", sram_elements))


def attention_memory_bytes(n_seq: int, batch: int, heads: int, layers: int = 1, bytes_per_element: int = 2,
                           method: str = "standard") -> int:
    """HBM bytes kept per forward pass for the backward pass, beyond Q, K, V and O: ``"standard"`` keeps
    P (B H N^2 elements per layer); ``"flash"`` keeps the fp32 log-sum-exp L (B H N values, 4 bytes)."""
    n, b, h, layers = (_check_int(a, x) for a, x in (("n_seq", n_seq), ("batch", batch), ("heads", heads),
                                                     ("layers", layers)))
    if method == "standard":
        return layers * b * h * n * n * int(bytes_per_element)
    if method == "flash":
        return layers * b * h * n * 4
    raise ValueError(f"method must be 'standard' or 'flash', got {method!r}")


__all__ = [
    "RowReduction", "row_reduction",
    "FlashAttentionResult", "FlashStep", "IOCount", "IOCounter", "LOOP_ORDERS", "OnlineStep", "PartialState",
    "SoftmaxResult", "StandardAttentionResult", "TrafficComparison", "compare_traffic", "attention_mask", "attention_memory_bytes",
    "blockwise_softmax_wrong", "flash_attention_forward", "flash_block_sizes", "flash_io", "merge_states",
    "on_chip_elements", "online_softmax", "partial_state", "safe_softmax", "standard_attention",
    "standard_io", "standard_ledger", "theorem2_flash_accesses",
]
