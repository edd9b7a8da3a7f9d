"""One benchmark harness for every kernel family of the course (run by ``make bench``, GPU only).

Every measurement of the course lives in this subpackage: the harness (this module, and ``_gpustate``, the
SM clock, temperature and power sampled during a timing), the benchmark families (:mod:`gpuperf.benchmark.family`),
and the measurements that are not "time a kernel family": :mod:`~gpuperf.benchmark.timing` (the reader's
own machine on its roofline), :mod:`~gpuperf.benchmark.host_overhead` (the host's cost of a call, an operator
count, a profiler timeline), :mod:`~gpuperf.benchmark.blas_threads`, :mod:`~gpuperf.benchmark.layer_profile`
(a transformer layer under the PyTorch profiler), :mod:`~gpuperf.benchmark.ncu` (Nsight Compute's reports)
and :mod:`~gpuperf.benchmark.occupancy` (the CUDA occupancy API asked live). Reading the recorded runs is
:mod:`gpuperf.results`' work.

A *family* is a module of :mod:`gpuperf.benchmark.family` (``gpuperf.benchmark.family.elementwise``,
``gpuperf.benchmark.family.matmul``, ...) that defines

* ``DESCRIPTION``: one line saying what it measures and against which same-run reference;
* ``cases(quick=False, **options) -> Iterable[Case]``: the cases, built lazily (a generator), so that a case's
  tensors exist only while it is checked and timed. ``quick=True`` gives a short sweep for a smoke run.

Everything else is done here, once: every case is *checked* before it is timed (``Case.check`` runs the
kernel on fresh random inputs against a reference and raises if it is wrong; that first run also compiles
it), *timed* with :func:`time_callable` (the median of ``triton.testing.do_bench``, CUDA events, after
warm-up), *counted* (FLOP and HBM bytes from the case), *compared* with the case it names as its same-run
reference (:func:`with_ratios`), and its *spread* measured by timing the cases marked ``retime=True`` a
second time (right after the first timing, with its own warm-up: the repeatability of one measurement). A
family may instead ask for *interleaved rounds* (``Case.rounds``, opt-in): a reference and the cases that
name it are then timed round-robin, so neither is always timed first on a cooler chip (see
:func:`run_cases`). ``bench/run.py`` saves each family's rows with their
provenance as ``book/data/<family>_<device>.json`` (:func:`gpuperf.records.save_run`); the book reads them
back with :func:`gpuperf.records.load_run` and :func:`summarize_ratios`.

A row (one dict per case) holds the case's ``params`` (kernel, dtype, shape, ... as the family chooses;
``Case.measure`` may add columns such as a peak memory) followed by :data:`ROW_KEYS`. Importing this module
does not import torch or triton.

What is not "time a callable" (CUDA C microbenchmarks, Nsight Compute profiles, compile-only records) is a
script under ``bench/`` built from the same pieces: :func:`time_callable`, :func:`time_host_callable`,
:func:`time_wall_per_call` and :func:`event_times_s` for times, :mod:`gpuperf.benchmark.profile` for the
profiler window and the ncu command line, :mod:`gpuperf.benchmark.compiled` for compile-only records, and
:func:`gpuperf.records.provenance` / ``save_run`` for the record (``bench/README.md`` lists them).
"""

from __future__ import annotations

import importlib
import math
import numbers
import pkgutil
import re
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Iterable, Mapping, Sequence

#: Keys every row ends with (after the family's own ``params``).
ROW_KEYS = ("family", "label", "flop", "bytes_moved", "time_s", "flop_per_s", "bytes_per_s", "metric",
            "reference", "ratio_to_reference", "time_s_repeat")

#: Keys a row of an interleaved group (``Case.rounds`` > 1) has after :data:`ROW_KEYS`: each round's median
#: time and the GPU's state while it ran (median SM clock, highest temperature, median board power).
ROUND_KEYS = ("time_s_rounds", "sm_clock_mhz_rounds", "temperature_c_rounds", "power_w_rounds",
              "gpu_state_source")

#: The rates a case can be compared on (``calls_per_s``: calls per second of host time, for
#: ``timing="host"`` cases; its row has a ``calls_per_s`` column after :data:`ROW_KEYS`).
METRICS = ("bytes_per_s", "flop_per_s", "calls_per_s")

