"""Split-KV attention for decoding (Flash-Decoding): partial softmax states and their exact merge.

What this module shows: when a few queries (one new token per sequence) attend to a long KV cache, a
FlashAttention kernel that gives each (sequence, head) one program leaves most of a GPU idle, and the step is
limited by how fast those few programs can read the cache. Flash-Decoding (Dao, Haziza, Massa and Sizov,
2023) splits the keys into S chunks processed in parallel; each chunk s returns a *partial state*

    m_s = max_j s_j,   l_s = sum_j exp(s_j - m_s),   O_s = sum_j exp(s_j - m_s) v_j / l_s     (j in chunk s)

and a second, tiny step merges the states exactly (the merge of online softmax, chapter 13):

    m = max_s m_s,   l = sum_s l_s exp(m_s - m),   O = sum_s (l_s exp(m_s - m) / l) O_s.

Equivalently, with L_s = m_s + log l_s: O = sum_s exp(L_s - L) O_s where L = log sum_s exp(L_s). The merge is
associative and commutative, so chunks may be merged in any order or tree.

Counters follow :mod:`gpuperf.attention_backward` (elements of slow memory, one head):
:func:`split_kv_io` gives them in closed form, and :func:`decode_time_model` turns them into a rough time.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from gpuperf.attention_backward import IOCount, SlowMemory
from gpuperf.attention_backward import _check_int, _check_matching_shapes, _scale  # one set of checks


@dataclass(frozen=True)
class PartialState:
    """Softmax-attention state of some queries over a subset of the keys.

    row_max: (n_q,) m; row_sum: (n_q,) l, relative to m; out: (n_q, d), normalised by l.
    """

    row_max: np.ndarray
    row_sum: np.ndarray
    out: np.ndarray

    @property
    def lse(self) -> np.ndarray:
        """L = m + log l, the log-sum-exp of the scores this state has seen."""
        return self.row_max + np.log(self.row_sum)


def _check_qkv(q, k, v):
    q = np.atleast_2d(np.asarray(q, dtype=np.float64))
    k, v = np.asarray(k, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if q.ndim != 2 or k.ndim != 2 or v.ndim != 2 or min(q.shape + k.shape) < 1:
        raise ValueError(f"q, k, v must be non-empty 2-D arrays (rows, head_dim), got q {q.shape}, "
                         f"k {k.shape}, v {v.shape}")
    _check_matching_shapes(q, k, v)
    return q, k, v


def partial_state(q, k, v, softmax_scale: float | None = None) -> PartialState:
    """The state of queries ``q`` (n_q, d) over keys ``k`` and values ``v`` (n, d) (one chunk)."""
    q, k, v = _check_qkv(q, k, v)
    s = _scale(q.shape[1], softmax_scale) * q @ k.T
    row_max = s.max(axis=1)
    e = np.exp(s - row_max[:, None])
    row_sum = e.sum(axis=1)
    return PartialState(row_max=row_max, row_sum=row_sum, out=(e @ v) / row_sum[:, None])


def merge_states(a: PartialState, b: PartialState) -> PartialState:
    """The exact state over the union of the keys of ``a`` and ``b`` (disjoint key sets)."""
    for name, x in (("a", a), ("b", b)):
        if not isinstance(x, PartialState):
            raise ValueError(f"{name} must be a PartialState, got {type(x).__name__}")
    if a.out.shape != b.out.shape:
        raise ValueError(f"b.out.shape must equal a.out.shape {a.out.shape}, got {b.out.shape}")
    m = np.maximum(a.row_max, b.row_max)
    wa, wb = a.row_sum * np.exp(a.row_max - m), b.row_sum * np.exp(b.row_max - m)
    l = wa + wb
    out = (wa[:, None] * a.out + wb[:, None] * b.out) / l[:, None]
    return PartialState(row_max=m, row_sum=l, out=out)


def merge_all(states) -> PartialState:
    """Merge a non-empty sequence of states left to right."""
    states = list(states)
    if not states:
        raise ValueError("states must not be empty, got []")
    result = states[0]
    for s in states[1:]:
        result = merge_states(result, s)
    return result


@dataclass(frozen=True)
class SplitKVResult:
    """Output O (n_q, d) of split-KV attention, the partial states, and the slow-memory counter."""

    out: np.ndarray
    states: tuple[PartialState, ...]
    memory: SlowMemory

    @property
    def io(self) -> IOCount:
        return IOCount(self.memory.elements_read, self.memory.elements_written)


def split_bounds(n_k: int, n_splits: int) -> list[tuple[int, int]]:
    """Key ranges of ``n_splits`` chunks of (nearly) equal size: ceil(n_k / n_splits) keys each."""
    n_k, n_splits = _check_int("n_k", n_k), _check_int("n_splits", n_splits)
    if n_splits > n_k:
        raise ValueError(f"n_splits must be <= n_k {n_k} (no empty chunks), got {n_splits}")
    size = -(-n_k // n_splits)
    return [(s, min(s + size, n_k)) for s in range(0, n_k, size)]


def split_kv_attention(q, k, v, n_splits: int, softmax_scale: float | None = None) -> SplitKVResult:
    """Split the keys into chunks (:func:`split_bounds`), compute each chunk's state, write it to slow
    memory, then read the states back and merge them. Counts equal :func:`split_kv_io`.

    Phase 1 (one program per chunk): read q and the chunk's K, V; write (m, l, O_s).
    Phase 2 (one program per query row): read every chunk's (m, l, O_s); write O.
    """
    q, k, v = _check_qkv(q, k, v)
    scale = _scale(q.shape[1], softmax_scale)
    n_q, d = q.shape
    mem = SlowMemory()
    states = []
    for c0, c1 in split_bounds(k.shape[0], n_splits):
        state = partial_state(mem.read("q", q), mem.read("K", k[c0:c1]), mem.read("V", v[c0:c1]), scale)
        mem.write("partial O", state.out.size)
        mem.write("partial m, l", 2 * n_q)
        states.append(state)
    for state in states:
        mem.read("partial O", state.out)
        mem.read("partial m, l", np.concatenate([state.row_max, state.row_sum]))
    merged = merge_all(states)
    mem.write("O", merged.out.size)
    return SplitKVResult(out=merged.out, states=tuple(states), memory=mem)


def split_kv_io(n_q: int, n_k: int, head_dim: int, n_splits: int) -> IOCount:
    """Elements moved by :func:`split_kv_attention` for one head, S = number of chunks actually made.

    reads = S n_q d (q, once per chunk) + 2 n_k d (K and V, once) + S (n_q d + 2 n_q) (merge);
    writes = S (n_q d + 2 n_q) (partial states) + n_q d (O).
    """
    n_q, head_dim = _check_int("n_q", n_q), _check_int("head_dim", head_dim)
    chunks = len(split_bounds(n_k, n_splits))
    partial = chunks * (n_q * head_dim + 2 * n_q)
    return IOCount(chunks * n_q * head_dim + 2 * n_k * head_dim + partial, partial + n_q * head_dim)


@dataclass(frozen=True)
class DecodeTime:
    """A roofline-style estimate of one decoding step's attention (all sequences and KV heads)."""

    n_splits: int
    programs: int
    busy_fraction: float  # fraction of SMs with a program, min(1, programs / SMs)
    bytes_moved: float
    time_s: float

    @property
    def bytes_per_s(self) -> float:
        return self.bytes_moved / self.time_s


