"""A warp-divergence simulator: how many instruction slots a warp issues when its threads disagree.

A GPU issues one instruction for a whole warp (32 threads on NVIDIA GPUs) at a time. When the threads of a
warp take different sides of a branch, the warp runs each side that at least one of its threads takes, one
after the other, with the threads of the other side masked off; loops run until the last thread of the warp
is done. This module counts that: a tiny structured program (straight-line :class:`Op`, :class:`If` with
an optional else, nested to any depth, and :class:`Loop` with a per-thread trip count) is run on every warp
with a per-warp active mask, and :func:`simulate` returns

* the warp instructions issued (``issued``), per warp and in total,
* the thread instructions executed (``thread_instructions``: the active lanes summed over those issues),
* the SIMT efficiency, ``thread_instructions / (warp_size * issued)``: the average fraction of a warp's lanes
  doing useful work per issued instruction. Nsight Compute reports the same quantity, times the warp size,
  as ``smsp__thread_inst_executed_per_inst_executed.ratio`` (average active threads per warp instruction).

The model is deliberately simple: an instruction costs one issue slot whatever it is, a path that no thread
of a warp takes costs nothing (a real GPU still issues the branch instruction: put an ``Op`` there to count
it), and the paths of a divergent branch run one after the other (NVIDIA documents that the paths of a
divergent branch are serialised; since Volta the order is up to the scheduler, which does not change the
count). Closed forms for the common cases are here too, so tests can check the simulator against them.

Branch patterns (:func:`branch_condition`) and long-tailed trip counts (:func:`long_tailed_trip_counts`) are
generated here so that the GPU kernels in ``bench/`` can use exactly the same inputs as the simulator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence, Union

import numpy as np

#: Branch patterns :func:`branch_condition` knows.
PATTERNS = ("uniform", "alternating", "warp_alternating", "random", "sorted")


# --------------------------------------------------------------------------------------------------
# The program
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Op:
    """``cost`` straight-line instructions run by every active thread of the warp."""

    cost: int = 1
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.cost, (int, np.integer)) or isinstance(self.cost, bool) or self.cost < 0:
            raise ValueError(f"cost must be an integer >= 0, got {self.cost!r}")


@dataclass(frozen=True)
class If:
    """``if condition: then else: orelse``; ``condition`` names a per-thread boolean array."""

    condition: str
    then: tuple = ()
    orelse: tuple = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "then", tuple(self.then))
        object.__setattr__(self, "orelse", tuple(self.orelse))


@dataclass(frozen=True)
class Loop:
    """``for i in range(trips[thread]): body``; ``trips`` names a per-thread integer array."""

    trips: str
    body: tuple = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "body", tuple(self.body))


Node = Union[Op, If, Loop]


# --------------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    """One stretch of a warp's timeline: ``length`` issue slots from ``start_slot`` with lanes ``mask`` on."""

    warp: int
    start_slot: int
    length: int
    mask: tuple[bool, ...]
    label: str

    @property
    def active_lanes(self) -> int:
        return int(sum(self.mask))


@dataclass(frozen=True)
class SimtResult:
    """What :func:`simulate` counted. Arrays are per warp, in warp order."""

    warp_size: int
    n_threads: int
    issued_per_warp: np.ndarray  # warp instructions issued by each warp
    thread_instructions_per_warp: np.ndarray  # active lanes summed over each warp's issues
    useful_lanes_per_warp: np.ndarray  # threads of each warp that exist (the last warp may be partial)
    timeline: tuple[Segment, ...] = field(default=())

    @property
    def n_warps(self) -> int:
        return int(self.issued_per_warp.size)

    @property
    def issued(self) -> int:
        return int(self.issued_per_warp.sum())

    @property
    def thread_instructions(self) -> int:
        return int(self.thread_instructions_per_warp.sum())

    @property
    def simt_efficiency(self) -> float:
        """Thread instructions over ``warp_size`` x warp instructions (1.0 when nothing was issued)."""
        issued = self.issued
        return 1.0 if issued == 0 else self.thread_instructions / (self.warp_size * issued)

    @property
    def active_threads_per_instruction(self) -> float:
        """Nsight Compute's ``smsp__thread_inst_executed_per_inst_executed.ratio``: efficiency x warp size."""
        return self.simt_efficiency * self.warp_size

    @property
    def divergent_warps(self) -> int:
        """Warps that issued at least one instruction with fewer lanes active than they have threads."""
        full = self.issued_per_warp * self.useful_lanes_per_warp
        return int(np.count_nonzero(self.thread_instructions_per_warp < full))