#: How a case is timed: ``"device"`` (:func:`time_callable`, CUDA events) or ``"host"``
#: (:func:`time_host_callable`, the CPU's wall time per call issued back to back).
TIMINGS = ("device", "host")

Row = dict[str, Any]


@dataclass
class Case:
    """One thing to time.

    Attributes
    ----------
    label: unique within the family, e.g. ``"triton fp16 32768x4096"``.
    fn: the call that is timed (a closure over tensors prepared by the family).
    flop: floating-point operations of one call (0 for a copy).
    bytes_moved: the HBM bytes one call must move (each input read once, each output written once).
    metric: ``"bytes_per_s"`` (memory-bound families) or ``"flop_per_s"``; the rate compared with the reference.
    reference: the label of the same-run case this one is compared with (``None`` for a reference itself).
    check: called once before timing; raises (``RuntimeError`` naming the case) when the result is wrong.
    params: the row's leading columns (kernel, dtype, sizes, ...): plain JSON values.
    retime: time this case a second time, right after the first (the spread to read ratios against).
    rounds: when > 1, this case, its reference and the other cases naming that reference (consecutive in
        the family's order) are timed in interleaved rounds (:func:`run_cases`); 1 (the default) keeps
        the plain check-then-time order.
    timing: one of :data:`TIMINGS`.
    measure: called once after the check, before the timing; returns extra columns for the row (plain JSON
        values, e.g. ``{"peak_bytes": ...}`` from ``torch.cuda.max_memory_allocated``): what a family
        records about a case besides its time.
    """

    label: str
    fn: Callable[[], object]
    flop: float = 0.0
    bytes_moved: float = 0.0
    metric: str = "bytes_per_s"
    reference: str | None = None
    check: Callable[[], None] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    retime: bool = False
    rounds: int = 1
    timing: str = "device"
    measure: Callable[[], Mapping[str, Any]] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label:
            raise ValueError(f"label must be a non-empty string, got {self.label!r}")
        if not callable(self.fn):
            raise ValueError(f"fn must be callable, got {self.fn!r}")
        for name in ("flop", "bytes_moved"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {self.metric!r}")
        if self.timing not in TIMINGS:
            raise ValueError(f"timing must be one of {TIMINGS}, got {self.timing!r}")
        if self.reference is not None and not isinstance(self.reference, str):
            raise ValueError(f"reference must be a case label or None, got {self.reference!r}")
        if self.check is not None and not callable(self.check):
            raise ValueError(f"check must be callable or None, got {self.check!r}")
        if self.measure is not None and not callable(self.measure):
            raise ValueError(f"measure must be callable or None, got {self.measure!r}")
        if not isinstance(self.params, Mapping):
            raise ValueError(f"params must be a mapping of column names to values, got {self.params!r}")
        if isinstance(self.rounds, bool) or not isinstance(self.rounds, int) or self.rounds < 1:
            raise ValueError(f"rounds must be an integer >= 1, got {self.rounds!r}")
        if self.rounds > 1 and self.retime:
            raise ValueError("retime and rounds > 1 exclude each other (rounds already repeats the timing)")
        clash = [k for k in self.params if k in ROW_KEYS or k in ROUND_KEYS]
        if clash:
            raise ValueError(f"params must not use the harness's column names {clash}")


def _check_ms(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number of milliseconds > 0, got {value!r}")
    return float(value)


def time_callable(fn: Callable[[], object], warmup_ms: float = 25.0, rep_ms: float = 100.0) -> float:
    """Median time of one call of ``fn`` in seconds: ``triton.testing.do_bench`` (CUDA events, L2 cleared
    between calls by do_bench's cache flush) after ``warmup_ms`` of warm-up, repeated for ``rep_ms``."""
    warmup_ms = _check_ms("warmup_ms", warmup_ms)
    rep_ms = _check_ms("rep_ms", rep_ms)
    import triton.testing

    return float(triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median")) * 1e-3


def time_host_callable(fn: Callable[[], object], calls: int = 200, batches: int = 9,
                       warmup_calls: int = 50) -> float:
    """Host time of one call of ``fn`` in seconds: the median over ``batches`` of the wall time of ``calls``
    calls issued back to back with no synchronisation between them, divided by ``calls`` (the GPU is
    synchronised after each batch, outside the timed region). For small launches the GPU keeps up, so
    this is the time the CPU spends per call: argument checks, allocations, the launch."""
    import statistics
    import time

    import torch

    for name, value in (("calls", calls), ("batches", batches), ("warmup_calls", warmup_calls)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    for _ in range(warmup_calls):
        fn()
    torch.cuda.synchronize()
    per_call = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        per_call.append((time.perf_counter() - start) / calls)
        torch.cuda.synchronize()
    return float(statistics.median(per_call))


def time_wall_per_call(fn: Callable[[], object], calls: int, repeats: int = 5, warmup_calls: int = 3) -> float:
    """Wall time of one call of ``fn`` in seconds, launch cost and GPU time together: the median over
    ``repeats`` of (``calls`` calls issued back to back, the GPU synchronised at the end, inside the timed
    region) / ``calls``. The per-call time is the larger of the CPU's cost to issue a call and the GPU's
    time to run it (``bench/overhead.py``'s experiments)."""
    import time

    import torch

    for name, value in (("calls", calls), ("repeats", repeats), ("warmup_calls", warmup_calls)):
        if isinstance(value, bool) or not isinstance(value, int) or value < (0 if name == "warmup_calls" else 1):
            raise ValueError(f"{name} must be an integer >= {0 if name == 'warmup_calls' else 1}, got {value!r}")
    for _ in range(warmup_calls):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) / calls)
    times.sort()
    return times[len(times) // 2]


def event_times_s(fn: Callable[[], object], reps: int = 1, warmup_calls: int = 0,
                  backend: str = "torch") -> list[float]:
    """Device time of each of ``reps`` calls of ``fn`` in seconds, one CUDA event pair around each call (no
    L2 flush, no averaging: every call's own time), after ``warmup_calls`` untimed calls. ``backend``:
    ``"torch"`` (``torch.cuda.Event``) or ``"cupy"`` (``cupy.cuda.Event``, for the CUDA C kernels of
    ``bench/part1_gpu.py`` and ``bench/memory_gpu.py``, launched on CuPy's stream)."""
    if backend not in ("torch", "cupy"):
        raise ValueError(f"backend must be 'torch' or 'cupy', got {backend!r}")
    for name, value, low in (("reps", reps, 1), ("warmup_calls", warmup_calls, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    for _ in range(warmup_calls):
        fn()
    times = []
    for _ in range(reps):
        if backend == "cupy":
            import cupy as cp

            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
        else:
            import torch

            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e-3)
    return times


def _time_case(case: Case, warmup_ms: float, rep_ms: float) -> float:
    if case.timing == "host":
        return time_host_callable(case.fn)
    return time_callable(case.fn, warmup_ms, rep_ms)


def make_row(family: str, case: Case, time_s: float) -> Row:
    """The row of a case timed at ``time_s`` seconds (ratios are filled in by :func:`with_ratios`)."""
    if isinstance(time_s, bool) or not isinstance(time_s, numbers.Real) or not (math.isfinite(time_s) and time_s > 0):
        raise ValueError(f"time_s must be a finite positive number of seconds, got {time_s!r}")
    row = {
        **dict(case.params),
        "family": family,
        "label": case.label,
        "flop": float(case.flop),
        "bytes_moved": float(case.bytes_moved),
        "time_s": float(time_s),
        "flop_per_s": case.flop / time_s,
        "bytes_per_s": case.bytes_moved / time_s,
        "metric": case.metric,
        "reference": case.reference,
        "ratio_to_reference": None,
        "time_s_repeat": None,
    }
    if case.metric == "calls_per_s":
        row["calls_per_s"] = 1.0 / time_s
        row["timing"] = case.timing
    return row


def with_ratios(rows: Sequence[Row]) -> list[Row]:
    """Copies of ``rows`` with ``ratio_to_reference`` = the row's ``metric`` over its reference row's rate in
    the same metric (a speed ratio when both do the same work). Raises ``ValueError`` naming a reference
    label that no row of the same family has."""
    by_label = {(r["family"], r["label"]): r for r in rows}
    out = []
    for r in rows:
        ratio = None
        if r.get("reference") is not None:
            ref = by_label.get((r["family"], r["reference"]))
            if ref is None:
                raise ValueError(f"rows: case {r['label']!r} names reference {r['reference']!r}, which is not in "
                                 f"family {r['family']!r}")
            denominator = ref[r["metric"]]
            ratio = r[r["metric"]] / denominator if denominator > 0 else None
        out.append({**r, "ratio_to_reference": ratio})
    return out


def _progress(iterable: Iterable, enabled: bool, description: str) -> Iterable:
    if not enabled:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, desc=description, unit="case")


def run_cases(family: str, cases: Iterable[Case], *, progress: bool = True, warmup_ms: float = 25.0,
              rep_ms: float = 100.0, only: str | None = None, soak_s: float = 0.5) -> list[Row]:
    """Check, time and count every case (in order), time the ``retime`` cases twice, and return the
    rows with their ratios. ``only`` keeps the cases whose label contains that text, and every
    reference case (a case whose own ``reference`` is ``None``).

    Needs a CUDA GPU (``RuntimeError`` otherwise). A failed check stops the run with the case's label.

    Interleaved rounds (opt-in, ``Case.rounds`` > 1): such a case starts a *group*, and the following
    cases that name a member of the group as their reference join it (``ValueError`` if such a case
    asks for ``retime``). Each member is checked and run once
    when it arrives; when the group is complete (the next case does not join it, or the cases end), the
    members are first run back to back for ``soak_s`` seconds (a heat soak, so that the first round does
    not start on a cool chip at its boost clock), then timed round-robin ``max(rounds)`` times, the order
    reversed every other round, while a
    thread samples the SM clock, temperature and power (:mod:`gpuperf.benchmark._gpustate`). A row's
    ``time_s`` is the median of its rounds' times (so its ``ratio_to_reference`` is a ratio of medians;
    :func:`round_ratios` gives each round's own ratio), and :data:`ROUND_KEYS` keep every round. A group's
    tensors live until the next case has been built, so at most two groups are in memory at once.
    """
    if not isinstance(family, str) or not re.fullmatch(r"[a-z0-9_]+", family):
        raise ValueError(f"family must be a lowercase name of letters, digits and _, got {family!r}")
    warmup_ms = _check_ms("warmup_ms", warmup_ms)
    rep_ms = _check_ms("rep_ms", rep_ms)
    if isinstance(soak_s, bool) or not isinstance(soak_s, numbers.Real) or not (math.isfinite(soak_s) and soak_s >= 0):
        raise ValueError(f"soak_s must be a finite number of seconds >= 0, got {soak_s!r}")
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError(f"benchmark {family!r} needs a CUDA GPU; without one, read the recorded run with "
                           f"gpuperf.records.load_run")
    rows: list[Row] = []
    seen: set[str] = set()
    group: list[Case] = []  # an interleaved group, checked, waiting to be timed

    def flush() -> None:
        if group:
            rows.extend(_time_interleaved(family, group, warmup_ms, rep_ms, soak_s))
            group.clear()

    for case in _progress(cases, progress, family):
        if case.label in seen:
            raise ValueError(f"cases: label {case.label!r} appears twice in family {family!r}")
        seen.add(case.label)
        if only is not None and only not in case.label and case.reference is not None:
            continue  # references (cases with no reference of their own) are always kept
        joins = bool(group) and case.reference in {c.label for c in group}
        if joins and case.retime:
            raise ValueError(f"cases: {case.label!r} has retime=True but joins the interleaved group of "
                             f"{case.reference!r}, whose rounds already repeat its timing; drop retime")
        if not joins:
            flush()
        if case.check is not None:
            case.check()
        if case.measure is not None:
            _add_measured(case)
        case.fn()
        torch.cuda.synchronize()
        if joins or case.rounds > 1:
            group.append(case)
            continue
        rows.append(make_row(family, case, _time_case(case, warmup_ms, rep_ms)))
        if case.retime:  # at once, while the family still holds this case's tensors
            rows[-1]["time_s_repeat"] = _time_case(case, warmup_ms, rep_ms)
    flush()
    torch.cuda.empty_cache()
    return with_ratios(rows)


def _add_measured(case: Case) -> None:
    """Run ``case.measure`` and add its columns to the case's ``params`` (the row's leading columns)."""
    extra = case.measure()
    if not isinstance(extra, Mapping):
        raise ValueError(f"case {case.label!r}: measure() must return a mapping of columns, got {extra!r}")
    clash = [k for k in extra if k in ROW_KEYS or k in ROUND_KEYS or k in case.params]
    if clash:
        raise ValueError(f"case {case.label!r}: measure() returned columns {clash} the row already has")
    case.params = {**case.params, **extra}


def interleaved_order(n_cases: int, rounds: int) -> list[int]:
    """The order in which :func:`run_cases` times a group of ``n_cases`` over ``rounds`` rounds: indices
    0..n-1, then n-1..0, then 0..n-1 again, ... (every case is timed first in some round when n = 2)."""
    for name, value in (("n_cases", n_cases), ("rounds", rounds)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    order: list[int] = []
    for r in range(rounds):
        order += list(range(n_cases)) if r % 2 == 0 else list(range(n_cases - 1, -1, -1))
    return order


def _time_interleaved(family: str, group: Sequence[Case], warmup_ms: float, rep_ms: float,
                      soak_s: float) -> list[Row]:
    import statistics
    import time

    import torch

    if soak_s > 0:
        end = time.perf_counter() + soak_s
        while True:  # at least once
            for case in group:
                case.fn()
            torch.cuda.synchronize()
            if time.perf_counter() >= end:
                break

    from gpuperf.benchmark._gpustate import GpuSampler, make_reader

    reader = make_reader(torch.cuda.current_device())
    source, read = reader if reader is not None else (None, None)
    rounds = max(c.rounds for c in group)
    times: list[list[float]] = [[] for _ in group]
    states: list[list[dict]] = [[] for _ in group]
    for i in interleaved_order(len(group), rounds):
        with GpuSampler(read) as sampler:
            times[i].append(_time_case(group[i], warmup_ms, rep_ms))
        states[i].append(sampler.summary())
    rows = []
    for case, ts, st in zip(group, times, states):
        row = make_row(family, case, statistics.median(ts))
        row["time_s_rounds"] = ts
        for key in ("sm_clock_mhz", "temperature_c", "power_w"):
            row[f"{key}_rounds"] = [s[key] for s in st]
        row["gpu_state_source"] = source
        rows.append(row)
    return rows


def spread(rows: Sequence[Row]) -> list[tuple[str, float]]:
    """(label, relative change of time in %) for every re-timed row: the run-to-run noise to read ratios by."""
    return [(r["label"], 100.0 * (r["time_s_repeat"] / r["time_s"] - 1.0))
            for r in rows if r.get("time_s_repeat")]


def round_spread(rows: Sequence[Row]) -> list[tuple[str, float, float]]:
    """(label, fastest, slowest round in % of the median time) for every row timed in interleaved rounds."""
    return [(r["label"], 100.0 * (min(r["time_s_rounds"]) / r["time_s"] - 1.0),
             100.0 * (max(r["time_s_rounds"]) / r["time_s"] - 1.0))
            for r in rows if r.get("time_s_rounds")]


def round_ratios(rows: Sequence[Row]) -> dict[str, list[float]]:
    """``{label: [ratio in round 1, round 2, ...]}`` for every row timed in interleaved rounds whose
    reference was too: round r's ratio compares the two timings of round r (the rate in the row's metric
    is inversely proportional to its time, the work being fixed), so the list's range is the spread of
    the ratio itself, free of the drift both kernels shared."""
    by_label = {(r["family"], r["label"]): r for r in rows}
    out = {}
    for r in rows:
        ref = by_label.get((r["family"], r.get("reference")))
        if r.get("time_s_rounds") and ref is not None and ref.get("time_s_rounds"):
            own = [r[r["metric"]] * r["time_s"] / t for t in r["time_s_rounds"]]
            theirs = [ref[r["metric"]] * ref["time_s"] / t for t in ref["time_s_rounds"]]
            out[r["label"]] = [a / b for a, b in zip(own, theirs)]
    return out


def summarize_ratios(rows: Sequence[Row]) -> dict[str, float]:
    """``{label: ratio_to_reference}`` for every row that has a reference (recomputed from the rows)."""
    return {r["label"]: r["ratio_to_reference"] for r in with_ratios(rows) if r.get("reference") is not None}


def report(rows: Sequence[Row]) -> None:
    """Print the rows as a table: time, TB/s, TFLOP/s and the ratio to the same-run reference."""
    print(f"{'case':<48} {'time ms':>10} {'TB/s':>7} {'TFLOP/s':>8} {'x ref':>7}  reference")
    for r in with_ratios(rows):
        ratio = "" if r["ratio_to_reference"] is None else f"{r['ratio_to_reference']:.3f}"
        print(f"{r['label'][:48]:<48} {r['time_s'] * 1e3:>10.4f} {r['bytes_per_s'] / 1e12:>7.3f} "
              f"{r['flop_per_s'] / 1e12:>8.2f} {ratio:>7}  {r['reference'] or '-'}")
    for label, pct in spread(rows):
        print(f"  repeat {label}: {pct:+.2f} % in time")
    by_label = {r["label"]: r for r in rows}
    for label, lo, hi in round_spread(rows):
        r = by_label[label]
        clocks = ", ".join("-" if c is None else f"{c:.0f}" for c in r["sm_clock_mhz_rounds"])
        temps = ", ".join("-" if c is None else f"{c:.0f}" for c in r["temperature_c_rounds"])
        print(f"  rounds {label}: {len(r['time_s_rounds'])} x, {lo:+.2f} / {hi:+.2f} % of the median; "
              f"SM MHz [{clocks}], deg C [{temps}]")


def device_slug(device_name: str) -> str:
    """'NVIDIA H200' -> 'h200'; 'NVIDIA A100-SXM4-80GB' -> 'a100-sxm4-80gb' (the recorded files' suffix)."""
    if not isinstance(device_name, str):
        raise ValueError(f"device_name must be a string, got {device_name!r}")
    words = device_name.replace("NVIDIA", "").split()
    return re.sub(r"[^a-z0-9-]+", "-", "-".join(words).lower()).strip("-") or "gpu"


def families() -> list[str]:
    """Names of the benchmark families (the modules of :mod:`gpuperf.benchmark.family`), sorted."""
    from gpuperf.benchmark import family as package

    return sorted(m.name for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_"))


def load_family(name: str) -> ModuleType:
    """The family module ``name``; ``ValueError`` listing the families if there is none by that name."""
    known = families()
    if name not in known:
        raise ValueError(f"name must be one of the benchmark families {known}, got {name!r}")
    module = importlib.import_module(f"{__name__}.family.{name}")
    if not callable(getattr(module, "cases", None)):
        raise ValueError(f"benchmark family {name!r} defines no cases() function")
    return module


# --------------------------------------------------------------------------------------------------
# Helpers for families' checks (torch imported inside)
# --------------------------------------------------------------------------------------------------


def check_all_written(label: str, out) -> None:
    """Raise ``RuntimeError`` if any element of ``out`` (poisoned with NaN before the run) is still NaN."""
    import torch

    unwritten = torch.isnan(out)
    if bool(unwritten.any()):
        first = int(unwritten.flatten().nonzero()[0, 0])
        raise RuntimeError(f"{label}: {int(unwritten.sum())} output elements were never written (NaN), the first "
                           f"at flat index {first}")


def check_relative_error(label: str, out, reference, tolerance: float) -> float:
    """Raise ``RuntimeError`` unless ||out - reference|| / ||reference|| <= tolerance (float64, Frobenius norm);
    return the relative error. NaN never passes."""
    import torch

    ref = reference.double()
    err = float(torch.linalg.vector_norm(out.double() - ref) / torch.linalg.vector_norm(ref).clamp_min(1e-300))
    if not err <= tolerance:
        raise RuntimeError(f"{label}: relative error {err:.3g} exceeds the tolerance {tolerance:.3g}")
    return err


__all__ = [
    "Case",
    "METRICS",
    "TIMINGS",
    "ROUND_KEYS",
    "ROW_KEYS",
    "check_all_written",
    "check_relative_error",
    "device_slug",
    "event_times_s",
    "families",
    "load_family",
    "make_row",
    "interleaved_order",
    "report",
    "round_ratios",
    "round_spread",
    "run_cases",
    "spread",
    "summarize_ratios",
    "time_callable",
    "time_host_callable",
    "time_wall_per_call",
    "with_ratios",
]