def decode_time_model(batch: int, kv_heads: int, n_k: int, head_dim: int, n_splits: int, *,
                      queries_per_kv_head: int = 1, sm_count: int, hbm_bytes_per_s: float,
                      bytes_per_element: int = 2) -> DecodeTime:
    """Time of the attention of one decoding step with ``n_splits`` chunks per (sequence, KV head).

    A model, not a measurement: ``programs = batch x kv_heads x n_splits``; the KV cache streams at
    ``hbm_bytes_per_s x min(1, programs / sm_count)`` (assumption: one program keeps one SM's share of the
    bandwidth busy, no more), and the merge's partial states add their bytes at full bandwidth. With
    grouped-query attention, ``queries_per_kv_head`` query heads share one KV head (and one program).
    """
    batch, kv_heads = _check_int("batch", batch), _check_int("kv_heads", kv_heads)
    sm_count = _check_int("sm_count", sm_count)
    if not (isinstance(hbm_bytes_per_s, numbers.Real) and hbm_bytes_per_s > 0):
        raise ValueError(f"hbm_bytes_per_s must be positive, got {hbm_bytes_per_s!r}")
    io = split_kv_io(_check_int("queries_per_kv_head", queries_per_kv_head), n_k, head_dim, n_splits)
    chunks = len(split_bounds(n_k, n_splits))
    programs = batch * kv_heads * chunks
    busy = min(1.0, programs / sm_count)
    heads = batch * kv_heads
    kv_bytes = heads * 2 * n_k * head_dim * bytes_per_element
    other_bytes = heads * io.elements_moved * bytes_per_element - kv_bytes
    time_s = kv_bytes / (hbm_bytes_per_s * busy) + other_bytes / hbm_bytes_per_s
    return DecodeTime(chunks, programs, busy, float(heads * io.elements_moved * bytes_per_element), time_s)