# --------------------------------------------------------------------------------------------------
# Input checking
# --------------------------------------------------------------------------------------------------


def _check_warp_size(warp_size: object) -> int:
    if isinstance(warp_size, bool) or not isinstance(warp_size, (int, np.integer)) or warp_size < 1:
        raise ValueError(f"warp_size must be an integer >= 1, got {warp_size!r}")
    return int(warp_size)


def _check_n_threads(n_threads: object) -> int:
    if isinstance(n_threads, bool) or not isinstance(n_threads, (int, np.integer)) or n_threads < 1:
        raise ValueError(f"n_threads must be an integer >= 1, got {n_threads!r}")
    return int(n_threads)


def _check_probability(probability: object) -> float:
    try:
        p = float(probability)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"probability must be a number in [0, 1], got {probability!r}") from None
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"probability must be in [0, 1], got {probability!r}")
    return p


# --------------------------------------------------------------------------------------------------
# Inputs: branch patterns and trip counts
# --------------------------------------------------------------------------------------------------


def branch_condition(pattern: str, n_threads: int, probability: float = 0.5, seed: int = 0,
                     warp_size: int = 32) -> np.ndarray:
    """Per-thread branch outcomes (a boolean array of ``n_threads``) for a named pattern.

    * ``uniform``: every thread takes the branch (no divergence).
    * ``alternating``: even threads take it, odd ones do not (every warp splits in half).
    * ``warp_alternating``: whole warps alternate (half the threads take it, yet no warp diverges).
    * ``random``: each thread takes it with ``probability``, independently (``seed`` fixes the draw).
    * ``sorted``: the first ``round(probability * n_threads)`` threads take it, as if the data had been
      sorted by the condition: only the warp holding the boundary diverges.
    """
    n = _check_n_threads(n_threads)
    p = _check_probability(probability)
    w = _check_warp_size(warp_size)
    tid = np.arange(n)
    if pattern == "uniform":
        return np.ones(n, dtype=bool)
    if pattern == "alternating":
        return tid % 2 == 0
    if pattern == "warp_alternating":
        return (tid // w) % 2 == 0
    if pattern == "random":
        return np.random.default_rng(seed).random(n) < p
    if pattern == "sorted":
        return tid < round(p * n)
    raise ValueError(f"pattern must be one of {PATTERNS}, got {pattern!r}")


def long_tailed_trip_counts(n_threads: int, median: float = 4.0, sigma: float = 1.5, max_trips: int = 256,
                            seed: int = 0) -> np.ndarray:
    """Per-thread loop trip counts with a long tail: ``ceil`` of a log-normal, clipped to [1, max_trips].

    Most threads loop a few times, a few loop many times (as in ragged rows of a sparse matrix, or
    sequences of different lengths): the shape that makes a warp wait for its slowest thread.
    """
    n = _check_n_threads(n_threads)
    if not (median > 0 and math.isfinite(median)):
        raise ValueError(f"median must be a finite number > 0, got {median!r}")
    if not (sigma >= 0 and math.isfinite(sigma)):
        raise ValueError(f"sigma must be a finite number >= 0, got {sigma!r}")
    if isinstance(max_trips, bool) or not isinstance(max_trips, (int, np.integer)) or max_trips < 1:
        raise ValueError(f"max_trips must be an integer >= 1, got {max_trips!r}")
    draw = np.random.default_rng(seed).lognormal(mean=math.log(median), sigma=sigma, size=n)
    return np.clip(np.ceil(draw), 1, max_trips).astype(np.int64)


# --------------------------------------------------------------------------------------------------
# The simulator
# --------------------------------------------------------------------------------------------------


def _warped(values: np.ndarray, n_threads: int, warp_size: int, fill) -> np.ndarray:
    if n_threads % warp_size == 0:  # no partial warp: a view, no copy (runs of millions of threads)
        return values.reshape(-1, warp_size)
    n_warps = -(-n_threads // warp_size)
    out = np.full(n_warps * warp_size, fill, dtype=values.dtype)
    out[:n_threads] = values
    return out.reshape(n_warps, warp_size)


class _Run:
    def __init__(self, warp_size: int, n_warps: int, conditions: Mapping[str, np.ndarray],
                 trips: Mapping[str, np.ndarray], timeline_warps: int) -> None:
        self.warp_size = warp_size
        self.conditions = conditions
        self.trips = trips
        self.issued = np.zeros(n_warps, dtype=np.int64)
        self.thread_inst = np.zeros(n_warps, dtype=np.int64)
        self.timeline_warps = min(timeline_warps, n_warps)
        self.segments: list[Segment] = []

    def block(self, nodes: Sequence[Node], mask: np.ndarray) -> None:
        for node in nodes:
            if not mask.any():
                return
            self.node(node, mask)

    def node(self, node: Node, mask: np.ndarray) -> None:
        if isinstance(node, Op):
            if node.cost == 0:
                return
            running = mask.any(axis=1)
            for w in np.flatnonzero(running[: self.timeline_warps]):
                self.segments.append(Segment(int(w), int(self.issued[w]), int(node.cost),
                                             tuple(bool(x) for x in mask[w]), node.label))
            self.issued += node.cost * running
            self.thread_inst += node.cost * mask.sum(axis=1)
        elif isinstance(node, If):
            taken = self.conditions[node.condition]
            self.block(node.then, mask & taken)
            self.block(node.orelse, mask & ~taken)
        elif isinstance(node, Loop):
            trips = self.trips[node.trips]
            active = np.where(mask, trips, 0)
            for i in range(int(active.max(initial=0))):
                self.block(node.body, mask & (trips > i))
        else:
            raise ValueError(f"program must hold Op, If and Loop nodes, got {node!r}")


def _names(nodes: Sequence[Node], kind: type) -> set[str]:
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, If):
            if kind is If:
                found.add(node.condition)
            found |= _names(node.then, kind) | _names(node.orelse, kind)
        elif isinstance(node, Loop):
            if kind is Loop:
                found.add(node.trips)
            found |= _names(node.body, kind)
        elif not isinstance(node, Op):
            raise ValueError(f"program must hold Op, If and Loop nodes, got {node!r}")
    return found


def simulate(program: Sequence[Node], n_threads: int, conditions: Mapping[str, Sequence[bool]] | None = None,
             trips: Mapping[str, Sequence[int]] | None = None, warp_size: int = 32,
             timeline_warps: int = 0) -> SimtResult:
    """Run ``program`` on ``n_threads`` threads grouped in warps of ``warp_size`` and count the issues.

    ``conditions`` maps each :class:`If`'s name to a boolean per thread; ``trips`` maps each :class:`Loop`'s
    name to a non-negative integer per thread. Threads past ``n_threads`` in the last warp never run.
    ``timeline_warps`` > 0 records the :class:`Segment` timeline of that many leading warps (for drawing).
    """
    n = _check_n_threads(n_threads)
    w = _check_warp_size(warp_size)
    if isinstance(program, (Op, If, Loop)):
        program = (program,)
    program = tuple(program)
    conditions = dict(conditions or {})
    trips = dict(trips or {})
    if isinstance(timeline_warps, bool) or not isinstance(timeline_warps, (int, np.integer)) or timeline_warps < 0:
        raise ValueError(f"timeline_warps must be an integer >= 0, got {timeline_warps!r}")

    warped_conditions = {}
    for name in _names(program, If):
        if name not in conditions:
            raise ValueError(f"conditions has no entry {name!r} (the program branches on it)")
        values = np.asarray(conditions[name])
        if values.shape != (n,) or values.dtype != bool:
            raise ValueError(f"conditions[{name!r}] must be a boolean array of shape ({n},), "
                             f"got dtype {values.dtype} shape {values.shape}")
        warped_conditions[name] = _warped(values, n, w, False)
    warped_trips = {}
    for name in _names(program, Loop):
        if name not in trips:
            raise ValueError(f"trips has no entry {name!r} (the program loops on it)")
        values = np.asarray(trips[name])
        if values.shape != (n,) or not np.issubdtype(values.dtype, np.integer) or (values < 0).any():
            raise ValueError(f"trips[{name!r}] must be non-negative integers of shape ({n},), "
                             f"got dtype {values.dtype} shape {values.shape}")
        warped_trips[name] = _warped(values.astype(np.int64), n, w, 0)

    alive = _warped(np.ones(n, dtype=bool), n, w, False)
    run = _Run(w, alive.shape[0], warped_conditions, warped_trips, int(timeline_warps))
    run.block(program, alive)
    return SimtResult(
        warp_size=w,
        n_threads=n,
        issued_per_warp=run.issued,
        thread_instructions_per_warp=run.thread_inst,
        useful_lanes_per_warp=alive.sum(axis=1),
        timeline=tuple(run.segments),
    )


# --------------------------------------------------------------------------------------------------
# Programs shared with the GPU kernels (bench/part1_gpu.py) and the chapter
# --------------------------------------------------------------------------------------------------


def two_way_program(then_cost: int, else_cost: int, common_cost: int = 0) -> tuple[Node, ...]:
    """``common; if c: then else: orelse`` (the single branch of chapter 03 and of the GPU kernel)."""
    return (Op(common_cost, "common"),
            If("c", (Op(then_cost, "then"),), (Op(else_cost, "else"),) if else_cost else ()))


def nested_program(body_cost: int, common_cost: int = 0) -> tuple[Node, ...]:
    """``common; if c1: {A; if c2: B else: C} else: D``, each of A-D ``body_cost`` instructions."""
    inner = If("c2", (Op(body_cost, "B"),), (Op(body_cost, "C"),))
    return (Op(common_cost, "common"), If("c1", (Op(body_cost, "A"), inner), (Op(body_cost, "D"),)))


def loop_program(body_cost: int, common_cost: int = 0) -> tuple[Node, ...]:
    """``common; for i in range(trips[thread]): body``."""
    return (Op(common_cost, "common"), Loop("trips", (Op(body_cost, "body"),)))


# --------------------------------------------------------------------------------------------------
# Closed forms
# --------------------------------------------------------------------------------------------------


def expected_two_way_efficiency(probability: float, warp_size: int = 32) -> float:
    """SIMT efficiency of ``if c: A else: B`` (A and B equally long, nothing else) when each thread takes
    the branch independently with ``probability``, in the limit of many warps.

    A warp runs both paths unless all its threads agree, so it issues on average
    ``2 - p**W - (1 - p)**W`` paths for the one path's worth of work each thread does.
    """
    p = _check_probability(probability)
    w = _check_warp_size(warp_size)
    return 1.0 / (2.0 - p**w - (1.0 - p) ** w)


def expected_if_only_efficiency(probability: float, warp_size: int = 32) -> float:
    """SIMT efficiency of ``if c: A`` alone (no else) with independent outcomes: ``p / (1 - (1 - p)**W)``.

    The warps that run A have on average ``p * W`` of their lanes active; warps where no thread takes the
    branch issue nothing. Defined as 1.0 for ``p == 0`` (nothing issued).
    """
    p = _check_probability(probability)
    w = _check_warp_size(warp_size)
    return 1.0 if p == 0 else p / (1.0 - (1.0 - p) ** w)


def loop_efficiency(trip_counts: Sequence[int], warp_size: int = 32) -> float:
    """SIMT efficiency of a loop whose body is the whole program: total trips over warp size x the sum of
    each warp's longest trip count (a warp loops until its slowest thread is done)."""
    w = _check_warp_size(warp_size)
    trips = np.asarray(trip_counts)
    if trips.ndim != 1 or trips.size == 0 or not np.issubdtype(trips.dtype, np.integer) or (trips < 0).any():
        raise ValueError(f"trip_counts must be a non-empty 1-D array of integers >= 0, got {trip_counts!r}")
    per_warp_max = _warped(trips.astype(np.int64), trips.size, w, 0).max(axis=1)
    issued = int(per_warp_max.sum()) * w
    return 1.0 if issued == 0 else float(trips.sum()) / issued


def sorted_divergent_warps(n_threads: int, n_taken: int, warp_size: int = 32) -> int:
    """Warps that diverge when the first ``n_taken`` of ``n_threads`` threads take a branch: 1 if the
    boundary falls inside a warp, 0 if it falls on a warp edge (or at either end)."""
    n = _check_n_threads(n_threads)
    w = _check_warp_size(warp_size)
    if isinstance(n_taken, bool) or not isinstance(n_taken, (int, np.integer)) or not 0 <= n_taken <= n:
        raise ValueError(f"n_taken must be an integer in [0, n_threads={n}], got {n_taken!r}")
    inside = 0 < n_taken < n and n_taken % w != 0
    return int(inside)


# --------------------------------------------------------------------------------------------------
# The divergence explorer's model
# --------------------------------------------------------------------------------------------------

#: The explorer's grid (5 patterns x 11 probabilities x 3 warp sizes = 165 states).
EXPLORER_PROBABILITIES = tuple(round(0.1 * i, 1) for i in range(11))
EXPLORER_WARP_SIZES = (8, 16, 32)


@dataclass(frozen=True)
class DivergenceState:
    """One state of the divergence explorer: the first warps' timelines and the run's efficiency."""

    pattern: str
    probability: float
    warp_size: int
    simt_efficiency: float
    divergent_warps: int
    n_warps: int
    timeline: tuple[Segment, ...]


def divergence_explorer_state(pattern: str, probability: float, warp_size: int, n_threads: int = 256,
                              then_cost: int = 4, else_cost: int = 4, common_cost: int = 2,
                              timeline_warps: int = 4, seed: int = 0) -> DivergenceState:
    """The explorer's model: one two-way branch on ``n_threads`` threads with the given pattern."""
    cond = branch_condition(pattern, n_threads, probability, seed=seed, warp_size=warp_size)
    result = simulate(two_way_program(then_cost, else_cost, common_cost), n_threads, {"c": cond},
                      warp_size=warp_size, timeline_warps=timeline_warps)
    return DivergenceState(pattern, float(probability), int(warp_size), result.simt_efficiency,
                           result.divergent_warps, result.n_warps, result.timeline)


# --------------------------------------------------------------------------------------------------
# Fast counts for large runs, and the inputs of the recorded H200 cases
# --------------------------------------------------------------------------------------------------


def _result_from_counts(issued, thread_inst, n_threads: int, warp_size: int) -> SimtResult:
    alive = _warped(np.ones(n_threads, dtype=bool), n_threads, warp_size, False)
    return SimtResult(warp_size, n_threads, np.asarray(issued, dtype=np.int64),
                      np.asarray(thread_inst, dtype=np.int64), alive.sum(axis=1))


def two_way_counts(taken, then_cost: int, else_cost: int, common_cost: int = 0,
                   warp_size: int = 32) -> SimtResult:
    """What :func:`simulate` returns for :func:`two_way_program`, computed per warp in closed form (fast
    for millions of threads): a warp issues a path if any of its threads takes it."""
    taken = np.asarray(taken)
    if taken.ndim != 1 or taken.dtype != bool or taken.size == 0:
        raise ValueError(f"taken must be a non-empty 1-D boolean array, got {taken!r}")
    w = _check_warp_size(warp_size)
    for name, cost in (("then_cost", then_cost), ("else_cost", else_cost), ("common_cost", common_cost)):
        Op(cost)  # validates
        if isinstance(cost, bool):
            raise ValueError(f"{name} must be an integer >= 0, got {cost!r}")
    n = taken.size
    lanes = _warped(np.ones(n, dtype=bool), n, w, False).sum(axis=1)  # threads in each warp
    n_t = np.count_nonzero(_warped(taken, n, w, False), axis=1)
    n_f = lanes - n_t
    issued = common_cost + then_cost * (n_t > 0) + else_cost * (n_f > 0)
    thread_inst = common_cost * lanes + then_cost * n_t + else_cost * n_f
    return _result_from_counts(issued, thread_inst, n, w)


def loop_counts(trip_counts, body_cost: int, common_cost: int = 0, warp_size: int = 32) -> SimtResult:
    """What :func:`simulate` returns for :func:`loop_program`, in closed form: a warp issues the body as
    many times as its longest-running thread needs."""
    trips = np.asarray(trip_counts)
    if trips.ndim != 1 or trips.size == 0 or not np.issubdtype(trips.dtype, np.integer) or (trips < 0).any():
        raise ValueError(f"trip_counts must be a non-empty 1-D array of integers >= 0, got {trip_counts!r}")
    Op(body_cost)
    Op(common_cost)
    w = _check_warp_size(warp_size)
    n = trips.size
    per_warp = _warped(trips, n, w, 0)
    lanes = _warped(np.ones(n, dtype=bool), n, w, False).sum(axis=1)
    issued = common_cost + body_cost * per_warp.max(axis=1).astype(np.int64)
    thread_inst = common_cost * lanes + body_cost * per_warp.sum(axis=1, dtype=np.int64)
    return _result_from_counts(issued, thread_inst, n, w)


def h200_case_inputs(kernel: str, pattern: str | None = None, probability: float | None = None,
                     trips: str | None = None, n_threads: int = 1 << 24) -> dict[str, np.ndarray]:
    """The per-thread inputs of the recorded divergence cases (``bench/part1_gpu.py`` makes its kernels'
    inputs with this function, so the simulator and the GPU see the same branches).

    ``div_branch``: ``{"c"}`` from :func:`branch_condition` (seed 1), or all false for pattern ``"none"``;
    ``div_nested``: ``{"c1", "c2"}``, alternating (even threads, then even pairs) or independent random
    (seeds 1 and 2); ``div_loop``: ``{"trips"}``, uniform 4 or 8 or long-tailed (median 4, sigma 1, at most
    64, seed 3), in arrival order or sorted.
    """
    n = _check_n_threads(n_threads)
    if kernel == "div_branch":
        if pattern == "none":
            return {"c": np.zeros(n, dtype=bool)}
        return {"c": branch_condition(pattern, n, probability, seed=1)}
    if kernel == "div_nested":
        if pattern == "alternating":
            tid = np.arange(n)
            return {"c1": tid % 2 == 0, "c2": (tid // 2) % 2 == 0}
        return {"c1": branch_condition("random", n, probability, seed=1),
                "c2": branch_condition("random", n, probability, seed=2)}
    if kernel == "div_loop":
        fixed = {"uniform4": 4, "uniform8": 8}
        if trips in fixed:
            return {"trips": np.full(n, fixed[trips], dtype=np.int64)}
        if trips not in ("long_tailed", "long_tailed_sorted"):
            raise ValueError(f"trips must be one of uniform4, uniform8, long_tailed, long_tailed_sorted, "
                             f"got {trips!r}")
        counts = long_tailed_trip_counts(n, median=4.0, sigma=1.0, max_trips=64, seed=3)
        return {"trips": np.sort(counts) if trips == "long_tailed_sorted" else counts}
    raise ValueError(f"kernel must be div_branch, div_nested or div_loop, got {kernel!r}")


# ------------------------------------------------------------------------------------------------
# Reading compiled code: a warp-level reduction and a predicated load in Triton's PTX
# ------------------------------------------------------------------------------------------------


def ptx_instructions(ptx: str) -> list[str]:
    """The instruction lines of a PTX listing, whitespace collapsed: directives (``.loc``, ``.reg``...),
    labels, comments and braces dropped; inline-asm lines kept (Triton emits its loads as inline asm)."""
    if not isinstance(ptx, str):
        raise ValueError(f"ptx must be a string of PTX, got {type(ptx).__name__}")
    out = []
    for line in ptx.splitlines():
        text = line.split("//", 1)[0].strip()
        if not text.endswith(";") or text.startswith((".", "$", "{", "}")):
            continue
        out.append(" ".join(text.split()))
    return out


def _opcode(instruction: str) -> str:
    words = instruction.split()
    return words[1] if words[0].startswith("@") else words[0]


def ptx_reduction_excerpt(ptx: str, combine: str = "max.f32") -> list[str]:
    """The instructions of the first warp-level reduction in ``ptx``: the combining instructions
    (``combine``) just before the first butterfly shuffle, the shuffles and combines inside the warp, and
    the exchange between warps (shared-memory store, barrier, load, more shuffles) that follows.

    Raises ValueError (naming ``ptx``) if the code has no butterfly shuffle."""
    instrs = ptx_instructions(ptx)
    first = next((i for i, s in enumerate(instrs) if _opcode(s).startswith("shfl.sync.bfly")), None)
    if first is None:
        raise ValueError("ptx has no shfl.sync.bfly: no warp-level reduction to show")
    start = first
    while start > 0 and _opcode(instrs[start - 1]) == combine:
        start -= 1
    allowed = (combine, "shfl.sync.bfly", "st.shared", "bar.sync", "ld.shared")
    end = first
    while end + 1 < len(instrs) and _opcode(instrs[end + 1]).startswith(allowed):
        end += 1
    return instrs[start:end + 1]


def ptx_counts(instructions: Sequence[str]) -> dict[str, int]:
    """How many butterfly shuffles, shared-memory stores and loads, barriers, predicated instructions and
    branches a list of PTX instructions holds."""
    ops = [_opcode(s) for s in instructions]
    return {
        "shfl_bfly": sum(o.startswith("shfl.sync.bfly") for o in ops),
        "st_shared": sum(o.startswith("st.shared") for o in ops),
        "ld_shared": sum(o.startswith("ld.shared") for o in ops),
        "bar_sync": sum(o.startswith("bar.sync") for o in ops),
        "predicated": sum(s.startswith("@") for s in instructions),
        "branches": sum(o.startswith("bra") for o in ops),
    }


def shuffle_offsets(instructions: Sequence[str]) -> list[int]:
    """The lane offsets (XOR masks) of the butterfly shuffles, in order: ``shfl.sync.bfly.b32 d, a, 16,
    31, -1`` has offset 16."""
    return [int(s.split(",")[2]) for s in instructions if _opcode(s).startswith("shfl.sync.bfly")]


def ptx_predicated_load_excerpt(ptx: str) -> list[str]:
    """The first predicated global load of ``ptx`` with what sets it up: the comparison that computes its
    predicate, the moves that preset its destination (the value masked-off lanes keep), and the load.

    Raises ValueError (naming ``ptx``) if the code has no predicated load."""
    instrs = ptx_instructions(ptx)
    j = next((i for i, s in enumerate(instrs) if s.startswith("@") and "ld.global" in s), None)
    if j is None:
        raise ValueError("ptx has no predicated global load")
    pred = instrs[j].split()[0][1:]
    dest = instrs[j].split("{")[1].split("}")[0].strip()
    setp = next(s for s in reversed(instrs[:j]) if _opcode(s).startswith("setp") and f" {pred}," in s)
    moves, want = [], dest
    for s in reversed(instrs[:j]):  # the chain of moves that defines the preset value
        if _opcode(s).startswith("mov") and s.split()[1].rstrip(",") == want:
            moves.insert(0, s)
            want = s.split(",")[1].strip().rstrip(";")
    return [setp, *moves, instrs[j]]