@dataclass(frozen=True)
class SplitPlan:
    """One candidate split count under the model of :func:`split_waves_time`."""

    n_splits: int
    programs: int
    waves: int
    tiles_per_program: int
    time_s: float


def split_waves_time(batch_heads: int, n_k: int, n_splits: int, *, sm_count: int, hbm_bytes_per_s: float,
                     program_bytes_per_s: float, programs_per_sm: int = 3, block_n: int = 64,
                     tile_bytes: float = 32768.0, start_s: float = 1e-6, merge_bytes_per_split: float = 1040.0,
                     merge_launch_s: float = 0.0) -> SplitPlan:
    """Time of a split-KV step: waves of programs, each as fast as Little's law lets one program go.

    ``batch_heads`` (sequences x KV heads, times blocks of query rows) is cut into ``n_splits`` chunks of
    ``tiles_per_program = ceil(ceil(n_k / block_n) / n_splits)`` tiles of ``tile_bytes``; the
    ``programs = batch_heads x n_splits`` programs run ``slots = sm_count x programs_per_sm`` at a time,
    in waves. In a wave of n programs each streams at ``min(program_bytes_per_s, hbm_bytes_per_s / n)``:
    the bandwidth shared, but never more than one program's bytes in flight over the memory latency
    allow (``program_bytes_per_s``, Little's law: an assumed rate, see
    :data:`gpuperf.kernels.decode.PROGRAM_BYTES_PER_S`). A program also spends ``start_s`` starting (its
    queries, the pipeline filling, its state's store: 1 us, assumed, not measured). A split step adds the
    partial states (``merge_bytes_per_split`` per unit of ``batch_heads`` and split, written and read
    back; the default, 1040 B, is one row's fp32 state at d = 128) and ``merge_launch_s`` (0 when the
    merge runs in the last program rather than in a kernel of its own). Not modelled: the fused merge's
    tail, in which the last program reads the S states one dependent L2 load after another (about S L2
    latencies, a few us at S = 26), and the bandwidth is the datasheet's (the caller's
    ``hbm_bytes_per_s``), not a measured copy's.
    """
    batch_heads, n_k = _check_int("batch_heads", batch_heads), _check_int("n_k", n_k)
    n_splits, sm_count = _check_int("n_splits", n_splits), _check_int("sm_count", sm_count)
    programs_per_sm, block_n = _check_int("programs_per_sm", programs_per_sm), _check_int("block_n", block_n)
    for name, value in (("tile_bytes", tile_bytes), ("hbm_bytes_per_s", hbm_bytes_per_s),
                        ("program_bytes_per_s", program_bytes_per_s)):
        if not (isinstance(value, numbers.Real) and value > 0):
            raise ValueError(f"{name} must be positive, got {value!r}")
    tiles = -(-n_k // block_n)
    per_program = -(-tiles // min(n_splits, tiles))
    chunks = -(-tiles // per_program)  # splits that hold a tile at all
    programs = batch_heads * n_splits
    slots = sm_count * programs_per_sm
    full, rest = divmod(programs, slots)
    work = per_program * tile_bytes

    def wave_s(n: int) -> float:
        return start_s + work / min(program_bytes_per_s, hbm_bytes_per_s / n)

    time_s = full * wave_s(slots) + (wave_s(rest) if rest else 0.0)
    if n_splits > 1:
        time_s += merge_launch_s + 2 * batch_heads * chunks * merge_bytes_per_split / hbm_bytes_per_s
    return SplitPlan(n_splits, programs, full + (1 if rest else 0), per_program, time_s)


def choose_n_splits(batch_heads: int, n_k: int, *, sm_count: int, max_splits: int = 64,
                    **model) -> int:
    """The split count in 1..``max_splits`` with the least :func:`split_waves_time` (the smallest within
    3 % of the least): few programs want many splits, a full machine wants none."""
    max_splits = _check_int("max_splits", max_splits)
    plans = [split_waves_time(batch_heads, n_k, s, sm_count=sm_count, **model) for s in range(1, max_splits + 1)]
    best = min(p.time_s for p in plans)
    return next(p.n_splits for p in plans if p.time_s <= best * 1.03)

__all__ = ["DecodeTime", "PartialState", "SplitKVResult", "SplitPlan", "choose_n_splits", "decode_time_model", "merge_all", "merge_states",
           "partial_state", "split_bounds", "split_kv_attention", "split_kv_io",
           "split_waves_time"]
