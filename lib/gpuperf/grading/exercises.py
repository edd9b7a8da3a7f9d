"""The exercises of the labs: for each, the cases (inputs drawn from a seed), the policy of what the reader's
function may do (:mod:`gpuperf.grading.watch`), and the tolerances with their derivations.

How a case runs (:class:`Runner`): the grader draws its inputs, snapshots them, calls the reader's function
inside a :class:`~gpuperf.grading.watch.Watch`, checks that the inputs are unchanged, that the guard bands of
every buffer are intact and that the outputs are memory torch or the grader gave out, and only then
computes the float64 reference (so the reference never exists while the reader's code runs).

**Tolerances.** ``u_out`` is the unit roundoff of the output format, ``u32 = 2^-24``; ``eta`` half the
spacing of its subnormals (2^-25 for fp16), the error of storing a result too small for ``u_out |x|`` to
bound. Each bound is the worst-case rounding error of the algorithm the lab teaches, fp32 accumulation
included, doubled, and scaled by the magnitudes that error is proportional to (never by a magnitude that
cancellation makes larger than the result, where that would hide a 16-bit accumulator):

* L4, C = A B: the rounding of C to ``u_out`` is relative to |C|; the fp32 sum of k products is at most
  (k + 2) u32 (|A||B|)_ij (products of 16-bit inputs are exact in fp32; fp32 products add one u32). Bound:
  ``2 (u_out |C_ij| + eta) + 2 (k + 2) u32 (|A||B|)_ij``. A case with non-negative inputs and k = 2048
  (|A||B| = |C| there) makes it about 1.5e-3 |C| in fp16: an accumulator rounded to 16 bits after every
  block of K exceeds it, and TF32 products (2^-11 each) exceed the fp32 bound.
* L5, o = softmax(S) V with S = scale Q K^T: a score carries an absolute error of at most
  ``Delta_i = (d + 2) u32 max_j A_ij + u32 max_j |S_ij|`` (A = scale |Q||K|^T), which changes P_ij by the
  factor exp(+-2 Delta_i); P is rounded to the input format before P V (u_p = u_in for 16-bit inputs, 0
  for fp32) and P V sums N_k terms in fp32. Bound: ``2 (u_out |o_id| + eta) + 2 (2 Delta_i + u_p
  + (N_k + d + 8) u32) (P|V|)_id``. For lse = m + log l: ``2 (Delta_i + (N_k + 8) u32 + u32 |lse_i|)``.
  The accumulation case (q = 0, so S = 0 and P = 1 exactly: Delta = u_p = 0; v = 1/3 + noise, N_k = 4096)
  leaves only ``2 u_out |o| + 2 (N_k + d + 8) u32 |o|``, which a running output kept in 16 bits exceeds.
* L6: P recomputed from the given lse (fp32) and S: relative error ``eP = 2 Delta_i + 2 u32 |lse_i| + 8 u32``;
  dP = dO V^T has ``(d + 2) u32 (|dO||V|^T)``; D_i = sum dO O, from O rounded to the input format, has
  ``(d + 2 + u_o / u32) u32 (|dO||O|)_i``; dS = P (dP - D) then has
  ``E = eP |dP - D| + P (delta dP + delta D)`` and is rounded to the input format (u_in |dS|) before its
  products. Bounds, each on its own output: dV ``2 (u_out |dV| + eta) + 2 ((eP + u_in) P)^T |dO|
  + 2 (N_q + 8) u32 P^T |dO|``; dQ ``2 (u_out |dQ| + eta) + 2 scale ((E + u_in |dS|) |K|
  + (N_k + 8) u32 |dS||K|)``; dK the same with Q and N_q. The accumulation case (q = 0, N_k a power of
  two, so P = 1/N_k is exact in every format; dO = 1/3 + noise, N_q = 4096) makes dV's bound about
  3 u_out |dV|, which a 16-bit dV accumulator exceeds.
"""

from __future__ import annotations

import sys

import contextlib
import dataclasses
import decimal
import fractions
import math
import numbers
import random
import types
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from gpuperf.grading.algorithm import Trace, _program_label, traced
from gpuperf.grading.core import (UNIT_ROUNDOFF, CaseResult, Tolerance, compare, dtype_name,
                                  elementwise_tolerance, softmax_bound)
from gpuperf.grading.watch import REFERENCE_MODULES
from gpuperf.grading.watch import (SOFTMAX_LIKE_NAMES, SOFTMAX_LIKE_OPS, TRITON_OPS, ForbiddenCall, Policy,
                                   Watch, _raw_storage_ptr, band_damage, banded_empty, unwritten)

U32 = UNIT_ROUNDOFF["fp32"]
#: Half the smallest subnormal of each format: the absolute error of rounding a tiny value to it (a
#: probability or a dS far below 1, or a result stored in the output format), where the relative bound u
#: no longer holds.
ETA = types.MappingProxyType({"fp32": 2.0**-150, "fp16": 2.0**-25, "bf16": 2.0**-134, "fp64": 0.0})
#: fp32 values below 2^-126 may flush to zero (GPUs flush the subnormals of exp): the absolute error of a
#: probability or a dS that underflows.
FLUSH = 2.0**-126


def _stored_error(x, name: str):
    """Twice a bound on the error of storing the values ``x`` in format ``name``: the rounding is at most
    max(u |x|, ETA) (ETA, half the subnormal spacing, for a result too small for u |x| to bound it), so
    u |x| + ETA bounds it. Without ETA an H200 run of L6 (2026-12-01) refused the course's solution: a dV
    whose exact value is -1.52e-8 came back as fp16's smallest subnormal, -5.96e-8; the kernel's fp32 value,
    already off by the rounding of P, was stored with an error of up to 2^-25 that u |dV| does not bound."""
    return 2 * (UNIT_ROUNDOFF[name] * x.abs() + ETA[name])


# --------------------------------------------------------------------------------------------------------
# Cases and the runner.
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One run of the reader's function: ``label`` names it in the report; ``run(runner)`` draws its inputs,
    calls the reader's function through ``runner.call`` and returns its :class:`CaseResult` list."""

    label: str
    run: Callable[[Any], list[CaseResult]]
    poison_bytes: int = 0
    interpret: bool = False  # run the kernels through Triton's interpreter (a GPU without TF32: see _no_tf32)
    device: str | None = None  # "cpu": the inputs on the CPU whatever the machine (with interpret: counted)


@dataclass(frozen=True)
class Exercise:
    key: str
    title: str
    solution: str  # "module:function" in gpuperf.kernels.labs (or a pure module)
    cases: Callable[[Any, str], list[Case]]  # (torch.Generator, device) -> cases
    forbidden: tuple[str, ...] = ()  # kept for compatibility: Python names refused on top of the policy
    needs_torch: bool = True
    policy: Policy | None = None  # None: a Triton exercise with the default allow-list

    def load_solution(self) -> Callable:
        import importlib

        module, _, name = self.solution.partition(":")
        return getattr(importlib.import_module(module), name)

    def get_policy(self) -> Policy:
        if self.policy is not None:
            return self.policy
        return Policy(self.key, refused_names=frozenset(self.forbidden))


class CallFailed(Exception):
    """A check after the reader's call failed; carries the results to report."""

    def __init__(self, results):
        super().__init__("; ".join(r.message for r in results))
        self.results = results


class Runner:
    """Calls the reader's function for one case, inside a watch, and checks what it left behind."""

    def __init__(self, fn, label: str, policy: Policy, device: str, allow_course_kernels: bool):
        self.fn = fn
        self.label = label
        self.policy = policy
        self.device = device
        self.allow_course_kernels = allow_course_kernels
        self.watch: Watch | None = None
        self.interpret = False
        self.notes: list[str] = []
        self.trace: Trace | None = None
        self.calls_without_launch = 0
        self.returned: list = []  # every tensor a call returned (held, so no later tensor takes its memory)
        self.poisoned: list = []  # masked loads without other= whose lanes were filled with NaN (watch)
        self.unset_atomics: list = []  # atomics that added onto memory nothing had written (watch)
        self.atomic_kernels: list = []  # kernels with an accumulating atomic (their TTIR)
        self.count_reads: dict = {}  # name: grader's tensor; after a call, self.reads[name] = elements read
        #: (a grader's tensor, a budget): after a call, self.reads["live:peak"] = the most elements computed
        #: from it (and held in memory made inside the call) alive at one time (_count_live)
        self.count_live = None
        self.reads: dict = {}

    def input(self, values, band: int = 1024, order=None, strides=None):
        """``values`` copied into a tensor with ``band`` elements of NaN before and after it (an unmasked load
        past either end reads NaN). ``order``: the dimensions from outermost to innermost in memory (default
        contiguous; e.g. ``(0, 2, 1, 3)`` lays a (B, H, N, d) tensor out as (B, N, H, d), so its heads are
        interleaved and its strides are not those of a contiguous tensor). ``strides``: given outright instead
        (the elements between are NaN)."""
        shape = tuple(values.shape)
        if strides is not None:
            strides = tuple(strides)
        elif order is None:
            strides = _contiguous_strides(shape)
        else:
            inner = _contiguous_strides(tuple(shape[i] for i in order))
            strides = [0] * len(shape)
            for pos, dim in enumerate(order):
                strides[dim] = inner[pos]
            strides = tuple(strides)
        view, _ = banded_empty(shape, strides, values.dtype, values.device, band)
        view.copy_(values)
        return view

    def output_buffer(self, shape, dtype):
        """A buffer the grader hands to the reader's function to write into (NaN, banded)."""
        view, alloc = banded_empty(shape, _contiguous_strides(shape), dtype, self.device,
                                   Watch(self.policy, self.device).band)
        self._given = getattr(self, "_given", []) + [(view, alloc)]
        return view

    def call(self, *args, names: tuple[str, ...] = (), fn=None, after=None, known=(), **kwargs):
        """Call the reader's function (or ``fn``) on ``args``; returns ``(result, watch)``. ``after`` runs
        inside the watch after the call (the backward of L6.autograd). Raises :class:`CallFailed` when an
        input changed, a guard band was overwritten or an output is not memory torch gave out."""
        import torch

        fn = self.fn if fn is None else fn
        tensors = [(names[i] if i < len(names) else f"argument {i}", a) for i, a in enumerate(args)
                   if isinstance(a, torch.Tensor)]
        given = getattr(self, "_given", [])
        given_ptrs = {_raw_storage_ptr(v) for v, _ in given}
        inputs = [(n, t) for n, t in tensors if _raw_storage_ptr(t) not in given_ptrs]
        snapshots = [(n, t, _storage_bits(t).clone()) for n, t in inputs]
        watch = Watch(self.policy, self.device, self.allow_course_kernels)
        self.watch = watch
        self.reads = {name: 0 for name in self.count_reads}
        if self.count_reads:
            _count_reads(watch, self.count_reads, self.reads, self.count_live[0] if self.count_live else None)
        if self.count_live is not None:
            _count_live(watch, *self.count_live, self.reads)
        copies: list = []  # the copies the reader's function makes, followed where the kernels are traced
        if self.policy.kernels and (self.device == "cpu" or self.interpret):
            _track_copies(watch, copies)
        for _, t in tensors:
            watch.know(t)
        watch.know(*known)
        snapshots += [("the tensor the grader handed to the backward", t, _storage_bits(t).clone())
                      for t in known]
        for _, alloc in given:
            watch.adopt(alloc)
        # under the interpreter (a CPU, or a case interpreted on a GPU) what the kernels do is counted,
        # program by program (gpuperf.grading.algorithm): races, loads, stores, tile products
        with traced(self.device == "cpu" or self.interpret) as trace:
            if trace is not None:  # known while the kernels run: a lane in one of them is booked to it
                trace.owners = [t for _, t in tensors] + list(known)
            integrity = _GraderIntegrity()
            returned = False
            try:
                with (interpreted_launches() if self.interpret else contextlib.nullcontext()), watch:
                    result = fn(*args, **kwargs)
                    extra = after(result) if after is not None else None
                returned = True
            finally:
                changed = integrity.restore()
                # the first look at what the reader's code can reach, before any method of it is called (an
                # instance attribute `detach` of a tensor, or a tuple subclass's __iter__, would run the reader's
                # code after the watch): only types and instance dictionaries are read
                handed = [(f"the tensor {n}", t) for n, t in tensors]
                handed += [(f"keyword argument {k}", a) for k, a in kwargs.items()]
                handed += [(f"an element of argument {i}", e) for i, a in enumerate(args) if type(a) in (tuple, list)
                           for e in a]
                handed += [("the tensor the grader handed to the backward", t) for t in known]
                tampered = _attribute_problems(handed)
                if returned and not tampered and not changed:
                    tampered = (_result_problems(result, "your function returned")
                                + _result_problems(extra, "the backward returned"))
                if tampered and not returned:  # an exception of the reader's code is on its way: this first
                    raise CallFailed([CaseResult(self.label, "-", False, tampered[0])])
        self.trace = trace
        if trace is not None:
            trace.owners = [t for _, t in tensors] + list(known)
            trace.images = _images_of(copies, trace.owners) if copies else []
            trace.images += _kernel_images(trace, trace.owners, trace.images)
        self.poisoned += [p for p in watch.counters.poisoned if p not in self.poisoned]
        self.unset_atomics += [p for p in watch.counters.unset_atomics if p not in self.unset_atomics]
        self.atomic_kernels += [k for k in watch.counters.atomic_kernels if k not in self.atomic_kernels]
        if changed:
            raise CallFailed([CaseResult(self.label, "-", False,
                                         f"your function changed the grader or torch ({', '.join(changed[:3])}): "
                                         "they were put back, and the case fails")])
        if tampered:
            raise CallFailed([CaseResult(self.label, "-", False, tampered[0])])
        _sync(self.device)
        if watch.violation is not None:  # raised inside, then swallowed by the reader's code
            raise watch.violation
        problems = []
        for name, t, bits in snapshots:
            if not torch.equal(_storage_bits(t), bits):
                problems.append(CaseResult(self.label, name, False,
                                           f"your function changed its input {name} (or the memory around it): "
                                           "inputs are read-only"))
        for alloc in watch.allocs:
            damage = band_damage(alloc)
            if damage:
                which = next(("the output buffer the grader gave your function" for v, a in given
                              if a is alloc), "a buffer your function allocated")
                problems.append(CaseResult(self.label, "memory", False,
                                           f"your kernel wrote past the end of {which}: {damage} changed; "
                                           "mask the lanes past the end"))
        from gpuperf.grading.watch import _EARLIER_CALLS

        # the outputs of this case's earlier calls (held), and of the grade's earlier cases whose memory the
        # watch still holds (so no other tensor can have taken it): an output kept and handed back again
        earlier = {_raw_storage_ptr(t) for t in self.returned}
        # only memory held since an earlier call: a buffer this call allocated may sit where an earlier case's
        # output lay once it was freed (an output torch made, ``dq_acc.to(q.dtype)``, is not held), and is new
        fresh = {a.storage for a in watch.allocs if a.storage not in getattr(watch, "carried", ())}
        earlier |= _EARLIER_CALLS["returned"] & (set(_EARLIER_CALLS["allocs"]) - fresh)
        earlier -= {_raw_storage_ptr(t) for t in getattr(watch, "grader_tensors", ())}  # out= given
        earlier -= given_ptrs
        if _EARLIER_CALLS["grading"]:
            _EARLIER_CALLS["returned"].update(_raw_storage_ptr(t) for t in _tensors(result))
        if any(_raw_storage_ptr(out) in earlier for out in _tensors(result)):
            problems.append(CaseResult(self.label, "-", False,
                                       "your function returned the memory it returned from an earlier call: that "
                                       "call's result is overwritten by this one; allocate each output inside "
                                       "the call"))
        self.returned += list(_tensors(result))
        if self.policy.kernels:
            for i, out in enumerate(_tensors(result)):
                if _raw_storage_ptr(out) in getattr(watch, "carried", ()):
                    problems.append(CaseResult(self.label, "-", False,
                                               "your function returned a buffer it kept from an earlier call: "
                                               "that call's result is overwritten by this one. A scratch buffer "
                                               "may be kept between calls; allocate each output inside the call"))
                elif _raw_storage_ptr(out) not in watch.known:
                    problems.append(CaseResult(self.label, "-", False,
                                               "your function returned a tensor that neither the grader gave it "
                                               "nor torch allocated inside this call (made from numpy, or kept "
                                               "from an earlier call per input object?)"))
        if self.policy.kernels and watch.counters.launches == 0:
            self.calls_without_launch += 1  # graded once the values are compared (grade_report)
        if trace is not None and not problems:
            for name, t in inputs:  # an atomic on an input, even one that leaves it unchanged, is a read in
                for launch in trace.launches:  # disguise (and a write to read-only memory on a GPU)
                    hit = next((n for n, *_ in launch.args if n in launch.atomic_args
                                and _same_storage(launch, n, t)), None)
                    if hit:
                        problems.append(CaseResult(self.label, "-", False,
                                                   f"your kernel {launch.kernel} updated its input {name} with an "
                                                   "atomic operation (even one that leaves the values unchanged): "
                                                   "inputs are read-only; read them with loads"))
                        break
                if problems:
                    break
        race = trace.race() if trace is not None else ""
        if race and not problems:
            problems.append(CaseResult(self.label, "-", False, race))
        if trace is not None and not problems and self.policy.kernels:
            outputs = [("the output buffer the grader gave your function", v) for v, _ in given]
            outputs += [("the tensor your function returned", t) for t in _tensors(result)
                        if _raw_storage_ptr(t) not in given_ptrs]
            again = _stored_again(trace, outputs)
            if not again and self.policy.exercise in _SCRATCH_EXERCISES:
                again = _scratch_stored_again(trace, self.policy.exercise, [t for _, t in inputs])
            if not again and self.policy.exercise.startswith(("L5", "L6")):
                empty, kernel = trace.empty_products()
                if empty:
                    again = (f"your kernel {kernel} made {empty} tile product(s) with a block that holds nothing: "
                             "its lanes were all masked off (keys past N_k, say, when there are more queries than "
                             "keys), or a tile of zeros stood in for a block never loaded (past the diagonal): "
                             "the loop walks blocks that hold nothing, work the GPU still does. End the loop at "
                             "the last block with a key in it (min(N_k, the causal end)) and skip the rest")
            if again and not getattr(self, "stored_again", ""):
                # told after the case's own checks (grade_report): a kernel that also makes another mistake
                # hears about that one first
                self.stored_again = again
        if problems:
            raise CallFailed(problems)
        return result, watch

    def written_check(self, name: str, tensor) -> list[CaseResult]:
        """Under the interpreter: every element of ``tensor`` must have been written by a kernel's store, a
        torch fill or a copy (not behind torch's back)."""
        if self.device != "cpu" or self.watch is None or not self.policy.kernels:
            return []
        first = unwritten(self.watch, tensor)
        if first < 0:
            return []
        index = _unravel(first, tuple(tensor.shape))
        return [CaseResult(self.label, name, False,
                           f"element {index} of {name} was not written by a kernel's store, a torch fill or a "
                           "copy: it was written behind torch's back, or not at all")]


def _count_reads(watch, tensors: dict, reads: dict, queries=None) -> None:
    """Count, for each of the grader's ``tensors``, the elements that torch operators which compute (not views,
    allocations or copies) read from its memory, or from a copy of it, while the reader's function runs
    (plain-PyTorch exercises: the analogue of the loads a kernel makes). Wraps the watch's dispatch handler
    of this one call; without that handler (another watch layout) nothing is counted.

    With ``queries`` (the grader's q), values computed from q are followed too, each with the rows of q it
    was computed from: whatever an operator computes from one of ``tensors`` and nothing of q (a sum over a
    dimension of size 1, a product by the identity) is an image of that tensor, read as the tensor itself;
    and every operator that combines values of q with values of k (a score product, by ``@`` or by
    elementwise multiplies) is recorded with the rows of q it takes: ``reads["order:back"]`` is
    ``(rows, rows left before)`` when such products come back to a block of queries they had left."""
    from gpuperf.grading.watch import ALLOCATIONS, COPIES, VIEWS, _storage_ptr

    inner = getattr(watch, "_dispatch", None)
    if inner is None:  # pragma: no cover - another watch layout
        return
    import weakref

    import torch

    # storage address: [name, weak references to the copies (and their views) on it, or None for the grader's
    # own tensor]; a copy's memory freed and handed to another tensor is no longer the grader's
    owners: dict = {_storage_ptr(t): [name, None] for name, t in tensors.items()}
    #: storage address: the most distinct elements of the grader's tensor its memory can hold (a broadcast
    #: image of a block of k, (k_blk[None] * ones(2, 1, 1)), holds the block once however often it repeats it)
    distinct: dict = {_storage_ptr(t): t.numel() for t in tensors.values()}

    def elements(a) -> int:
        """The elements of the grader's tensor that reading ``a`` (owned) reads: at most its memory holds."""
        return min(a.numel(), distinct.get(_storage_ptr(a), a.numel()))

    def owner_of(a):
        entry = owners.get(_storage_ptr(a))
        if entry is None:
            return None
        if entry[1] is not None and not any(r() is not None for r in entry[1]):
            del owners[_storage_ptr(a)]
            return None
        return entry[0]

    rank = {name: i for i, name in enumerate(tensors)}  # k before v: memory holding both is read as k
    extent: dict = {}  # storage address: (first, last + 1) element offsets that owned views of it cover

    def own(t, owner, held=None):
        """``t`` (memory of the reader's) holds values of ``owner``. With ``held`` (at most that many distinct
        elements of it written into ``t``: a copy, an operator's output), memory owned already is written again:
        it may hold more distinct elements than before (a buffer primed with one element, then a block copied
        in), up to its size, and memory holding another tensor's values too is read as the one that comes first
        (k copied into a buffer primed with v holds k)."""
        ptr = _storage_ptr(t)
        entry = owners.get(ptr)
        low = t.storage_offset()
        high = low + sum((n - 1) * st for n, st in zip(t.shape, t.stride()) if st > 0) + 1
        places = math.prod(n for n, st in zip(t.shape, t.stride()) if st != 0) if t.numel() else 0
        if entry is None or owner_of(t) is None:
            owners[ptr] = entry = [owner, []]
            distinct[ptr] = t.numel() if held is None else min(t.numel(), held)
            extent[ptr] = (low, high)
        elif held is not None and entry[1] is not None:
            if rank.get(owner, len(rank)) < rank.get(entry[0], len(rank)):
                entry[0] = owner
            # the elements the rest of the owned memory held, and those written into t now
            low, high = min(low, extent.get(ptr, (low, high))[0]), max(high, extent.get(ptr, (low, high))[1])
            extent[ptr] = (low, high)
            distinct[ptr] = min(max(high - low, t.numel()), min(distinct.get(ptr, 0), max(high - low - places, 0))
                                + min(t.numel(), held))
        if entry[1] is not None:
            entry[1].append(weakref.ref(t))

    #: storage address of a value computed from q: [rows, weak references, statistic], rows either ("map",
    #: first row, elements per row, storage offset of the first row) for an image of rows of q row by row, or
    #: ("span", lowest row, highest row); statistic: a value with no rows of q left (rowless below)
    from_q: dict = {}
    visited: list = []  # the spans of q rows of the score products, in order (consecutive repeats once)

    def q_rows(a):
        """The span (lowest, highest) of the rows of q that ``a`` was computed from, or None."""
        if queries is None or a.numel() == 0:
            return None
        ptr = _storage_ptr(a)
        if ptr == _storage_ptr(queries):
            rows = ("map", 0, queries.stride(0), queries.storage_offset())
        else:
            entry = from_q.get(ptr)
            if entry is None or not any(r() is not None for r in entry[1]):
                return None
            rows = entry[0]
        if rows[0] == "span":
            return rows[1], rows[2]
        _, first, per_row, start = rows
        last = a.storage_offset() + sum((n - 1) * st for n, st in zip(a.shape, a.stride()) if st > 0)
        return (first + max(a.storage_offset() - start, 0) // max(per_row, 1),
                first + max(last - start, 0) // max(per_row, 1))

    def rowless(a, out, joined=False) -> bool:
        """``a`` (a value of q) brings no rows of q to ``out``: a statistic of several rows of q (a 0-d value
        such as ``q.sum()``, a row of sums over q's rows, what is made from those alone) or a value broadcast
        along ``out``'s first dimension (``joined``: ``out`` joins its inputs, a concatenation or a stack:
        none is broadcast)."""
        entry = from_q.get(_storage_ptr(a))
        if entry is not None and entry[2] and any(r() is not None for r in entry[1]):
            return True
        if joined:
            return False
        if a.dim() == 0:
            return True
        if out is None or out.dim() == 0 or out.shape[0] <= 1:
            return False
        lead = a.dim() - out.dim()  # the dimension of a that broadcasting lines up with out's first
        return lead < 0 or a.shape[lead] == 1 or a.stride(lead) == 0

    def rows_in(flat, out=None, joined=False):
        """The rows of q an operator's inputs ``flat`` bring to ``out``: ``(inputs, (low, high), statistic)``,
        or None. Values combined with an image of k: the rows the query side brings (score_product). A value
        with no rows of q left (a statistic of all of q: ``q.sum() * 0`` added to a block of queries, a
        broadcast one) brings none where a value with rows is there too; several values with rows bring the
        rows they share (a block of queries plus something made from every row of q: the block)."""
        spans = [(a, q_rows(a)) for a in flat]
        spans = [(a, r) for a, r in spans if r is not None]
        if not spans:
            return None
        spans = [(a, r) for a, r in spans if owner_of(a) != "k"] or spans
        rowed = [(a, r) for a, r in spans if not rowless(a, out, joined)]
        statistic = not rowed
        spans = rowed or spans
        low, high = max(r[0] for _, r in spans), min(r[1] for _, r in spans)
        if low > high:  # rows they do not share: all of them
            low, high = min(r[0] for _, r in spans), max(r[1] for _, r in spans)
        return spans, (low, high), statistic

    def mark_q(flat, outs, copy=None, joined=False):
        """The outputs of an operator that read values of q: computed from those rows of q. ``copy``: the
        tensor a copy copies from (what the copied-to memory holds from now on)."""
        if copy is not None:
            flat = [copy]
        found = rows_in(flat, outs[0] if len(outs) == 1 else None, joined)
        if found is None:
            return
        spans, (low, high), statistic = found
        for t in outs:
            ptr = _storage_ptr(t)
            if queries is not None and ptr == _storage_ptr(queries):
                continue
            # a value of a single row, or none, made from several rows of q: a statistic of them
            stat = (statistic or t.dim() == 0 or t.shape[0] == 1) and high > low
            entry = from_q.get(ptr)
            if entry is not None and any(r() is not None for r in entry[1]) and copy is not None and \
                    (entry[0][0] != "map" or q_rows(t) != (low, high)):
                entry = None  # a copy of other rows of q over a buffer's: the rows copied
            if entry is not None and any(r() is not None for r in entry[1]):
                if entry[0][0] == "span":
                    entry[0] = ("span", min(entry[0][1], low), max(entry[0][2], high))
                entry[2] = entry[2] and stat
            else:
                a = spans[0][0]
                if len(spans) == 1 and t.dim() >= 1 and a.dim() >= 1 and t.is_contiguous() and \
                        (tuple(t.shape) == tuple(a.shape) or (t.shape[0] == a.shape[0] == high - low + 1)):
                    rows = ("map", low, t.stride(0), t.storage_offset())  # row i of t: row i of a's rows
                else:
                    rows = ("span", low, high)
                from_q[ptr] = entry = [rows, [], stat]
            entry[1].append(weakref.ref(t))

    def score_product(flat, out=None, joined=False):
        """An operator combining values of q and of k: note the rows of q it takes, and a return to rows left."""
        if not any(owner_of(a) == "k" for a in flat):
            return
        found = rows_in(flat, out, joined)
        if found is None:
            return
        rows = found[1]
        if visited and visited[-1] == rows:
            return
        if "order:back" not in reads:
            left = next((r for r in visited[:-1] if r != visited[-1] and r[0] <= rows[1] and rows[0] <= r[1]
                         and not (visited[-1][0] <= r[0] and r[1] <= visited[-1][1])), None)
            if left is not None:
                reads["order:back"] = (rows, visited[-1])
        visited.append(rows)

    def dispatch(func, args, kwargs):
        out = inner(func, args, kwargs)
        if watch.paused or watch.internal or not watch.active:
            return out
        name = func.overloadpacket.__name__
        if name in ALLOCATIONS:
            return out
        flat = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
        listed = [a for x in list(args) + list(kwargs.values()) if isinstance(x, (list, tuple))
                  for a in x if isinstance(a, torch.Tensor)]
        outs = [t for t in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(t, torch.Tensor)]
        with_q = queries is not None and any(q_rows(a) is not None for a in flat + listed)
        if with_q and name not in VIEWS:
            if name not in COPIES:
                joined = name in _JOINS
                score_product(flat + listed, outs[0] if len(outs) == 1 else None, joined)
                mark_q(flat + listed, outs, joined=joined)
            else:  # a copy: the rows of what it copies (none: a constant fill keeps what was there)
                src = args[0] if name in ("clone", "_to_copy") else args[1] if len(args) > 1 else None
                if isinstance(src, torch.Tensor) and q_rows(src) is not None:
                    mark_q([src], outs, copy=src)
        if name in VIEWS:  # a view of a copy keeps the copy's memory the grader's
            source = next((owner_of(a) for a in flat if owner_of(a) is not None), None)
            if source is not None:
                for t in (out if isinstance(out, (tuple, list)) else (out,)):
                    if isinstance(t, torch.Tensor) and owner_of(t) == source:
                        own(t, source)
            return out
        if name in COPIES:  # a copy of the grader's tensor is read as the tensor itself
            # the copy's source is what it copies from (copy_'s second argument, not the buffer it writes)
            src = args[0] if name in ("clone", "_to_copy") else args[1] if len(args) > 1 else None
            source = owner_of(src) if isinstance(src, torch.Tensor) else None
            if source is not None:
                held = elements(src)
                for t in outs:
                    own(t, source, held)
            return out
        # the outputs that hold values of the grader's tensors: (output, owner, elements), owned once the
        # operator's inputs are all counted (an in-place write is counted with what its memory held before)
        images: list = []

        def image(t, owner, n):
            for i, (u, o, m) in enumerate(images):
                if u is t:
                    first = o if rank.get(o, len(rank)) <= rank.get(owner, len(rank)) else owner
                    images[i] = (t, first, max(m, n))
                    return
            images.append((t, owner, n))

        for a in flat + [a for a in listed if not any(a is b for b in flat)]:
            owner = owner_of(a)
            if owner is None:
                continue
            n = elements(a)
            kind = name.rstrip("_")
            # a product or reduction computed from the grader's tensor and nothing of q (a sum over a dimension
            # of size 1, a product by the identity), or a reduction with as many elements as it read: an image
            # of the tensor (as every other operator's output already is), read as the tensor itself
            if ((kind in _MATRIX_PRODUCTS or kind in _REDUCTIONS) and queries is not None and not with_q) or \
                    (kind in _REDUCTIONS and any(t.numel() >= n for t in outs)):
                reads[owner] += n
                widest = f"{owner}:widest"
                reads[widest] = max(reads.get(widest, 0), n)
                for t in outs:
                    image(t, owner, n)
                continue
            # an elementwise image of the grader's tensor (k * 1.0, k.float() + 0, a concatenation) is read as
            # the tensor itself: reading it later reads k again. So is an image of another shape (a broadcast
            # k_blk[None] * ones(2, 1, 1), a repeat, an index k[rows]) that is neither a product nor a reduction:
            # it holds at most the elements it was made from, and it is reading it (a broadcast product's sum)
            # that reads them, not making it
            same = [t for t in outs if tuple(t.shape) == tuple(a.shape) or name in ("cat", "stack", "_cat")]
            other = [t for t in outs if not any(t is s for s in same)] \
                if kind not in _MATRIX_PRODUCTS and kind not in _REDUCTIONS else []
            if not same and other:
                for t in other:
                    image(t, owner, n)
                continue
            # so is an elementwise image made without q (k * scale before the loops, or a block of keys scaled
            # before its product): it computes no score; the products that read it (with q) read the keys
            if queries is not None and not with_q and kind not in _MATRIX_PRODUCTS:
                for t in same + other:
                    image(t, owner, n)
                continue
            reads[owner] += n
            widest = f"{owner}:widest"
            reads[widest] = max(reads.get(widest, 0), n)
            if kind not in _MATRIX_PRODUCTS:  # addmm_ too: a product, not an image of k
                for t in same + other:
                    image(t, owner, n)
        for t, owner, n in images:
            own(t, owner, n)
        return out

    watch._dispatch = dispatch


def _track_copies(watch, events: list) -> None:
    """Record, while the reader's function runs, every copy torch makes (``clone``, which ``.contiguous()``
    runs; ``_to_copy``, which ``.to()`` and ``.float()`` run; ``copy_``; ``fill_`` with a tensor's value), every
    constant fill and every new
    memory, as the layouts involved (plain numbers): :func:`_images_of` maps them back to the grader's
    tensors after the call. Wraps the watch's dispatch handler of this one call. While kernels are traced, each
    event goes to the trace too (:meth:`gpuperf.grading.algorithm.Trace.torch_event`): a copy's bytes keep the
    writers and lineage of what they copy, and a buffer torch filled with a copy in another dtype is counted in
    that dtype's elements."""
    from gpuperf.grading import algorithm as _algorithm
    from gpuperf.grading.watch import ALLOCATIONS, _storage_ptr

    inner = getattr(watch, "_dispatch", None)
    if inner is None:  # pragma: no cover - another watch layout
        return
    import torch

    def layout(t):
        return (_storage_ptr(t), t.element_size(), tuple(t.shape), tuple(t.stride()), t.storage_offset())

    def _storage_bytes(t) -> int:  # the bytes new memory spans from its storage's start (its elements)
        if not all(t.shape):
            return 0
        return t.element_size() * (t.storage_offset() + sum((n - 1) * st for n, st in zip(t.shape, t.stride())
                                                            if st > 0) + 1)

    def dispatch(func, args, kwargs):
        out = inner(func, args, kwargs)
        if not watch.watching():  # the reader's callbacks that Triton runs in a launch too (a grid function)
            return out
        name = func.overloadpacket.__name__
        outs = [t for t in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(t, torch.Tensor)]
        start = len(events)
        if name in ALLOCATIONS or name in ("clone", "_to_copy"):  # new memory: whatever it held is gone
            events.extend(("new", _storage_ptr(t), _storage_bytes(t)) for t in outs)
        # (a fill with a tensor's value, ``m2[i].fill_(m[i])``, copies that element)
        source = args[0] if name in ("clone", "_to_copy") else args[1] if name in ("copy_", "fill_") and \
            len(args) > 1 else None
        if isinstance(source, torch.Tensor) and outs:
            events.append(("copy", layout(source), layout(outs[0])))
        elif name in ("fill_", "zero_") and outs:
            events.append(("fill", layout(outs[0])))
        trace = _algorithm._TRACE  # the kernels traced now: a copy carries what kernels wrote (lineage, dtype)
        if trace is not None:
            for event in events[start:]:
                trace.torch_event(event)
        return out

    watch._dispatch = dispatch


@dataclass
class Image:
    """Memory the reader's function filled with a copy of one of the grader's tensors (``owner``), or of a part
    of it, in any layout (a clone, a transposed or reshaped copy, a dtype conversion, ``copy_`` into a larger
    buffer): ``rows[i]`` is the row of ``owner`` (as :func:`_row_of` counts them) that element ``i`` of the
    storage at ``base`` holds, -1 where it holds none of them."""

    owner: Any
    base: int
    element_size: int
    rows: Any  # numpy int64 per element of the storage, from its first byte
    #: a copy one of the reader's kernels made (:func:`_kernel_images`) holds from the launch after ``after``
    #: (the launch index of the copy) up to the launch before ``until`` (the first that wrote something else
    #: there); torch's copies hold for the whole call
    after: int = -1
    until: int = 1 << 62
    copies: int = 0  # a kernel's copy: the elements its copy launches stored (copies of copies included)
    #: a kernel's copy in which one element was computed from two rows (``k_i + 0 * k_j``): no row map
    mixed: bool = False
    #: a kernel's copy held by the launch that made it too (a program that stores K * s and reads it back in one
    #: kernel): only the pass counts read images so (:func:`_with_derived_passes`)
    own_launch: bool = False

    def holds(self, launch, name) -> bool:
        """Argument ``name`` of ``launch`` starts in this memory, with its element size (and, for a kernel's
        copy, ``launch`` runs while the copy is there)."""
        first = self.after - 1 if self.own_launch else self.after
        if not first < getattr(launch, "index", -1) < self.until and self.after >= 0:
            return False
        end = self.base + self.rows.size * self.element_size
        return any(n == name and self.base <= start < end and es == self.element_size
                   for n, start, _, es, _ in launch.args)

    def rows_at(self, addresses):
        """The row of ``owner`` held at each of ``addresses`` (an int64 array), -1 where none is."""
        import numpy as np

        offset = (addresses.astype(np.int64) - self.base)
        inside = (offset >= 0) & (offset < self.rows.size * self.element_size) & (offset % self.element_size == 0)
        out = np.full(addresses.shape, -1, dtype=np.int64)
        out[inside] = self.rows[offset[inside] // self.element_size]
        return out

    def row(self, address: int) -> int:
        """The row of ``owner`` held at byte ``address`` (an element that holds none: the last row held before
        it; past the end: a row past every row)."""
        import numpy as np

        offset = (address - self.base) // self.element_size
        if offset < 0:
            return -1
        if offset >= self.rows.size:
            return int(self.rows.max()) + 1 + offset - self.rows.size
        if self.rows[offset] >= 0:
            return int(self.rows[offset])
        before = np.flatnonzero(self.rows[:offset] >= 0)
        return int(self.rows[before[-1]]) if before.size else -1


def _images_of(events: list, owners: list) -> list:
    """The :class:`Image` of each of ``owners`` (the grader's tensors of a call) that the copies recorded by
    :func:`_track_copies` left in memory: replayed in order on tables of row numbers (a copy of a copy, or a
    copy of a view of one, is followed; a fill, a copy of something else or new memory there erases it)."""
    import torch

    def extent(shape, stride, offset) -> int:
        return offset + sum((s - 1) * st for s, st in zip(shape, stride)) + 1 if all(shape) else 0

    tables: dict = {}  # (storage address, element size): {owner's index: int64 rows per element}

    def table(key, index, size, create: bool):
        held = tables.setdefault(key, {})
        rows = held.get(index)
        if rows is None and not create:
            return None
        if rows is None or rows.numel() < size:
            grown = torch.full((max(size, 1),), -1, dtype=torch.int64)
            if rows is not None:
                grown[:rows.numel()] = rows
            held[index] = rows = grown
        return rows

    def regrain(layout, size):
        """``layout`` read in elements of ``size`` bytes (a view of k in int16, k.view(torch.int16), read as k's
        own elements), or None where its elements do not fall on them."""
        ptr, es, shape, stride, offset = layout
        if es == size or not shape or stride[-1] != 1 or any((x * es) % size for x in (shape[-1], offset)) or \
                any((st * es) % size for n, st in zip(shape[:-1], stride[:-1]) if n > 1):
            return layout if es == size else None
        return (ptr, size, tuple(shape[:-1]) + (shape[-1] * es // size,),
                tuple(st * es // size for st in stride[:-1]) + (1,), offset * es // size)

    def grain(ptr, es):
        """The element size in which memory at ``ptr`` holds a table: ``es``, or that of a table there."""
        return es if tables.get((ptr, es)) else next((key[1] for key, held in tables.items()
                                                     if key[0] == ptr and held), es)

    own = set()
    copied = {event[1][0] for event in events if event[0] == "copy"}  # the memory copies read (in any dtype)
    for index, t in enumerate(owners):
        key = (_raw_storage_ptr(t), t.element_size())
        if t.dim() == 0 or t.numel() == 0 or key[0] not in copied:
            continue
        own.add((key, index))
        rows = table(key, index, extent(t.shape, t.stride(), t.storage_offset()), True)
        numbers = torch.arange(t.numel() // t.shape[-1]).reshape(tuple(t.shape[:-1]) + (1,)).expand(t.shape)
        rows.as_strided(t.shape, t.stride(), t.storage_offset()).copy_(numbers)
    if not own:
        return []
    for event in events:
        if event[0] == "new":
            for key in [key for key in tables if key[0] == event[1]]:
                tables[key] = {i: r for i, r in tables[key].items() if (key, i) in own}
            continue
        if event[0] == "copy" and event[1][1] == event[2][1] and grain(*event[1][:2]) != event[1][1]:
            # a copy of bits of memory viewed in another dtype (k.view(torch.int16).clone()): replayed in the
            # elements of the table it reads, when both sides fall on them
            size = grain(*event[1][:2])
            source, target = regrain(event[1], size), regrain(event[2], size)
            if source is not None and target is not None:
                event = ("copy", source, target)
        elif event[0] == "fill" and grain(*event[-1][:2]) != event[-1][1]:  # a fill of it in another dtype
            target = regrain(event[-1], grain(*event[-1][:2]))
            if target is not None:
                event = event[:-1] + (target,)
        ptr, es, shape, stride, offset = event[-1]
        if not all(shape):
            continue
        size = extent(shape, stride, offset)
        sources = {}
        if event[0] == "copy":
            s_ptr, s_es, s_shape, s_stride, s_offset = event[1]
            for index, rows in tables.get((s_ptr, s_es), {}).items():
                if all(s_shape):
                    rows = table((s_ptr, s_es), index, extent(s_shape, s_stride, s_offset), True)
                    sources[index] = rows.as_strided(s_shape, s_stride, s_offset)
        for index in set(tables.get((ptr, es), {})) | set(sources):
            rows = table((ptr, es), index, size, True)
            view = rows.as_strided(shape, stride, offset)
            if index in sources:
                view.copy_(torch.broadcast_to(sources[index], shape))
            else:
                view.fill_(-1)
    return [Image(owners[index], key[0], key[1], rows.numpy().copy()) for key, held in tables.items()
            for index, rows in held.items() if (key, index) not in own and bool((rows >= 0).any())]


def _element_rows(tensor, addresses):
    """The row of ``tensor`` (as :func:`_row_of` counts them) whose element sits at each of ``addresses`` (an
    int64 array of byte addresses), -1 where none does (outside it, between its elements, or mid-element)."""
    import numpy as np

    es = tensor.element_size()
    offset = addresses.astype(np.int64) - tensor.data_ptr()
    inside = (offset >= 0) & (offset % es == 0)
    offset = np.where(inside, offset // es, 0)
    index = [np.zeros(addresses.shape, dtype=np.int64) for _ in range(tensor.dim())]
    rest = offset.copy()
    for stride, i in sorted(((st, i) for i, (size, st) in enumerate(zip(tensor.shape, tensor.stride()))
                             if size > 1), reverse=True):
        index[i], rest = np.divmod(rest, stride)
        inside &= index[i] < tensor.shape[i]
    inside &= rest == 0
    row = np.zeros(addresses.shape, dtype=np.int64)
    for i in range(tensor.dim() - 1):
        row = row * tensor.shape[i] + index[i]
    return np.where(inside, row, -1)


def _kernel_images(trace, owners: list, images: list) -> list:
    """The :class:`Image` s that the reader's own kernels made: the lanes a launch stored as element-for-element
    copies of loaded elements (:attr:`gpuperf.grading.algorithm.Launch.copies`) whose sources are elements of one
    of ``owners`` (the grader's tensors), or of a copy of one (``images``, or a kernel's copy made before), each
    mapped to the row it copies, in any order (a gather into a contiguous buffer, a transpose). One Image per
    tensor copied and buffer written (the arguments it went to, slices of one buffer merged); it holds from the
    launch after the copy until a launch writes something else into it. A copy is the tensor it copies, as
    torch's are: its loads are loads of those rows, and its stores are no scratch."""
    import numpy as np

    made: list = []
    current: dict = {}  # (owner index, element size, buffer start): the Image being filled
    for launch in trace.launches:
        if not launch.copies:
            continue
        dst = np.concatenate([d for d, _ in launch.copies]).astype(np.int64)
        src = np.concatenate([s for _, s in launch.copies]).astype(np.int64)
        owner = np.full(src.shape, -1, dtype=np.int64)
        row = np.full(src.shape, -1, dtype=np.int64)
        # a lane that copies part of an element (k copied through int16 views): its element size is the tensor's
        part = np.zeros(src.shape, dtype=bool)
        for index, tensor in enumerate(owners):
            within = (src - tensor.data_ptr()) % tensor.element_size()
            rows = _element_rows(tensor, src - within)
            take = (rows >= 0) & (owner < 0)
            owner[take], row[take], part[take] = index, rows[take], within[take] != 0
        for image in list(images) + made:
            if owner.min() >= 0:
                break
            if not image.after < launch.index < image.until and image.after >= 0:
                continue
            index = next((i for i, t in enumerate(owners) if t is image.owner), -1)
            within = (src - image.base) % image.element_size
            rows = image.rows_at(src - within)
            take = (rows >= 0) & (owner < 0)
            owner[take], row[take], part[take] = index, rows[take], within[take] != 0
        for index in np.unique(owner[owner >= 0]).tolist():
            pick = owner == index
            targets, held = dst[pick], row[pick]
            # copied in pieces smaller than its elements: the copy is an Image in the tensor's elements
            whole = owners[index].element_size() if part[pick].any() else 0
            order = np.lexsort((held, targets))  # one element computed from two rows of the tensor
            mixed = bool(((np.diff(targets[order]) == 0) & (np.diff(held[order]) != 0)).any())
            for name, start, end, es, _ in launch.args:
                inside = (targets >= start) & (targets < end)
                if not inside.any():
                    continue
                es = max(es, whole)
                # one buffer: this argument, or an Image of this tensor the argument overlaps or touches (a launch
                # per head writing each head's slice)
                key = next((key for key, image in current.items() if key[0] == index and key[1] == es and
                            image.base <= end and start <= image.base + image.rows.size * es), None)
                image = current.get(key)
                offsets = (targets[inside] - start) // es
                if image is not None:
                    base = min(image.base, start)
                    size = (max(image.base + image.rows.size * es, end) - base) // es
                    rows = np.full(size, -1, dtype=np.int64)
                    rows[(image.base - base) // es:(image.base - base) // es + image.rows.size] = image.rows
                    at = offsets + (start - base) // es
                    if ((rows[at] >= 0) & (rows[at] != held[inside])).any():  # rewritten with other rows
                        image.until = launch.index
                        del current[key]
                        image = Image(owners[index], base, es, rows, after=launch.index, copies=image.copies)
                    else:
                        image.base, image.rows = base, rows
                    current[(index, es, base)] = image
                    if key is not None and key in current and key != (index, es, base):
                        del current[key]
                else:
                    rows = np.full((end - start) // es, -1, dtype=np.int64)
                    at = offsets
                    image = Image(owners[index], start, es, rows, after=launch.index)
                    current[(index, es, start)] = image
                    made.append(image)
                if not any(m is image for m in made):
                    made.append(image)
                image.rows[at] = held[inside]
                image.copies += int(np.unique(at).size) if whole else int(inside.sum())
                image.mixed = image.mixed or mixed
                targets, held = targets[~inside], held[~inside]
    # a launch that writes anything else into a copy (another tensor's copy, a computed value) ends it
    for image in made:
        held = image.base + np.flatnonzero(image.rows >= 0) * image.element_size
        for launch in trace.launches:
            if launch.index <= image.after or launch.index >= image.until or not launch.writes:
                continue
            written = launch.writes[0].astype(np.int64)
            hit = written[np.isin(written, held)]
            if not hit.size:
                continue
            same = np.concatenate([d for d, _ in launch.copies]).astype(np.int64) if launch.copies else \
                np.zeros(0, dtype=np.int64)
            # (a copy of the same rows again keeps it)
            ok = np.isin(hit, same) & (image.rows_at(hit) >= 0)
            if not ok.all() or not _recopies(launch, image, owners, images, made):
                image.until = launch.index
                break
    return [image for image in made if bool((image.rows >= 0).any())]


def _derived_images(trace) -> list:
    """The :class:`Image` s of memory the reader's kernels filled with values computed lane by lane from the
    grader's tensors, whatever else went into them (:attr:`gpuperf.grading.algorithm.Launch.derived`: K times a
    factor computed from a reduction or loaded from memory, K plus an offset, ``tl.exp(K)``, as well as the copies
    :func:`_kernel_images` maps), each element mapped to the row it was computed from. Read by the causal skip
    checks and the causal pass check (:func:`_with_derived`: a tile read from such memory is a visit of the rows
    it was computed from), by the pass counts of every case (:func:`_with_derived_passes`) and by the scratch
    budget (such memory is the input, not scratch); nothing else.
    Computed once per trace; empty where no kernel stored such a value (then those checks are as before)."""
    found = getattr(trace, "derived_images", None)
    if found is not None:
        return found
    launches = getattr(trace, "launches", ())
    found = []
    if any(getattr(launch, "derived", None) for launch in launches):
        proxies = types.SimpleNamespace(launches=[
            types.SimpleNamespace(copies=list(launch.copies) + list(launch.derived), index=launch.index,
                                  args=launch.args, writes=launch.writes) for launch in launches])
        torch_made = [image for image in getattr(trace, "images", ()) if image.after < 0]
        found = _kernel_images(proxies, trace.owners, torch_made)
    try:
        trace.derived_images = found
    except AttributeError:  # pragma: no cover - a stand-in trace
        pass
    return found


def _with_derived(trace):
    """``trace`` whose copies include the memory the reader's kernels derived lane by lane from the grader's
    tensors (:func:`_derived_images`), for the causal skip checks: a far tile of keys read from K scaled by a
    factor computed from the data is a visit of those keys, as one read from a copy of K is."""
    derived = _derived_images(trace)
    if not derived:
        return trace
    import copy

    view = copy.copy(trace)
    view.images = list(derived) + list(getattr(trace, "images", ()))
    return view


def _makes_only_derived(launch) -> bool:
    """Every element ``launch`` stored is a copy or a value derived lane by lane from a loaded one
    (:attr:`~gpuperf.grading.algorithm.Launch.copies`, :attr:`~gpuperf.grading.algorithm.Launch.derived`), with no
    atomic and no ``tl.dot``: a kernel that scales K by a loaded scale into a buffer, and nothing else."""
    import numpy as np

    if getattr(launch, "copy_only", False):
        return True
    made = list(getattr(launch, "copies", ())) + list(getattr(launch, "derived", ()))
    writes = getattr(launch, "writes", None)
    if not getattr(launch, "derived", None) or launch.atomics or launch.dot_shapes or not writes or not made:
        return False
    written = np.unique(np.asarray(writes[0]).astype(np.int64))
    stored = np.unique(np.concatenate([np.asarray(d).astype(np.int64).ravel() for d, _ in made]))
    return bool(written.size) and bool(np.isin(written, stored).all())


def _with_derived_passes(trace):
    """:func:`_with_derived` for the pass counts of every case (:func:`_one_pass_check`,
    :func:`_backward_passes_check`): memory a kernel filled with values computed lane by lane from q, k or v is
    that tensor, so a walk of K times a loaded scale is a walk of K; and a launch that stores nothing but such
    values (and copies) reads nothing, as a copy kernel reads nothing (:func:`_rows_in`): its loads are counted
    where its values are read. A kernel that finds the rows' maxima while it stores K * s for a second kernel
    to walk reads K twice for a block of queries; one that only scales K into a buffer, walked once, reads it
    once. A copy (or derived copy) a kernel made is read so by that kernel too: a program that stores K * s as it
    walks K, then walks what it stored, reads K twice."""
    import copy

    derived = _derived_images(trace)
    images = list(derived) + list(getattr(trace, "images", ()))
    if not any(image.after >= 0 for image in images):
        return trace
    view = copy.copy(trace)
    view.images = [dataclasses.replace(image, own_launch=True) if image.after >= 0 else image for image in images]
    view.launches = list(trace.launches)
    for at, launch in enumerate(view.launches if derived else ()):
        if not getattr(launch, "copy_only", False) and _makes_only_derived(launch):
            view.launches[at] = copy.copy(launch)
            view.launches[at].copy_only = True
    return view


def _in_row_order(image) -> bool:
    """The rows of each head of ``image.owner`` lie in ``image`` in the order of their addresses (a copy of one
    in any row-major layout, one head after another or interleaved): a block loaded from it holds the rows from
    its first address's to its last's, as a block of the tensor itself does. A transposed or permuted copy does
    not: a load's first and last address need not bound the rows it holds; nor does one whose element was
    computed from two rows (:attr:`Image.mixed`)."""
    import numpy as np

    if image.mixed:
        return False
    at = np.flatnonzero(image.rows >= 0)
    rows = image.rows[at]
    heads = rows // max(1, image.owner.shape[-2]) if image.owner.dim() > 1 else np.zeros_like(rows)
    order = np.lexsort((at, heads))
    same = np.diff(heads[order]) == 0
    return bool((np.diff(rows[order])[same] >= 0).all())


def _scrambled_copy_check(trace, label, tensors: dict) -> list[CaseResult]:
    """A causal skip check's first question: no launch read a copy of q or k that a kernel of the reader's own
    wrote with its rows out of order (:func:`_in_row_order`), where the rows a block holds cannot be read from
    its addresses."""
    for which, tensor in tensors.items():
        for image in getattr(trace, "images", ()):
            if image.owner is not tensor or image.after < 0 or _in_row_order(image):
                continue
            for launch in trace.launches:
                if launch.copy_only:
                    continue
                name = next((n for n, *_ in launch.args if image.holds(launch, n) and launch.loaded.get(n)), None)
                if name is not None:
                    maker = next((f"your kernel {made.kernel}" for made in trace.launches
                                  if made.index == image.after), "a kernel of yours")
                    return [CaseResult(label, "-", False,
                                       f"your kernel {launch.kernel} loaded {name}, a copy of {which} that "
                                       f"{maker} wrote with the rows of a head out of their order "
                                       "(transposed, or permuted, or an element computed from two rows): the "
                                       "grader reads which rows a block holds from the addresses of its loads, "
                                       "so a copy must keep the rows in order "
                                       f"(any row-major layout). Copy {which} row by row, or with torch "
                                       "(.contiguous(), .clone()), or load it as you were given it")]
    return []


def _recopies(launch, image, owners, images, made) -> bool:
    """``launch`` (a later one) wrote into ``image`` only copies of the rows it already holds."""
    import numpy as np

    dst = np.concatenate([d for d, _ in launch.copies]).astype(np.int64)
    src = np.concatenate([s for _, s in launch.copies]).astype(np.int64)
    dst = dst - (dst - image.base) % image.element_size  # (copied in pieces: each piece's element)
    keep = image.rows_at(dst) >= 0
    dst, src = dst[keep], src[keep]
    rows = _element_rows(image.owner, src - (src - image.owner.data_ptr()) % image.owner.element_size())
    for other in list(images) + made:
        if other.owner is image.owner and other is not image and other.after < launch.index < other.until:
            rows = np.where(rows >= 0, rows, other.rows_at(src - (src - other.base) % other.element_size))
    return bool((rows == image.rows_at(dst)).all())


def _rows_in(trace, launch, name, tensor):
    """How argument ``name`` of ``launch`` reads ``tensor``, the grader's: a function from a byte address to
    the row of ``tensor`` held there where the argument is the tensor itself (:func:`_same_memory`) or a copy
    of it the reader's function made (:class:`Image`, by torch or by a kernel of its own), else None. A copy is
    the tensor it copies: its loads are loads of that tensor. A launch that only copies (every lane it stored
    is a copy, :func:`_kernel_images`) reads nothing: its loads are counted where its copies are read."""
    if getattr(launch, "copy_only", False):
        return None
    if _same_memory(launch, name, tensor):
        return lambda address: _row_of(tensor, address)
    for image in getattr(trace, "images", ()):
        if image.owner is tensor and image.holds(launch, name):
            return image.row
    return None


def _covered_by_loads(trace, tensor) -> int:
    """The rows of ``tensor`` (or of copies of it) that the loads of the call covered together."""
    last = tensor.numel() // max(1, tensor.shape[-1]) - 1
    spans = []
    for launch in trace.launches:
        for name, *_ in launch.args:
            rows = _rows_in(trace, launch, name, tensor)
            if rows is not None:
                for n, _, low, high in launch.spans:
                    if n == name:
                        first, final = sorted((rows(low), rows(high)))
                        if first <= last and final >= 0:
                            spans.append((max(first, 0), min(final, last)))
    return _covered_rows(spans)


def _count_live(watch, source, budget: int, reads: dict) -> None:
    """Follow what torch operators compute from ``source`` (a grader's tensor) while the reader's function
    runs: every tensor made from it, from something made from it, and every buffer such values are copied
    into, held through weak references; ``reads["live:peak"]`` is the most elements of such memory alive at
    one time (a buffer the watch handed out counts whole; the grader's own tensors not at all). The memory a
    plain-PyTorch exercise holds across its steps, which the size of each single step does not show. Past
    ``budget`` the garbage collector runs first (a reference cycle holds memory that is garbage already).
    Wraps the watch's dispatch handler of this one call; without that handler nothing is counted."""
    import gc
    import weakref

    from gpuperf.grading.watch import ALLOCATIONS, _storage_ptr

    inner = getattr(watch, "_dispatch", None)
    if inner is None:  # pragma: no cover - another watch layout
        return
    import torch

    grader = {_storage_ptr(t) for t in watch.grader_tensors} | {_storage_ptr(source)}
    live: dict = {}  # storage address: [elements, weak references to the tensors on it]
    reads["live:peak"] = 0

    def alive(ptr) -> bool:
        entry = live.get(ptr)
        return entry is not None and any(r() is not None for r in entry[1])

    def dispatch(func, args, kwargs):
        out = inner(func, args, kwargs)
        if watch.paused or watch.internal or not watch.active:
            return out
        if func.overloadpacket.__name__ in ALLOCATIONS:
            return out
        flat = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
        flat += [a for x in list(args) + list(kwargs.values()) if isinstance(x, (list, tuple))
                 for a in x if isinstance(a, torch.Tensor)]
        if not any(_storage_ptr(a) == _storage_ptr(source) or alive(_storage_ptr(a)) for a in flat):
            return out
        for t in (out if isinstance(out, (tuple, list)) else (out,)):
            if not isinstance(t, torch.Tensor):
                continue
            ptr = _storage_ptr(t)
            if ptr in grader:
                continue
            if not alive(ptr):
                alloc = next((a for a in watch.allocs if a.storage == ptr), None)
                live[ptr] = [alloc.stop - alloc.start if alloc is not None else t.numel(), []]
            live[ptr][0] = max(live[ptr][0], t.numel())
            live[ptr][1].append(weakref.ref(t))
        total = -1
        for attempt in (0, 1):
            for ptr in [p for p in live if not alive(p)]:
                del live[ptr]
            total = sum(entry[0] for entry in live.values())
            if attempt or total <= budget or reads["live:peak"] > budget:  # once over, no need to look again
                break
            saved, watch.internal = watch.internal, True
            try:
                gc.collect()
            finally:
                watch.internal = saved
        reads["live:peak"] = max(reads["live:peak"], total)
        return out

    watch._dispatch = dispatch


class _GraderIntegrity:
    """A snapshot of the names the grader relies on (the modules of :mod:`gpuperf.grading` and their classes,
    ``torch``, ``torch.Tensor``, ``numpy``, ``builtins``): :meth:`restore` puts back every name the reader's
    function rebound or deleted (a ``compare`` that always passes, a ``GradeReport.passed`` that is always
    true), removes names it added to the grader's modules and classes and to ``torch.Tensor`` (a ``sum``
    that shadows torch's), and returns their names. Names added to ``torch``, ``numpy`` and ``builtins``
    are left alone (torch imports submodules lazily). Changes undone inside the call are not seen."""

    def __init__(self):
        import builtins
        import sys

        import numpy
        import torch

        owners = [m for name, m in list(sys.modules.items())
                  if m is not None and (name == "gpuperf.grading" or name.startswith("gpuperf.grading."))]
        classes = [v for m in owners for v in vars(m).values()
                   if isinstance(v, type) and getattr(v, "__module__", "").startswith("gpuperf.grading")]
        owners += classes + [torch.Tensor, torch._C.TensorBase]
        # names added to these are changes too; torch, numpy and builtins gain names lazily
        self.strict = {id(o) for o in owners}
        owners += [torch, numpy, builtins] + [sys.modules[m] for m in REFERENCE_MODULES if m in sys.modules]
        self.saved = [(o, dict(vars(o))) for o in owners]

    def restore(self) -> list[str]:
        changed = []
        for owner, before in self.saved:
            now = vars(owner)
            if id(owner) in self.strict:
                for key in [key for key in now if key not in before]:
                    changed.append(f"{getattr(owner, '__name__', owner)}.{key}")
                    try:
                        delattr(owner, key)
                    except (AttributeError, TypeError):  # pragma: no cover - a read-only slot
                        pass
            for key, value in before.items():
                if key in now and now[key] is value:
                    continue
                if key in ("__doc__", "__dict__", "__weakref__") and key in now:
                    continue
                if key in now and _wraps(now[key], value) and not self._grader(owner):
                    continue  # torch wraps some of its functions on first use (torch.manual_seed)
                changed.append(f"{getattr(owner, '__name__', owner)}.{key}")
                try:
                    setattr(owner, key, value)
                except (AttributeError, TypeError):  # pragma: no cover - a read-only slot
                    pass
        return changed

    @staticmethod
    def _grader(owner) -> bool:
        return getattr(owner, "__module__", getattr(owner, "__name__", "")).startswith("gpuperf.grading") or \
            getattr(owner, "__name__", "").startswith("gpuperf.grading")


def _wraps(new, old) -> bool:
    for _ in range(8):
        new = getattr(new, "__wrapped__", None)
        if new is None:
            return False
        if new is old:
            return True
    return False


@contextlib.contextmanager
def interpreted_launches():
    """Run every compiled Triton launch through Triton's interpreter instead (it copies CUDA tensors to the
    host and back), with the interpreter's dot rounding fp32 operands to TF32 where the kernel asks for
    TF32. On a GPU without TF32 (a T4, sm_75) Triton's fp32 ``tl.dot`` is exact whatever the kernel says,
    so a forgotten ``input_precision="ieee"`` would pass there and fail on an A100 or H200; the fp32 cases
    run this way on such GPUs catch it."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    from gpuperf.grading.core import interpreter_dot_as_on_gpu

    original = JITFunction.run
    interpreted: dict = {}

    def run(self, *args, grid, warmup, **kwargs):
        _interpreter_names_in(self.fn)
        if self.fn not in interpreted:
            interpreted[self.fn] = InterpretedFunction(self.fn)
        return interpreted[self.fn].run(*args, grid=grid, warmup=warmup, **kwargs)

    def device_call(self, *args, **kwargs):
        # Triton's own @jit helpers (tl.zeros, tl.sum, tl.cdiv, ...) and the learner's, called from inside
        # an interpreted kernel: with TRITON_INTERPRET unset they are compiled JITFunctions, which refuse to
        # be called; interpret them too
        _interpreter_names_in(self.fn)
        if self.fn not in interpreted:
            interpreted[self.fn] = InterpretedFunction(self.fn)
        return interpreted[self.fn](*args, **kwargs)

    original_call = JITFunction.__call__
    original_rewrite = getattr(InterpretedFunction, "rewrite", None)

    def rewrite(self):
        # Triton 3.6 calls its own helpers (tl.max) as interpreted functions directly, not through
        # device_call: their cached rewrite runs in their module's globals, which need the names too
        _interpreter_names_in(self.fn)
        return original_rewrite(self)

    saved = _triton_language_state()
    JITFunction.run = run
    JITFunction.__call__ = device_call
    if original_rewrite is not None:
        InterpretedFunction.rewrite = rewrite
    try:
        with interpreter_dot_as_on_gpu(True):
            yield
    finally:
        JITFunction.run = original
        JITFunction.__call__ = original_call
        if original_rewrite is not None:
            InterpretedFunction.rewrite = original_rewrite
        _restore_triton_language(saved)
        # Triton 3.6 caches each function's rewrite on the class and puts the interpreter's names into the
        # function's module only when it rewrites; the restore above removes those names from triton.language's
        # modules, so a cached rewrite of one of its helpers would run without them ("name
        # 'interpreter_semantic' is not defined", seen on an H100 in L5's interpreted cases): forget those.
        cache = getattr(InterpretedFunction, "rewritten_fn", None)
        if isinstance(cache, dict):
            for fn in [f for f in cache if str(getattr(f, "__module__", "")).startswith("triton.language")]:
                del cache[fn]


def _interpreter_names_in(fn) -> None:
    """Put the names Triton's interpreter gives a rewritten function (``interpreter_semantic``, ...) back into
    ``fn``'s module where they are missing. Triton 3.6 adds them only when it first rewrites a function and
    keeps the rewrite, which runs in the module's own globals; a restore of those globals in between (ours of
    triton.language, or anything else's) left a cached rewrite that failed with "name 'interpreter_semantic'
    is not defined" (an H100, L5's interpreted cases, 2026-12-05)."""
    from triton.runtime import interpreter

    names = getattr(fn, "__globals__", None)
    if isinstance(names, dict) and "interpreter_semantic" not in names and \
            hasattr(interpreter, "interpreter_semantic"):
        for key, value in vars(interpreter).items():
            names.setdefault(key, value)


from gpuperf.grading.frontend import _restore_triton_language, _triton_language_state  # noqa: E402


def _no_tf32(device: str) -> bool:
    """A GPU without TF32 matrix units (compute capability below 8.0, e.g. Colab's T4)."""
    if device == "cpu":
        return False
    import torch

    return torch.cuda.get_device_capability()[0] < 8


def _stored_again(trace, outputs) -> str:
    """Round 23 (files 13, 48, 50): an element of an output stored twice, by one program in one launch (a store
    left inside the loop, writing every tile once per block of k) or by two launches (a value stored unfinished,
    read back and stored again): the output's traffic is then counted more than once. "" when none was."""
    import torch

    for what, t in outputs:
        if not isinstance(t, torch.Tensor) or t.numel() == 0:
            continue
        es = t.element_size()
        start = t.data_ptr()
        span = sum((n - 1) * abs(st) for n, st in zip(t.shape, t.stride())) + 1
        found = trace.stored_again(start, start + span * es)
        if found is None:
            continue
        address, first, second = found
        flat = (address - start) // es
        where = f"the element at offset {flat} of {what}"
        if t.is_contiguous():
            where = f"element {tuple(_unravel(flat, tuple(t.shape)))} of {what}"
        if second is None:
            kernel = trace.launches[first].kernel
            return (f"one program of your kernel {kernel} stored {where} more than once: every store of an output "
                    "is traffic to memory; compute each output value in registers and store it once (is a store "
                    "inside the loop?)")
        return (f"your kernels {trace.launches[first].kernel} and {trace.launches[second].kernel} both stored "
                f"{where}: an output written, read back and written again costs its traffic twice; finish each "
                "value before you store it, once")
    return ""


#: The exercises whose lesson is a loop that keeps its accumulator in registers (tile products over blocks of K
#: or of keys): a workspace of the reader's stored again and again is that accumulator in memory.
_SCRATCH_EXERCISES = frozenset(("L4.matmul", "L5.forward", "L5.causal", "L6.backward", "L6.autograd"))


#: L4.matmul: the launches with tile products one call may make (one grid makes every tile; a few more leave
#: room for a learner's warm-up or a split in two).
_MATMUL_PRODUCT_LAUNCHES = 4


#: Round 29 (36): in L4.matmul a program that writes at least this many tiles' worth of elements, more than this
#: many times what its share of the walk over K makes, keeps its accumulator in memory, a slot a block.
_MATMUL_CHOPPED_STORES = 4


def _scratch_stored_again(trace, exercise: str = "L4.matmul", inputs=()) -> str:
    """Round 25 (04, 10): memory of the reader's own (a workspace, not an output) that one program stored more
    than once in a launch (the accumulator loaded, added to and stored back every block of K), or three or more
    launches with tile products, each from what the one before stored (the walk over K done from Python, a
    launch per block). Plain stores and exchanges; atomic adds (split-K's partial sums, dQ) only in L4.matmul,
    where one program adds computed values to one element twice (round 27's 23: split-K and stream-K add to
    an element once a program; in L6 a persistent backward adds to one row of dQ once for each block of keys
    it takes). In L4.matmul also (rounds 28-29): more than ``_MATMUL_PRODUCT_LAUNCHES`` launches with tile
    products in one call, one program writing ``_MATMUL_CHOPPED_STORES`` or more tiles' worth, more than that many
    times what its share of the walk over K makes (a partial tile kept per block of K), and a launch making tile
    products from what an earlier launch's products made (a walk over K from Python, however few launches). ""
    when none was."""
    for launch in trace.launches:
        again = launch.stored_again
        if again is not None and again.size:
            return (f"one program of your kernel {launch.kernel} stored the same element of a buffer of your own "
                    "(a workspace) more than once in one launch: an accumulator kept in memory is loaded and "
                    "stored back every block, traffic the tiled loop exists to avoid. Keep the accumulator in "
                    "registers (tl.zeros before the loop, added to inside it) and store the finished tile once")
    products = [launch for launch in trace.launches if launch.dot_shapes]
    if exercise == "L4.matmul" and len(products) > _MATMUL_PRODUCT_LAUNCHES:
        # round 28 (04, 05, 15): the walk over K run from Python, however the partials are handed on (added
        # atomically, stored to slots reduced afterwards, read back with an atomic add of 0): one launch makes
        # every tile, as split-K's does, and a reduction or a cast after it makes no products
        return (f"your function launched kernels that made tile products {len(products)} times in one call "
                f"({products[0].kernel} first): a loop over blocks of K (or of tiles) run from Python, a launch "
                "per block, writes and re-reads partial results every time. Launch one grid that makes every tile "
                "of C, walking K inside the kernel with the accumulator in registers")
    k_len = int(inputs[0].shape[-1]) if exercise == "L4.matmul" and inputs and inputs[0].dim() == 2 else 0
    for launch in products if k_len and launch.writes else ():
        import numpy as np

        # round 29 (36): one program storing a partial tile after each block of K, each to a slot of its own, a
        # reduction summing them afterwards: the accumulator walks memory in a single launch. Per program (per
        # draw), the elements it wrote against what its tile products make: a persistent program writes each of
        # its tiles once after the whole walk over K, split-K's program its slice's tile once (round 29's review:
        # a split into many slices writes one tile a program), an epilogue in pieces the same elements
        m, block_k, n = max(launch.dot_shapes, key=lambda shape: shape[0] * shape[2])[:3]
        tile = m * n
        walk = -(-k_len // max(block_k, 1))
        programs, written = np.unique(launch.writes[1], return_counts=True)
        for program, count in zip(programs.tolist(), written.tolist()):
            dots = launch.dots_run.get(program, 0)
            if dots and count >= _MATMUL_CHOPPED_STORES * tile and \
                    count * walk > _MATMUL_CHOPPED_STORES * tile * dots:
                return (f"one program of your kernel {launch.kernel} wrote {count} elements, "
                        f"{count / tile:.0f} tiles of {m} x {n}, after {dots} tile products (K = {k_len} is "
                        f"{walk} blocks of {block_k}): partial tiles kept in memory, a slot for each block of K "
                        "summed afterwards, move every partial tile through memory, traffic the tiled loop exists "
                        "to avoid. Keep the accumulator in registers across K and write each tile once (split-K: "
                        "each program writes its slice's tile once)")
    for launch in trace.launches if exercise == "L4.matmul" else ():
        again = getattr(launch, "added_again", None)
        if again is not None and again.size:
            return (f"one program of your kernel {launch.kernel} atomically added to the same element of a buffer "
                    "more than once in one launch: an accumulator kept in memory (added to every block) moves "
                    "its tile through memory every block, traffic the tiled loop exists to avoid. Keep the "
                    "accumulator in registers (tl.zeros before the loop, added to inside it) and write the "
                    "finished tile once")
    # launches that made tile products from what an earlier product launch of the same kernel stored: a chain of
    # them (two links or more) is a loop over blocks of K or keys run from Python, whether the partial result goes
    # back to the same workspace (round 25's 10) or to a fresh buffer each time (round 26's 07), handed on
    # directly, through a copy kernel (round 27's 38) or through another product kernel taking turns with it
    # (round 27's 22); reductions of split-K's partials make no products (round 26's h02: a tree of in-place
    # additions), and a pipeline of different kernels, each launched once, is no loop (round 23's h20: a forward,
    # a dQ kernel that stores D, a dK, dV kernel that reads it)
    launches = trace.launches
    reach: list = []  # per launch: every earlier launch whose stores reach it, through any launches
    links: dict = {}
    for i, launch in enumerate(launches):
        came: set = set()
        for j in {source >> 32 for sources in launch.sources.values() for source in sources}:
            if 0 <= j < i:
                came |= {j} | reach[j]
        reach.append(came)
        if launch.dot_shapes and exercise == "L4.matmul" and any(launches[j].dot_shapes for j in came):
            # round 29 (06, 50): C is one product, so in L4.matmul any launch making tile products from what an
            # earlier one made (any kernel, one link) walks K from Python
            first = next(launches[j].kernel for j in sorted(came) if launches[j].dot_shapes)
            return (f"your kernel {launch.kernel} made tile products from what your kernel {first} had made "
                    "before it in the same call: C is one matrix product, walked over K inside one launch, so "
                    "a second launch that picks up the first's partial result runs the loop over K from Python, "
                    "storing and reloading the partial tiles. Make every tile of C in one launch (split-K: "
                    "launches side by side, each from A and B only, then a reduction)")
        if launch.dot_shapes and any(launches[j].dot_shapes and launches[j].kernel == launch.kernel for j in came):
            links[launch.kernel] = links.get(launch.kernel, 0) + 1
    kernel, most = max(links.items(), key=lambda item: item[1], default=("", 0))
    if most < 2:
        return ""
    return (f"your kernel {kernel} made tile products in "
            f"{most + 1} launches of one call, each from what the one before stored: a loop over blocks of K or "
            "of keys run from Python, a launch per block, stores and reloads the partial result every time. "
            "Walk the blocks inside one kernel, accumulating in registers, and store each result once")


def _unravel(flat: int, shape) -> list[int]:
    index = []
    for size in reversed(shape):
        index.append(flat % size)
        flat //= size
    return list(reversed(index))


def _storage_bits(t):
    import torch

    return torch.empty(0, dtype=torch.uint8, device=t.device).set_(torch._C.TensorBase.untyped_storage(t))


def _float64_cpu(t):
    """A float64 CPU copy of the grader's tensor ``t``, through torch's methods of the class (not the instance's:
    an attribute ``double`` or ``detach`` set on it would run the reader's code; Runner.call refuses those, and
    this keeps the references out of their reach anyway)."""
    import torch

    return torch._C.TensorBase.to(torch._C.TensorBase.detach(t), device="cpu", dtype=torch.float64)


_PLAIN_VALUES = (type(None), bool, int, float, str)
_vars = vars  # (bound before any reader's code runs; builtins are put back by _GraderIntegrity anyway)


def _attribute_problems(named) -> list[str]:
    """Round 22: an instance attribute of a tensor the grader handed over or gets back (``out.detach = ...``,
    ``y.double = ...``, set on that one plain tensor object, or on its storage object) shadows torch's method of
    that name, and would run the reader's code when the grader calls it after the call. Torch puts nothing in
    a tensor's ``__dict__``; any entry is refused, named. Reads types and ``__dict__`` only (data descriptors
    such as ``.grad`` and ``.is_leaf`` cannot be shadowed by an instance attribute)."""
    import torch

    problems = []
    for where, t in named:
        if type(t) is not torch.Tensor and type(t) is not torch.nn.Parameter:
            continue
        for what, obj in ((t, t), ("its gradient", t.grad if t.is_leaf else None)):
            if obj is None or (type(obj) is not torch.Tensor and type(obj) is not torch.nn.Parameter):
                continue
            own = list(_vars(obj))
            try:
                own += [f"untyped_storage().{n}" for n in _vars(torch._C.TensorBase.untyped_storage(obj))]
            except (RuntimeError, TypeError, NotImplementedError):  # pragma: no cover - a tensor without storage
                pass
            if own:
                of = where if what is t else f"{what} ({where})"
                problems.append(f"your function set the Python attribute `{own[0]}` on {of}: tensors the grader "
                                "hands over or gets back must carry no attributes of your own (the grader calls "
                                "their methods after your function returns), so set none on them and keep "
                                "extra values in variables")
                break
    return problems


def _result_problems(result, who: str, depth: int = 0) -> list[str]:
    """Round 22: what the reader's function returned, looked at by type only: a plain ``torch.Tensor`` (or
    ``nn.Parameter``) without instance attributes, ``None``/a number/a string, or an exact ``tuple``/``list`` of
    those. A subclass of tuple is refused: its ``__iter__`` ran the reader's code when the grader unpacked it
    after the watch (38, 39); so is any other class (``isinstance`` reads an object's ``__class__``, which a
    property of the reader's can answer)."""
    import torch

    kind = type(result)
    if kind is tuple or kind is list:
        if depth > 2:
            return [f"{who} tuples nested more than three deep: return what the exercise documents (a tensor, or "
                    "a plain tuple of tensors)"]
        problems = []
        for i, item in enumerate(result):
            problems += _result_problems(item, who, depth + 1)
        return problems
    if kind is torch.Tensor or kind is torch.nn.Parameter:
        return _attribute_problems([("a tensor " + who.replace("your function", "it"), result)])
    if kind in _PLAIN_VALUES:
        return []
    if issubclass(kind, (tuple, list)):
        base = "tuple" if issubclass(kind, tuple) else "list"
        return [f"{who} a {kind.__name__}, a subclass of {base}: return a plain {base} (`return a, b`), "
                "since the grader walks the result after your function returns and a subclass's methods would run "
                "your code there"]
    if issubclass(kind, torch.Tensor):
        return [f"{who} a tensor of the subclass {kind.__name__}: return a plain torch.Tensor (a subclass's "
                "methods would run your code when the grader reads it)"]
    return [f"{who} an object of type {kind.__name__}: return what the exercise documents (a torch.Tensor, or "
            "a plain tuple of tensors)"]


def _tensors(result) -> list:
    import torch

    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        return [r for r in result if isinstance(r, torch.Tensor)]
    return []


def _contiguous_strides(shape) -> tuple[int, ...]:
    strides, acc = [], 1
    for s in reversed(tuple(shape)):
        strides.append(acc)
        acc *= max(int(s), 1)
    return tuple(reversed(strides))


def _device() -> str:
    import torch

    if torch.cuda.is_available():
        from gpuperf.kernels import interpreter_enabled  # (importing it sets the interpreter switch)

        return "cpu" if interpreter_enabled() else "cuda"
    return "cpu"


def _dtypes(device: str):
    """fp32 and fp16 everywhere; bf16 on GPUs of compute capability 8.0 or later only (the interpreter
    cannot do bf16, and a T4, sm_75, has no bf16 arithmetic: Triton rejects or emulates it there)."""
    import torch

    if device == "cpu" or torch.cuda.get_device_capability()[0] < 8:
        return (torch.float32, torch.float16)
    return (torch.float32, torch.float16, torch.bfloat16)


def _randn(gen, shape, dtype, device, scale=1.0, offset=0.0):
    import torch

    x = torch.randn(*shape, generator=gen, dtype=torch.float32) * scale + offset
    return x.to(dtype).to(device)


def _sync(device: str) -> None:
    if device != "cpu":
        import torch

        torch.cuda.synchronize()


def torch_randint(gen, lo: int, hi: int) -> int:
    import torch

    return int(torch.randint(lo, hi, (1,), generator=gen))


def _torch():
    import torch

    return torch


def _bound(scale_name: str, reason: str) -> Tolerance:
    """A tolerance whose elementwise bound is computed whole (passed to ``compare`` as ``scale``)."""
    if "+ eta)" in scale_name:
        scale_name += " (eta: half the output format's subnormal spacing, 2^-25 in fp16)"
    return Tolerance(atol=0.0, rtol=1.0, reason=reason, scale_name=scale_name)


# ---- L1: roofline arithmetic (plain Python) ----------------------------------------------------------


def _l1_time_cases(gen, device) -> list[Case]:
    rng = random.Random(int(gen.initial_seed()))
    cases = []
    # The intensity is drawn relative to the drawn ridge point, so each label is true by construction. Two are
    # drawn a relative 1e-7 to 1e-6 below and above the ridge: a rule that switches from the memory roof to
    # the compute roof at an intensity more than 1e-6 away from the ridge (round 12's 03 switched at half the
    # ridge, and passed the old fixed points ridge / 4, ridge and 4 x ridge) answers one of them with an
    # error of at least 1e-7, 100 times the tolerance.
    below, above = 1 - 10 ** rng.uniform(-7, -6), 1 + 10 ** rng.uniform(-7, -6)
    specs = [("a memory-bound op", rng.uniform(0.05, 0.9)), ("a compute-bound op", rng.uniform(1.1, 20.0)),
             ("an op just below the ridge point", below), ("an op just above the ridge point", above),
             ("an op exactly at the ridge point", 1.0), ("no arithmetic at all (a copy)", 0.0)]
    for label, of_ridge in specs:
        peak = rng.uniform(0.5, 2.0) * 10 ** rng.randint(11, 15)
        bw = rng.uniform(0.5, 5.0) * 10 ** rng.randint(10, 12)
        bytes_moved = rng.uniform(1, 9) * 10 ** rng.randint(6, 10)
        ridge = peak / bw
        flop = bytes_moved * ridge * of_ridge
        expected = max(flop / peak, bytes_moved / bw)
        if abs(of_ridge - 1) < 0.5 and of_ridge != 1:  # the drawn distance, which .3g would round to 1
            label += f" (intensity = ridge x (1 {'-' if of_ridge < 1 else '+'} {abs(of_ridge - 1):.2g}))"
        elif of_ridge not in (0.0, 1.0):
            label += f" (intensity = ridge x {of_ridge:.3g})"

        def run(runner, flop=flop, bytes_moved=bytes_moved, peak=peak, bw=bw, expected=expected, label=label):
            got = runner.fn(flop, bytes_moved, peak, bw)
            return [_scalar_result(label, "time_s", got, expected, 1e-9)]

        cases.append(Case(f"{label}: flop={flop:.3g}, bytes={bytes_moved:.3g}, peak={peak:.3g} FLOP/s, "
                          f"bandwidth={bw:.3g} B/s", run))
    return cases


def _l1_bytes_cases(gen, device) -> list[Case]:
    rng = random.Random(int(gen.initial_seed()) + 1)
    cases = []
    # The third case's sizes are odd and at least 2501 (with one byte per element): its count, a sum of three
    # odd products, is an odd integer above 2^24 = 16777216 on every seed, which float32 cannot hold (a count
    # kept in float32 is rounded; round 8's a02 passed on the seeds whose counts float32 happened to hold).
    # The fifth's sizes are odd and at least 30001 (two bytes per element): its count is above 5.4e9 > 2^32
    # on every seed, which a count kept in 32-bit integers (numpy int32 or uint32) wraps (round 12's 02
    # passed when every count was below 2^31).
    shapes = [(1, rng.randint(2, 9000), rng.randint(2, 9000)), (rng.randint(2, 4096), rng.randint(2, 4096), 1),
              tuple(rng.randrange(2501, 9001, 2) for _ in range(3)), (97, 1, 1025),
              tuple(rng.randrange(30001, 60001, 2) for _ in range(3))]
    for (m, n, k), b in zip(shapes, (2, 4, 1, 2, 2)):
        expected = float((m * k + k * n + m * n) * b)

        def run(runner, m=m, n=n, k=k, b=b, expected=expected):
            got = runner.fn(m, n, k, b)
            return [_scalar_result(f"m={m}, n={n}, k={k}, {b} bytes per element", "bytes_moved", got,
                                   expected, 0.0)]

        cases.append(Case(f"m={m}, n={n}, k={k}, {b} bytes per element", run))
    return cases


def _scalar_result(case: str, output: str, got, expected: float, rtol: float) -> CaseResult:
    """One scalar answer against ``expected``, compared as the float64 ``float(got)``. A real number of the
    standard library's types (``int``, ``float``, ``fractions.Fraction``, ``decimal.Decimal``: round 12's h03
    answered exactly in fractions) or numpy's is accepted, never a ``bool``. Only those exact types, not a
    subclass: ``float()`` of a class of the reader's would run the reader's code here, after the call."""
    tol = Tolerance(0.0, rtol, "exact arithmetic up to double rounding" if rtol else "an exact count")
    kind = type(got)
    if not (kind in (int, float, fractions.Fraction, decimal.Decimal)
            or (kind.__module__ == "numpy" and isinstance(got, numbers.Real) and kind.__name__ != "bool")):
        return CaseResult(case, output, False, f"expected a number, got {type(got).__name__}", tolerance=tol)
    try:
        value = float(got)
    except (OverflowError, ValueError, TypeError) as e:
        return CaseResult(case, output, False, f"float() of your {type(got).__name__} failed: {e}", tolerance=tol)
    err = abs(value - expected)
    ok = err <= rtol * abs(expected) and math.isfinite(value)
    return CaseResult(case, output, ok, "" if ok else _scalar_hint(value, expected), () if not ok else None,
                      value, expected, err, 0 if ok else 1, 1, tol)


def _scalar_hint(value: float, expected: float) -> str:
    if expected == int(expected) and abs(expected) >= 2**31 and value == int(value) and value != expected \
            and (value - expected) % 2**32 == 0:
        return (f"yours {value:.0f}, expected {expected:.0f}: off by a multiple of 2^32. A count kept in 32-bit "
                "integers (numpy int32 or uint32) wraps past 2^31, so count with Python integers")
    if expected and value:
        if expected == int(expected) and abs(value - expected) <= 1e-6 * abs(expected):
            hint = f"yours {value:.0f}, expected {expected:.0f}: off by {value - expected:.0f}"
            if abs(expected) > 2**24:
                hint += (". A count must be exact; float32 (numpy or torch float32 values) holds integers only up "
                         "to 2^24 and rounds larger ones, so count with Python integers")
            return hint
        return f"yours / expected = {value / expected:.6g}"
    return ""


# ---- L2: vector add and the fused chain ---------------------------------------------------------------


def _l2_sizes(gen, device, long_lo: int = 10_000, long_hi: int = 100_000) -> list[int]:
    """Lengths across every block boundary and beyond any block a kernel could hard-code: one element, a
    length below the smallest block, one that is a power of two, one just past it, one between blocks, and
    a long one (10^4 to 10^5 elements on a CPU, millions on a GPU), all but the first drawn from the seed."""
    power = 1 << torch_randint(gen, 6, 12)
    sizes = [1, torch_randint(gen, 2, 64), power, power + 1, torch_randint(gen, 1025, 9000),
             torch_randint(gen, long_lo, long_hi)]
    if device != "cpu":
        sizes += [(1 << 20) + torch_randint(gen, 1, 999), torch_randint(gen, 1 << 22, 1 << 24)]
    return sizes


def _l2_add_cases(gen, device) -> list[Case]:
    sizes = _l2_sizes(gen, device)
    cases = []
    for dtype in _dtypes(device):
        for i, n in enumerate(sizes):
            if dtype != _dtypes(device)[0] and n > 20_000 and device == "cpu":
                continue  # one long row per dtype is enough on the interpreter
            cases.append(Case(f"n={n} {dtype_name(dtype)}", _add_case(gen, device, dtype, n)))
    n = torch_randint(gen, 97, 3000)
    label = f"n={n} fp32, called twice on the same x, y and out with new values in x and y"
    cases.append(Case(label, _add_case(gen, device, _torch().float32, n, label, repeat=True)))
    if device == "cpu":  # more blocks of 1024 than a persistent grid has programs; size from the seed, no draw
        n = H200_MULTIPROCESSORS * 1024 + 3000 + gen.initial_seed() % 997
        label = f"n={n} fp32, more blocks of 1024 than the GPU has multiprocessors ({H200_MULTIPROCESSORS})"
        cases.append(Case(label, _more_work_than_programs(_add_case(gen, device, _torch().float32, n, label),
                                                          "blocks")))
    if device != "cpu":  # the programs that write out, counted by the interpreter on the CPU
        n = torch_randint(gen, 10_000, 20_000)
        label = f"n={n} fp32, your kernel run by Triton's interpreter on the CPU: the programs that write out"
        cases.append(Case(label, _add_case(gen, "cpu", _torch().float32, n, label), interpret=True, device="cpu"))
    # x, y and out each sit 2^31 elements into a buffer of about 3 x 2^31 fp16 (12 GiB), with a copy of its two
    # guard bands (8 GiB) and the watch's shadow of the tensor (4 GiB): about 72 GiB, 77 GiB at the peak, where
    # an H100 of 80 GB ran out of memory (2026-12-05). The case runs where 96 GiB are free (an H200)
    if device != "cpu" and _free_gpu_bytes() >= HUGE_CASE_FREE_BYTES:
        n = 2**31 + torch_randint(gen, 1, 1000)
        label = f"n={n} fp16 (past 2^31 elements: 32-bit offsets wrap around)"
        cases.append(Case(label, _add_huge_case(gen, device, n, label)))
    return cases


#: Free GPU memory the L2.add case past 2^31 elements needs (see :func:`_l2_add_cases`).
HUGE_CASE_FREE_BYTES = 96 * 2**30


def _more_work_than_programs(run, items: str, also: str = ""):
    """``run``, with a hint added to the first failure: the case has more ``items`` than a persistent grid has
    programs (one per multiprocessor, the H200's 132), so each of its programs loops more than once, and a loop
    whose body takes its item from the program id instead of the loop's variable redoes its first item.
    ``also``: what else the case exercises, said first."""

    def checked(runner):
        results = run(runner)
        for i, result in enumerate(results):
            if not result.passed:
                results[i] = dataclasses.replace(result, message=(
                    f"{result.message} ({also}this case has more {items} than the {H200_MULTIPROCESSORS} "
                    f"programs of a grid of one program per multiprocessor: if your programs loop over the "
                    f"{items}, check that each pass of the loop works on the item of the loop's variable, not on "
                    "the one of the program id)"))
                break
        return results

    return checked


def _free_gpu_bytes() -> int:
    """Free GPU memory once what earlier grades left behind is let go: their buffers wait for the garbage
    collector (reference cycles) and then in torch's cache (on an H200, a second L2.add grade in one process
    found less than the huge case's 96 GiB free after the first, 2026-12-06)."""
    try:
        import gc

        import torch

        gc.collect()
        torch.cuda.empty_cache()
        return int(torch.cuda.mem_get_info()[0])
    except Exception:  # pragma: no cover - no CUDA
        return 0


def _add_case(gen, device, dtype, n, label=None, repeat=False):
    label = label or f"n={n} {dtype_name(dtype)}"

    def run(runner):
        import torch

        x = runner.input(_randn(gen, (n,), dtype, device))
        y = runner.input(_randn(gen, (n,), dtype, device))
        out = runner.output_buffer((n,), dtype)  # NaN, with guard bands before and after
        results = []
        for call in range(2 if repeat else 1):
            what = "out" if call == 0 else "out (second call: same tensors, new values)"
            if call:  # the same tensor objects, new contents: a result kept per input object is stale
                x.copy_(_randn(gen, (n,), dtype, device))
                y.copy_(_randn(gen, (n,), dtype, device))
            got, watch = runner.call(x, y, out, names=("x", "y", "out"))
            if not isinstance(got, torch.Tensor) or got.data_ptr() != out.data_ptr():
                results.append(CaseResult(label, "out", False, "the function must write into `out` and return "
                                          "it; it returned something else"))
            expected = _float64_cpu(x) + _float64_cpu(y)
            results.append(compare(label, what, out, expected, elementwise_tolerance(dtype, 1)))
            results += runner.written_check("out", out)
            del expected  # the reference never exists while the reader's function runs
            if not all(r.passed for r in results):
                break
            out.fill_(float("nan"))
        if n > 4096 and all(r.passed for r in results):  # said once, when nothing else is wrong
            results += (_blocks_off_axis_0(runner, label, n) or _offsets_check(runner, label)
                        or _grid_check(runner, label, n, out))
        return results

    return run


#: The widest block one program of an elementwise kernel (L2) loads at once: what it holds in registers. The
#: lab sweeps 128 to 4096; a block computed from n (the whole vector in one program) is far wider.
LARGEST_BLOCK_1D = 8192

#: The H200's streaming multiprocessors: the parallelism a grid is judged against where no GPU is present. A
#: constant of the grader (in its import-time baseline, so a cell cannot rebind it), not read from
#: :mod:`gpuperf.hardware`, whose records a cell can rewrite; tests check that the two agree.
H200_MULTIPROCESSORS = 132


def _h200_multiprocessors() -> int:
    return H200_MULTIPROCESSORS


def _multiprocessors_words(device) -> str:
    sms = _multiprocessors(device)
    return f"{sms} on an H200" if device == "cpu" else f"{sms} on this GPU"


def _multiprocessors(device) -> int:
    """The GPU's streaming multiprocessors (the H200's 132 on a CPU)."""
    if device == "cpu":
        return _h200_multiprocessors()
    import torch

    return int(torch.cuda.get_device_properties(device).multi_processor_count)


def _tensor_bytes(tensor) -> tuple[int, int]:
    """The bytes ``[start, end)`` that ``tensor``'s elements span."""
    start = tensor.data_ptr()
    last = sum((s - 1) * st for s, st in zip(tensor.shape, tensor.stride())) if tensor.numel() else -1
    return start, start + (last + 1) * tensor.element_size()


def _element_addresses(tensor):
    """A function from byte addresses (a numpy array inside ``tensor``'s span) to a mask of those that are
    elements of ``tensor`` (a view skips the gaps between its rows), or None where its layout is not a plain
    1-D or 2-D one, nor one of nested axes (then the whole span counts)."""
    import numpy as np

    start, es = tensor.data_ptr(), tensor.element_size()
    shape, strides = tuple(tensor.shape), tuple(tensor.stride())
    if tensor.dim() == 2 and shape[0] > 1 and shape[1] > 1 and 1 in strides and min(strides) > 0:
        inner = 1 if strides[1] == 1 else 0  # the axis whose elements are adjacent
        outer, count = strides[1 - inner], shape[inner]

        def keep(addresses):
            offsets = (addresses - np.uint64(start)).astype(np.int64)
            return (offsets % es == 0) & ((offsets // es) % outer < count)

        return keep
    if tensor.dim() == 1 and strides[0] > 1:
        return lambda addresses: ((addresses - np.uint64(start)).astype(np.int64) % (es * strides[0])) == 0
    # any other layout whose axes nest (each axis's stride at least the extent of the axes inside it): an
    # attention output laid out with padded rows or interleaved heads, 3-D or 4-D (round 19's 03: writes into
    # a padded row's padding decoded as the row's). An offset is an element where, split over the axes from
    # the widest stride down, each index is below the axis's size and nothing is left over.
    axes = sorted(((st, n) for n, st in zip(shape, strides) if n > 1), reverse=True)
    if tensor.dim() < 3 or not axes or any(st <= 0 for st, _ in axes) or \
            any(outer < st * n for (outer, _), (st, n) in zip(axes, axes[1:])):
        return None

    def keep_nested(addresses):
        offsets = (addresses - np.uint64(start)).astype(np.int64)
        ok = offsets % es == 0
        rest = offsets // es
        for st, n in axes:
            index, rest = np.divmod(rest, st)
            ok &= (index >= 0) & (index < n)
        return ok & (rest == 0)

    return keep_nested


def _out_writes(trace, out) -> list:
    """``(launch, addresses, programs)`` per launch that wrote the values ``out`` holds, in launch order: each
    launch's writes (stores and atomics, :func:`_value_writes`) into ``out``'s elements, or, where torch copied
    into ``out`` (``buf.clone()``, ``.contiguous()``, ``.to()``, ``copy_``), its writes into the memory the
    copies read from, at the address of the element of ``out`` that holds them: the programs that computed a
    returned copy are the programs that wrote what it copies."""
    import numpy as np

    start, end = _tensor_bytes(out)
    keep = _element_addresses(out)
    copies = list(getattr(trace, "copies_at", ()))
    from gpuperf.grading.algorithm import _layout_addresses, _layout_bytes

    def overlaps(layout):
        low, high = _layout_bytes(layout)
        return low < end and start < high

    def moves(launch) -> bool:  # a kernel of the reader's own that copies what an earlier launch stored
        # (all it stores, or some lanes beside other stores: round 27's 38 and 45 store their program ids to a
        # buffer of their own beside the copy, which made them no copy kernel)
        return bool(getattr(launch, "sources", None) and launch.copies)

    if not any(source is not None and overlaps(target) for _, source, target in copies) and \
            not any(moves(launch) for launch in trace.launches):
        found = []
        for launch in trace.launches:
            writes = _value_writes(launch)
            if not writes:
                continue
            addr, prog = writes
            lo, hi = np.searchsorted(addr, np.uint64(start)), np.searchsorted(addr, np.uint64(end))
            addr, prog = addr[lo:hi], prog[lo:hi]
            if keep is not None and addr.size:
                chosen = keep(addr)
                addr, prog = addr[chosen], prog[chosen]
            if addr.size:
                found.append((launch, addr, prog))
        return found
    at = np.zeros(1, dtype=np.int64)
    for size, stride in zip(out.shape, out.stride()):
        at = (at[:, None] + np.arange(size, dtype=np.int64)[None, :] * stride).reshape(-1)
    element = np.unique(out.data_ptr() + at * out.element_size())  # out's elements
    here = element.copy()  # where each element's value was, going back in time
    found = {}
    pending = len(copies) - 1
    for index in range(len(trace.launches) - 1, -1, -1):
        while pending >= 0 and copies[pending][0] > index:  # a copy made after this launch: read its source
            _, source, target = copies[pending]
            pending -= 1
            if source is None:  # new memory: what was there before is not what the output holds
                gone = (here >= target[0]) & (here < target[0] + target[1])
                if gone.any():
                    here = np.where(gone, -1, here)
                continue
            t_addr = _layout_addresses(target)
            try:
                s_addr = np.broadcast_to(_layout_addresses(source), t_addr.shape).reshape(-1)
            except ValueError:  # pragma: no cover - broadcast otherwise: leave it
                continue
            t_addr = t_addr.reshape(-1)
            order = np.argsort(t_addr, kind="stable")
            t_sorted, s_sorted = t_addr[order], s_addr[order]
            pos = np.searchsorted(t_sorted, here, side="right") - 1
            at = t_sorted[np.clip(pos, 0, None)]
            if source[1] == target[1]:
                # a copy of bits: an element of out inside a copied element, at its place in the source's (a
                # copy through a view of wider elements, buf.view(torch.complex128).clone(): round 19's 02)
                inside = here - at
                hit = (pos >= 0) & (here >= 0) & (inside >= 0) & (inside < target[1])
                here = here.copy()
                here[hit] = s_sorted[pos[hit]] + inside[hit]
            else:  # a conversion: element by element
                hit = (pos >= 0) & (at == here)
                here = here.copy()
                here[hit] = s_sorted[pos[hit]]
        if moves(trace.launches[index]):
            # a kernel that copies (or casts) what earlier launches stored, as split-K's workspace cast into C:
            # the programs that computed the values are the earlier launches' (a copy spread over many programs
            # after one program did the work runs the work on one multiprocessor: the lead's 92). Lanes it
            # copied from memory an earlier launch wrote go back to that launch; its other writes are its own.
            dest = np.concatenate([d.reshape(-1) for d, _ in trace.launches[index].copies]).astype(np.int64)
            src = np.concatenate([o.reshape(-1) for _, o in trace.launches[index].copies]).astype(np.int64)
            earlier = [_value_writes(launch) for launch in trace.launches[:index]]
            earlier = [w[0].astype(np.int64) for w in earlier if w]
            written = np.unique(np.concatenate(earlier)) if earlier else np.zeros(0, dtype=np.int64)
            keep_lane = np.isin(src, written)
            dest, src = dest[keep_lane], src[keep_lane]
            if dest.size:
                order = np.argsort(dest, kind="stable")
                d_sorted, s_sorted = dest[order], src[order]
                pos = np.clip(np.searchsorted(d_sorted, here, side="left"), 0, d_sorted.size - 1)
                hit = (here >= 0) & (d_sorted[pos] == here)
                here = here.copy()
                here[hit] = s_sorted[pos[hit]]
            if getattr(trace.launches[index], "copy_only", False):
                continue
        writes = _value_writes(trace.launches[index])
        if not writes:
            continue
        addr, prog = writes
        order = np.argsort(here, kind="stable")
        h_sorted, e_sorted = here[order], element[order]
        a = addr.astype(np.int64)
        lo, hi = np.searchsorted(h_sorted, a, side="left"), np.searchsorted(h_sorted, a, side="right")
        counts = hi - lo
        if not counts.any():
            continue
        pick = np.repeat(lo, counts) + (np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts,
                                                                                    counts))
        o_addr, o_prog = e_sorted[pick].astype(np.uint64), np.repeat(prog, counts)
        order = np.lexsort((o_prog, o_addr))
        found[index] = (o_addr[order], o_prog[order])
    return [(trace.launches[i],) + found[i] for i in sorted(found)]


def _value_writes(launch) -> tuple:
    """The writes of ``launch`` that set a value (:attr:`gpuperf.grading.algorithm.Launch.value_writes`): an
    atomic add of 0 keeps the value whoever wrote it computed."""
    writes = getattr(launch, "value_writes", None)
    return launch.writes if writes is None else writes


def _surviving_writes(picked: list) -> list:
    """``picked``: ``(addresses, programs)`` per launch, in launch order (the writes of one output). For each,
    a boolean mask of the writes whose values the output keeps: no later launch wrote the address (writes of
    the last launch to write an address all count, atomics included)."""
    import numpy as np

    if not picked:
        return []
    addr = np.concatenate([a for a, _ in picked])
    order = np.concatenate([np.full(a.size, i, dtype=np.int64) for i, (a, _) in enumerate(picked)])
    if not addr.size:
        return [np.zeros(0, dtype=bool) for _ in picked]
    unique, inverse = np.unique(addr, return_inverse=True)
    last = np.full(unique.size, -1, dtype=np.int64)
    np.maximum.at(last, inverse, order)
    kept = order == last[inverse]
    edges = np.cumsum([0] + [a.size for a, _ in picked])
    return [kept[edges[i]:edges[i + 1]] for i in range(len(picked))]


def _spread_check(runner, label, out, what: str, unit: int, unit_words: str, noun: str, fix: str,
                  run_cap: int = 0) -> list[CaseResult]:
    """Under the interpreter: the work of ``out`` spread over programs, launch by launch, counted from what each
    program wrote (stores and atomics), not from the grid. One program handles at most ``unit`` elements of
    ``out`` (``unit_words``: a block, a row, a tile); in every launch that writes ``out``, the programs that
    write it number at least min(units, SMs), units being the launch's elements written over ``unit``, and no
    program writes more than twice its share, ceil(units / that) units. A decoy launch on the full grid beside
    one program that does the work, or a grid whose program 0 does every block while the others return, runs
    on one multiprocessor; a persistent grid (a program per SM looping over the blocks), split-K with atomics,
    2-D and grouped orders, and a block handled in pieces (coarsening, an epilogue in halves) pass. With
    ``run_cap`` (a 1-D output), the unit is instead the longest stretch of ``out`` one program writes, at most
    ``run_cap`` elements (``unit_words`` formats it as ``{unit}``): a program that owns two adjacent blocks
    owns one block twice as wide, while four programs striding over the vector own blocks of one load each."""
    import numpy as np
    import torch

    trace = runner.trace
    if trace is None or unit <= 0 or not isinstance(out, torch.Tensor) or out.numel() == 0:
        return []
    sms = _multiprocessors(runner.device)
    step = out.stride(0) * out.element_size() if run_cap and out.dim() == 1 else 0
    # the programs that wrote the values out holds (through torch's copies of what they wrote: a returned
    # buf.clone() was computed by the programs that wrote buf; an atomic add of 0 writes nothing)
    # the launches of one kernel added up over the call: a Python loop that launches the kernel once per row or
    # tile, each time on a grid of one program, runs them one after another (each launch, alone, looks right)
    # (one wide launch beside the loop, its programs writing placeholders that later launches overwrite, does not
    # hide it: the launches with few programs are counted, whatever the widest)
    writers, picked = [], []
    for launch, addr, prog in _out_writes(trace, out):
        programs, counts = np.unique(prog, return_counts=True)
        distinct = 1 + int(np.count_nonzero(addr[1:] != addr[:-1]))
        run = 0
        if step:
            order = np.lexsort((addr, prog))  # each program's addresses, in order
            a, p = addr[order].astype(np.int64), prog[order]
            breaks = np.flatnonzero((np.diff(a) != step) | (np.diff(p) != 0)) + 1
            edges = np.concatenate(([0], breaks, [a.size]))
            run = int(np.diff(edges).max())
        writers.append((launch, dict(zip(programs.tolist(), counts.tolist())), distinct, run))
        picked.append((addr, prog))
    kept = _surviving_writes(picked)
    loops: dict = {}
    for (launch, counts, written, run), (addr, prog), survives in zip(writers, picked, kept):
        entry = loops.setdefault(launch.kernel, [0, [], [], 0])
        entry[0] += 1
        entry[1].append((len(counts), int(np.unique(prog[survives]).size), written))
        entry[2].append(addr)
        entry[3] = max(entry[3], run)
    for kernel, (launches, each_launch, addresses, run) in loops.items():
        written = int(np.unique(np.concatenate(addresses)).size)  # elements written, each once
        each = max(1, min(run, run_cap)) if step else unit
        units = -(-written // each)
        # few programs, counting every write, or the writes the output keeps (placeholders overwritten later
        # are no work); a launch whose writes all are overwritten (split-K's earlier launches) is not one
        need = min(units, sms)
        narrow = [(programs if 2 * programs < need else kept, wrote) for programs, kept, wrote in each_launch
                  if 2 * programs < need or 0 < 2 * kept < need]
        if launches >= 3 and len(narrow) >= 3 and sum(wrote for _, wrote in narrow) >= 3 * each:
            most = max(programs for programs, _ in narrow)
            which, wide = "each launch", ""
            if len(narrow) < launches:
                which = f"{len(narrow)} of those launches"
            if len(narrow) < launches or any(kept < programs for programs, kept, _ in each_launch):
                wide = (" (a wide launch whose programs write values that later launches overwrite does not "
                        "change that: what counts is the programs that compute the values kept)")
            return [CaseResult(label, "-", False,
                               f"your function launched your kernel {kernel} {launches} times in one call, {which} "
                               f"with {most} program(s) or fewer writing {what} ({units} {noun} in all): a Python "
                               f"loop of small launches runs the {noun} one after another, as one program looping "
                               f"over them would{wide}. Launch the kernel once, on a grid whose programs cover the "
                               f"{noun}. {fix}")]
    for launch, counts, written, run in writers:
        if step:
            unit = max(1, min(run, run_cap))
        units = -(-written // unit)
        need = min(units, sms)
        programs = len(counts)
        program, most = max(counts.items(), key=lambda item: (item[1], -item[0]))
        share = -(-units // need) * unit
        if programs >= need and most <= 2 * share:
            continue
        others = max((len(c) for other, c, _, _ in writers if other is not launch), default=0)
        words = unit_words.format(unit=unit)
        if step and run > run_cap:
            words = f"one block ({run_cap} elements or fewer: the largest block a program holds)"
        decoy = (f" (your other launch that writes {what} with {others} programs does not count: the grid is "
                 "for the programs that compute the values)" if others >= need else "")
        why = (f"A GPU runs the programs of a launch at the same time, one per multiprocessor, so a program that "
               f"does {noun} one after another uses one of them. {fix}")
        if need == sms:  # more units than multiprocessors: a persistent grid is the other honest answer
            why += (f" (or, looping over {noun}, a program per multiprocessor, "
                    f"{_multiprocessors_words(runner.device)}, each taking an even share)")
        if programs < need:
            return [CaseResult(label, "-", False,
                               f"{programs} program(s) of your kernel {launch.kernel} wrote the {written} "
                               f"elements of {what} in one launch ({most} by program {program}), but one "
                               f"program handles at most {words}: {what} needs {need} or more programs "
                               f"here. {why}" + decoy)]
        return [CaseResult(label, "-", False,
                           f"program {program} of your kernel {launch.kernel} wrote {most} of the {written} "
                           f"elements of {what} in one launch, more than twice its share ({share}: {what} spread "
                           f"over {need} programs, each handling at most {words}), and {programs - 1} other "
                           f"program(s) wrote the rest. A launch lasts as long as its slowest program. {why}"
                           + decoy)]
    return []


def _blocks_off_axis_0(runner, label, n) -> list[CaseResult]:
    """A 1-D exercise's blocks belong on the grid's first axis: refused, a launch with more than one program
    on axis 1 or 2 (round 12's 05 ran a grid of (1, cdiv(n, 1024))). CUDA allows at most 65,535 programs
    there (2^31 - 1 on axis 0), so such a kernel cannot be launched for more than 65,535 blocks, 67M elements
    in blocks of 1024: an ordinary vector on a GPU. (The axis-0 rule of L3's rows, :func:`_rows_off_axis_0`,
    with the blocks of one vector: a 1-D problem has nothing else to put on the other axes.)"""
    watch = runner.watch
    for _, grid in (watch.counters.grids if watch is not None else ()):
        if grid[1] * grid[2] > 1:
            return [CaseResult(label, "-", False,
                               f"your kernel ran on a grid of {list(grid)} programs for {n} elements, the blocks "
                               "spread over axes 1 and 2: put the blocks on the grid's first axis (a grid of "
                               "(cdiv(n, BLOCK_SIZE),) and tl.program_id(0)): CUDA allows at most 65,535 "
                               "programs on axes 1 and 2 (2^31 - 1 on axis 0), so that launch fails for vectors "
                               "of more than 65,535 blocks (67M elements in blocks of 1024)")]
    return []


def _grid_check(runner, label, n, out=None) -> list[CaseResult]:
    """One program per block of the vector, all in one launch (a grid), not one program walking the whole
    vector in a loop or holding it in one block: under the interpreter from the widest load and the programs
    of each launch, on a GPU from the grids of the launches. Programs that loop over the blocks (a grid-stride
    loop) pass when there is at least one per multiprocessor."""
    trace = runner.trace
    sms = _multiprocessors(runner.device)
    if trace is None:  # a compiled launch: its grid, recorded by the watch (blocks unknown: the widest allowed)
        programs = runner.watch.counters.most_programs if runner.watch is not None else 0
        need = min(-(-n // LARGEST_BLOCK_1D), sms)
        if 0 < programs < need:
            return [CaseResult(label, "-", False,
                               f"your kernel ran {programs} program(s) for {n} elements: a GPU runs programs at the "
                               f"same time, so the grid has a program for every block of the vector (blocks of at "
                               f"most {LARGEST_BLOCK_1D} elements, {need} or more programs here); one program "
                               "looping over the vector uses one of the GPU's multiprocessors")]
        return []
    block = trace.widest_load()
    programs = trace.most_programs()
    if block > LARGEST_BLOCK_1D:
        return [CaseResult(label, "-", False,
                           f"one program of your kernel loaded {block} elements at once, for {n} elements in all: "
                           "a block is what one program holds in its registers, at most "
                           f"{LARGEST_BLOCK_1D} elements (128 to 4096 is usual). Keep BLOCK_SIZE fixed, not "
                           "computed from n, and launch ceil(n / BLOCK_SIZE) programs, so that the GPU's "
                           "multiprocessors share the vector")]
    blocks = -(-n // block) if block else 0
    if block and out is not None:  # a program owns the stretch it writes (one load or several), up to 8192
        return _spread_check(runner, label, out, "out", block,
                             "one block ({unit} elements: the longest stretch of out that one program of yours "
                             "writes)", "blocks", "Give every block of the vector its own program, a grid of "
                             "cdiv(n, BLOCK_SIZE) programs", run_cap=LARGEST_BLOCK_1D)
    if block and programs < min(blocks, sms):
        return [CaseResult(label, "-", False,
                           f"your kernel ran {programs} program(s) for {n} elements in blocks of {block}: a GPU "
                           f"runs programs at the same time, one per block ({blocks} here), so the grid "
                           "must have a program for every block; one program looping over the vector uses one "
                           "of the GPU's multiprocessors (programs that loop over the blocks need at least one "
                           f"per multiprocessor, {_multiprocessors_words(runner.device)})")]
    return []


def _add_huge_case(gen, device, n, label):
    """Past 2^31 elements, on a GPU with the memory (fp16: 3 tensors of 4 GB). Each tensor sits 2^31
    elements into its buffer, so a kernel whose offsets wrap around in 32 bits reads and writes the grader's
    padding (never memory that is not the grader's) and leaves the end of ``out`` unwritten."""

    def run(runner):
        import torch

        from gpuperf.grading.watch import banded_empty

        dtype = torch.float16
        pad = 2**31 + 4096
        g = torch.Generator(device=device).manual_seed(int(torch_randint(gen, 0, 2**31 - 1)))
        x, _ = banded_empty((n,), (1,), dtype, device, pad)
        y, _ = banded_empty((n,), (1,), dtype, device, pad)
        x.copy_(torch.randn(n, generator=g, device=device, dtype=dtype))
        y.copy_(torch.randn(n, generator=g, device=device, dtype=dtype))
        out, alloc = banded_empty((n,), (1,), dtype, device, pad)
        runner._given = getattr(runner, "_given", []) + [(out, alloc)]
        wrap = ("elements past 2^31 are wrong: your kernel's offsets are computed in 32 bits and wrap around "
                "there (convert the program id to a 64-bit integer before multiplying it by the block size)")
        try:
            got, _ = runner.call(x, y, out, names=("x", "y", "out"))
        except CallFailed as failed:
            return [CaseResult(label, r.output, False, r.message + "; " + wrap) for r in failed.results]
        bad = None
        tol = elementwise_tolerance(dtype, 1)
        chunk = 1 << 26
        for start in range(0, n, chunk):
            want = x[start:start + chunk].float() + y[start:start + chunk].float()
            mine = out[start:start + chunk].float()
            err = (mine - want).abs()
            wrong = ~(err <= tol.atol + tol.rtol * want.abs())
            if bool(wrong.any()):
                i = int(wrong.nonzero()[0])
                bad = (start + i, float(mine[i]), float(want[i]), int(wrong.sum()))
                break
        del x, y, out, alloc
        torch.cuda.empty_cache()
        if bad is None:
            return [CaseResult(label, "out", True, tolerance=tol)]
        index, yours, expected, count = bad
        message = f"{count}+ elements wrong from index {index} on"
        if index >= 2**31 - 4096:
            message += "; " + wrap
        return [CaseResult(label, "out", False, message, (index,), yours, expected, None, count, n, tol)]

    return run


def _offsets_check(runner, label) -> list[CaseResult]:
    w, trace = runner.watch, runner.trace
    if w is None:
        return []
    narrow = bool(w.counters.narrow_kernels)  # from the TTIR: on every machine
    if runner.device == "cpu" and w.counters.stores:
        narrow = narrow or w.counters.narrow_offsets or (trace is not None and trace.narrow_pid_offsets())
    if narrow and runner.device == "cpu" and w.counters.narrow_descriptors and not w.counters.narrow_kernels:
        return [CaseResult(label, "-", False,
                           "your kernel stores through a tensor descriptor that spans the whole vector: a "
                           "descriptor's block coordinates are 32-bit integers, so past 2^31 elements (8.6 GB "
                           "of fp32) they wrap around. Start each program's descriptor at its own block, its base "
                           "pointer advanced by the block's start computed in 64 bits (the program id made 64-bit "
                           "before it is multiplied by the block size) and its shape the elements left from "
                           "there, and load and store it at coordinate 0")]
    if not narrow and w.counters.narrow_masks:
        return [CaseResult(label, "-", False,
                           f"your kernel {w.counters.narrow_masks[0]}'s masks are computed with 32-bit positions: "
                           "a mask compares a 32-bit "
                           "product of the program id and the block size (as `lanes < n - pid * BLOCK`), which "
                           "past 2^31 elements (8.6 GB of fp32) wraps around, so the last block is not masked and "
                           "reads and writes past the end of the vectors. Compute the mask from the 64-bit "
                           "offsets of the addresses (`offsets < n`), or convert the program id to a 64-bit "
                           "integer before multiplying it by the block size")]
    if narrow:
        return [CaseResult(label, "-", False,
                           "your kernel's addresses are computed with 32-bit offsets: past 2^31 elements "
                           "(8.6 GB of fp32) they wrap around; convert the program id to a 64-bit integer "
                           "before multiplying it by the block size (widening the product afterwards is too "
                           "late: it has already wrapped). A loop's variable has the type of the loop's bounds: "
                           "a loop over blocks whose start or step is a 64-bit value (the program id made 64-bit "
                           "before it is multiplied) hands its body 64-bit starts; with 32-bit bounds, widen the "
                           "lanes you add to the start")]
    return []


def _l2_chain_cases(gen, device) -> list[Case]:
    cases = []
    sizes = _l2_sizes(gen, device)
    for dtype in _dtypes(device):
        for n in sizes:
            for k_ops in (1, 2, 5, 8):
                if n > 2000 and k_ops not in (5,):
                    continue
                if n > 20_000 and device == "cpu" and dtype != _dtypes(device)[0]:
                    continue
                scale = 0.5 + float(_torch().rand(1, generator=gen))
                shift = float(_torch().randn(1, generator=gen)) * 0.25
                label = f"n={n} {dtype_name(dtype)} k_ops={k_ops} scale={scale:.4f} shift={shift:.4f}"
                cases.append(Case(label, _chain_case(gen, device, dtype, n, k_ops, scale, shift, label)))
    n = torch_randint(gen, 97, 3000)
    label = f"n={n} fp32 k_ops=3 scale=1.5 shift=0.25, called twice on the same x with new values in it"
    cases.append(Case(label, _chain_case(gen, device, _torch().float32, n, 3, 1.5, 0.25, label, repeat=True)))
    if device != "cpu":  # the fusion and the programs that write the result, counted by the interpreter
        n = torch_randint(gen, 10_000, 20_000)
        label = (f"n={n} fp32 k_ops=5 scale=1.5 shift=0.25, your kernel run by Triton's interpreter on the CPU: "
                 "the elements it loads and stores, and the programs that write the result")
        cases.append(Case(label, _chain_case(gen, "cpu", _torch().float32, n, 5, 1.5, 0.25, label),
                          interpret=True, device="cpu"))
    # more operations than the lab's sweep (1 to 8), drawn (round 22's 04: a chain cut at 8 operations passed);
    # drawn last so that the cases above keep their draws. A scale near 1 keeps 64 operations inside fp32's range
    k_ops = torch_randint(gen, 9, 64)
    n = torch_randint(gen, 97, 3000)
    scale = 0.9 + 0.2 * float(_torch().rand(1, generator=gen))
    shift = float(_torch().randn(1, generator=gen)) * 0.25
    label = f"n={n} fp32 k_ops={k_ops} scale={scale:.4f} shift={shift:.4f} (more operations than the lab sweeps)"
    cases.append(Case(label, _chain_case(gen, device, _torch().float32, n, k_ops, scale, shift, label)))
    return cases


def _fused_check(runner, label, n, k_ops) -> list[CaseResult]:
    """The chain fused: its kernels (under the interpreter) load and store about n elements in all, each
    element read once and written once, not once per operation through a tensor in memory (round 8's a19: a
    launch per operation passed on its values alone)."""
    trace = runner.trace
    if trace is None:
        return []
    loaded, stored = trace.total("loaded"), trace.total("stored")
    if loaded <= n + n // 2 and stored <= n + n // 2:
        return []
    launches = len(trace.launches)
    return [CaseResult(label, "-", False,
                       f"your kernels loaded {loaded} elements and stored {stored} ({loaded / n:.2g} and "
                       f"{stored / n:.2g} times the {n} of x) in {launches} launch(es), for {k_ops} operations: "
                       "the chain is not fused. Fused, one kernel reads each element of x once, applies every "
                       "operation to the value held in registers and writes the result once; a kernel per "
                       "operation, with the values between operations kept in a tensor in memory, reads and "
                       "writes the whole tensor once per operation, the eager chain the exercise replaces. "
                       "Loop over the k_ops operations inside the kernel")]


def _chain_case(gen, device, dtype, n, k_ops, scale, shift, label, repeat=False):
    def run(runner):
        x = runner.input(_randn(gen, (n,), dtype, device, scale=2.0))
        results = []
        for call in range(2 if repeat else 1):
            if call:  # the same tensor object, new contents
                x.copy_(_randn(gen, (n,), dtype, device, scale=2.0))
            got, _ = runner.call(x, k_ops, scale, shift, names=("x",))
            y = x.double().cpu()
            largest = y.abs()  # the bound follows the largest intermediate value (y + shift may cancel)
            for j in range(k_ops):
                y = y * scale if j % 2 == 0 else y + shift
                largest = largest.maximum(y.abs())
            tol = elementwise_tolerance(dtype, 2 * k_ops + 1)
            tol = Tolerance(tol.atol, tol.rtol, tol.reason, scale_name="max |intermediate value|")
            what = "out" if call == 0 else "out (second call: same x, new values)"
            results += [compare(label, what, got, y, tol, scale=largest, dtype=dtype, device=device)]
            if results[-1].passed:
                results += runner.written_check("out", got)
            del y, largest  # the reference never exists while the reader's function runs
            if not all(r.passed for r in results):
                break
        if n > 2000 and all(r.passed for r in results):  # said once, when nothing else is wrong
            results += (_fused_check(runner, label, n, k_ops) or _blocks_off_axis_0(runner, label, n)
                        or _offsets_check(runner, label) or _grid_check(runner, label, n, got))
        return results

    return run


# ---- L3: softmax ------------------------------------------------------------------------------------


def _softmax_shapes(device: str, online: bool, gen) -> list[tuple[int, int]]:
    """Rows across every block boundary, drawn from the seed, and a few rows far longer than any block a
    kernel could hard-code (10^4 to 10^5 columns on a CPU, where one program holds a row; fewer on a GPU,
    where the fused kernel keeps a row in registers)."""
    power = 1 << torch_randint(gen, 5, 11)
    shapes = [(1, 1), (3, torch_randint(gen, 2, 100)), (4, power), (2, power + 1),
              (torch_randint(gen, 2, 7), torch_randint(gen, 1000, 4000))]
    if device == "cpu":
        shapes += [(2, torch_randint(gen, 10_000, 100_000))]
        if online:
            shapes += [(3, 4096 + torch_randint(gen, 1, 2000))]
    else:
        shapes += [(64, 1024), (33, 1025), (128, 4000 + torch_randint(gen, 1, 999)),
                   (4, torch_randint(gen, 10_000, 32_000))]
        if online:
            shapes += [(8, 65536 + 17), (3, 200_003)]
    return shapes


def _softmax_rows(gen, rows: int, cols: int, masked: int | None = None, early: int | None = None):
    """Rows only the safe softmax survives. Row r is centred at an offset c_r (from -800 to 800 across rows,
    so offsets differ between rows) with N(0, 3^2) noise; in every row but the second, one element sits 95
    above c_r in a late column that differs from row to row (the row's max arrives late, in the last block of
    an online kernel), and the first element 60 below: shifting by the mean, the first element or any value
    but the max leaves exp(95) or more (fp32 overflows above 88.7, fp64 above 709.8 for rows with
    |c_r| > 620). A few elements are -inf (exp(-inf) = 0 is allowed by the math). The second row has no
    spike: its probabilities spread, testing the sum. ``masked``: a block size; where the rows are long
    enough, the last row starts with one to two whole blocks of -inf and the one before it with two to three
    (a masked start: a running max is still -inf after them). ``early``: the online kernel's block; where the
    rows span three blocks or more and the first row has no masked start, that row also holds, in one of its
    first 16 columns, a value 150 above c_r, and its late value is raised to 250 above c_r: every block
    between them, and after the late one, has a max ~140 below the running max, so a "running" max that is
    only the current block's max goes down and its rescale exp(m - m_new) overflows fp32 (no draws added:
    the other rows and cases keep their values)."""
    import torch

    x = torch.randn(rows, cols, generator=gen) * 3.0
    offsets = (torch.rand(rows, generator=gen) * 2 - 1) * 800.0
    offsets[0] = 750.0 if cols > 1 else offsets[0]
    x += offsets.reshape(rows, 1)
    if cols >= 4:
        for r in range(rows):
            if r == 1:
                continue
            late = cols - 1 - int(torch.randint(0, max(1, cols // 4), (1,), generator=gen))
            late = max(1, min(cols - 1, late - r))
            x[r, late] = offsets[r] + 95.0
            x[r, 0] = offsets[r] - 60.0
        if cols >= 16:
            for r in range(0, rows, 2):
                x[r, 1 + int(torch.randint(0, cols - 2, (1,), generator=gen)) % (cols - 2)] = float("-inf")
    if masked and rows >= 2:  # the late maxima sit at or past cols - cols // 4 - rows - 1
        for r, blocks in ((rows - 1, 1), (rows - 2, 2)):
            if r >= 0 and _masked_start_fits(rows, cols, masked, blocks):
                x[r, :blocks * masked + int(torch.randint(0, masked, (1,), generator=gen))] = float("-inf")
    if early and cols >= 3 * early and not (masked and rows == 2 and _masked_start_fits(rows, cols, masked, 2)):
        late = int(x[0].argmax())
        x[0, 1 + late % 15] = offsets[0] + 150.0
        x[0, late] = offsets[0] + 250.0
    return x


def _falling_block_max(row, block: int) -> float:
    """The most that a block's max of ``row`` (float64, 1-D) falls below the largest value before the block."""
    import torch

    finite = torch.where(torch.isfinite(row), row, torch.full_like(row, -torch.inf))
    maxima = torch.stack([finite[i:i + block].max() for i in range(0, row.numel(), block)])
    before = torch.cummax(maxima, 0).values
    drops = before[:-1] - maxima[1:]
    drops = drops[torch.isfinite(drops)]
    return float(drops.max()) if drops.numel() else 0.0


def _falling_max_message(x, got, expected, block: int | None) -> str | None:
    """What to fix where ``got`` is wrong in a row whose block maxima fall far below an earlier block's (an
    online kernel's running max that went down overflows there), or None."""
    import torch

    if not block:
        return None
    x = x.detach().cpu().double()
    got = got.detach().cpu().double()
    wrong = ~torch.isfinite(got) | ((got - expected).abs() > 1e-3)
    for r in range(x.shape[0]):
        if not bool(wrong[r].any()):
            continue
        drop = _falling_block_max(x[r], block)
        if drop <= 120.0:  # the early rows fall ~140 or more; a late maximum ~87
            return None
        return (f"your y is wrong in row {r} of x, where a block (of {block}) has a max {drop:.0f} below the "
                "largest value before it: a \"running\" max that goes down (m_new = the current block's max) "
                "rescales the running sum by exp(m - m_new) > 1, which overflows past 88.7 in fp32. The running "
                "max must never decrease: m_new = max(m, the block's max)")
    return None


def _masked_start_fits(rows: int, cols: int, block: int, blocks: int = 1) -> bool:
    """Whether a row of ``cols`` can start with up to ``blocks + 1`` blocks of -inf before its late maximum."""
    return rows >= 2 and cols - cols // 4 - rows - 2 > (blocks + 1) * block


def _masked_start_message(x, got, expected, block: int | None, base: int) -> str | None:
    """What to fix where ``got`` is NaN in a row that starts with a whole block of -inf (softmax is defined
    there: ``expected`` is finite), or None."""
    import torch

    x = x.detach().cpu()
    starts = torch.isneginf(x[:, :base]).all(dim=1)
    bad = starts & torch.isnan(got.detach().cpu().double()).any(dim=1) & torch.isfinite(expected).all(dim=1)
    if not bool(bad.any()):
        return None
    r = int(bad.nonzero()[0])
    run = int(torch.isneginf(x[r]).long().cumprod(0).sum())
    where = (f"its first {run // base} whole block(s) of {base}" if block else f"the first {run} columns")
    fix = ("While every value seen is -inf, the running max m_new is still -inf, and exp(m - m_new) or "
           "exp(x - m_new) is exp(-inf - (-inf)) = NaN: guard the rescale, shifting by 0 while the running max "
           "is -inf (shift = tl.where(m_new == -float(\"inf\"), 0.0, m_new))" if block else
           "Take the max over the whole row (padding lanes -inf): it is finite when the row holds one finite "
           "value, and exp(x - max) is then never -inf - (-inf)")
    return (f"row {r} of x starts with {run} values of -inf ({where}: a masked start) and your y is NaN in "
            f"that row; softmax is well defined there (the -inf columns get 0, the rest sum to 1). {fix}.")


def _softmax_cases_for(online: bool):
    def cases(gen, device) -> list[Case]:
        out = []
        block = None
        if online:
            block = 128 if device == "cpu" else 1024
        for dtype in _dtypes(device):
            for rows, cols in _softmax_shapes(device, online, gen):
                if device == "cpu" and cols > 20_000 and dtype != _dtypes(device)[0]:
                    continue
                if online:  # a long row on the interpreter: a larger block (fewer steps), still many
                    block = 2048 if device == "cpu" and cols > 20_000 else 128 if device == "cpu" else 1024
                base = block or (128 if device == "cpu" else 1024)
                label = (f"x {rows}x{cols} {dtype_name(dtype)}, rows {cols + 13} apart, row offsets -800 to "
                         "800, late maxima" + (f", block={block}" if block else "")
                         + (f", a row starting with {base}+ values of -inf" if _masked_start_fits(rows, cols, base)
                            else ""))
                out.append(Case(label, _softmax_case(gen, device, dtype, rows, cols, label, block)))
        # a row whose terms are all near 1 (every element within 0.05 of the max): its sum passes fp16's largest
        # finite value, 65504, so exponentials or a row sum kept in fp16 overflow in any summation order
        cols = torch_randint(gen, 70_000, 90_000)
        if online:
            block = 2048 if device == "cpu" else 1024
        label = (f"x 2x{cols} fp16, rows {cols + 13} apart, nearly flat rows: the row sum passes fp16's largest "
                 "value 65504" + (f", block={block}" if block else ""))
        out.append(Case(label, _softmax_case(gen, device, _torch().float16, 2, cols, label, block, flat=True)))
        if online:
            block = 128 if device == "cpu" else 1024
        rows, cols = 3, torch_randint(gen, 200, 1500)
        label = (f"x {rows}x{cols} fp32, called twice on the same x with new values in it"
                 + (f", block={block}" if block else ""))
        out.append(Case(label, _softmax_case(gen, device, _torch().float32, rows, cols, label, block,
                                             repeat=True)))
        # a row that rises by 1600 (past fp64's range as well as fp32's): only a shift by the running max survives
        base = 128 if device == "cpu" else 1024
        block = base if online else None
        cols = torch_randint(gen, 3 * base + 1, 6 * base)
        label = (f"x 2x{cols} fp32, rows near -800 with one value near +800 in a middle block of {base} (row 0) "
                 "and in the last (row 1): a span of 1600" + (f", block={block}" if block else ""))
        out.append(Case(label, _softmax_case(gen, device, _torch().float32, 2, cols, label, block, span=base)))
        if not online and device != "cpu":  # the programs that write the rows, counted by the interpreter
            rows, cols = 5, torch_randint(gen, 300, 1000)
            label = (f"x {rows}x{cols} fp32, your kernel run by Triton's interpreter on the CPU: the programs "
                     "that write the rows")
            out.append(Case(label, _softmax_case(gen, "cpu", _torch().float32, rows, cols, label, None),
                            interpret=True, device="cpu"))
        if online and device != "cpu":  # the passes and the block, counted by the interpreter on the CPU
            cols = torch_randint(gen, 1500, 3000)
            label = (f"x 2x{cols} fp32, block=128, your kernel run by Triton's interpreter on the CPU: the "
                     "passes over each row and the block it walks them with")
            out.append(Case(label, _softmax_case(gen, "cpu", _torch().float32, 2, cols, label, 128),
                            interpret=True, device="cpu"))
        # more rows than a persistent grid has programs (one per multiprocessor), short ones; sizes from the
        # seed, no draw. Nearly flat rows: no probability near fp32's smallest normal, where an honest exp2
        # (its argument rounded, times log2 e) is a few ulps off, in any of the many rows
        rows, cols = H200_MULTIPROCESSORS + 5 + gen.initial_seed() % 20, 20 + gen.initial_seed() % 30
        block = base if online else None
        label = (f"x {rows}x{cols} fp32, rows {cols + 13} apart, nearly flat rows, more rows than the GPU has "
                 f"multiprocessors ({H200_MULTIPROCESSORS})" + (f", block={block}" if block else ""))
        out.append(Case(label, _more_work_than_programs(
            _softmax_case(gen, device, _torch().float32, rows, cols, label, block, flat=True), "rows")))
        if online:
            # round 33 (10): a rise of 84 to 89 after the first block, thousands of values high: a running max
            # moved only for rises past a threshold near 87 leaves terms of e^84 and more, and their sum
            # overflows fp32 (a threshold of 8, a lazy rescale, is right: its terms stay below e^8). Sizes from
            # the seed, no draw; drawn last, so the cases before keep their values
            cols = 3000 + 3 * base + gen.initial_seed() % 500
            label = (f"x 2x{cols} fp32, a first block near c, then {cols - base} values 84 to 89 above it"
                     f", block={block}")
            out.append(Case(label, _softmax_case(gen, device, _torch().float32, 2, cols, label, block,
                                                 rise=base)))
        return out

    return cases


_RISE_MESSAGE = ("each row of x rises, after its first block, to thousands of values 84 to 89 above it, and your y "
                 "is wrong there: kept relative to a max that did not follow them up, their exponentials e^84 "
                 "and more sum past fp32's largest value (e^88.7). Move the running max up whenever a block's "
                 "max passes it (a lazy rescale may wait for a rise of a few units, 8 say, never of dozens)")


def _overflowed(got, base: int) -> bool:
    """Whether ``got`` shows the overflow of the rise case (:func:`_rise_rows`): a value not finite, or a 0 where
    the row has risen (from column ``base`` on, every probability is far above 0)."""
    import torch

    y = got.detach().cpu().double()
    return bool((~torch.isfinite(y)).any() or (y[:, base:] == 0).any())


def _rise_rows(gen, cols: int, base: int):
    """Two rows of c + N(0, 1) over their first ``base`` columns (c from -50 to 50), then c + R + N(0, 0.3^2)
    with R from 84 to 86.5 (row 0) and from 86.5 to 89 (row 1): thousands of terms e^84 or more relative to the
    first block's max, whose sum passes fp32's largest value unless the running max moved up to them."""
    import torch

    c = (torch.rand(2, 1, generator=gen) * 2 - 1) * 50.0
    x = c + torch.randn(2, cols, generator=gen)
    rise = torch.tensor([[84.0], [86.5]]) + torch.rand(2, 1, generator=gen) * 2.5
    x[:, base:] = c + rise + 0.3 * torch.randn(2, cols - base, generator=gen)
    return x


def _flat_rows(gen, rows: int, cols: int):
    """Rows centred anywhere from -3 to 3 whose elements lie within about 0.05 of each other: every
    exp(x - max) is near 1, so the row sum is near the row's length."""
    import torch

    offsets = (torch.rand(rows, 1, generator=gen) * 2 - 1) * 3.0
    return offsets + 0.01 * torch.randn(rows, cols, generator=gen)


def _span_rows(gen, cols: int, base: int):
    """Two rows of N(c, 3^2) values, c from -820 to -780, each with one value 1600 above c (plus up to 20):
    in row 0 at a column of a middle block of ``base`` (neither the first nor the last), in row 1 in the last
    block. Softmax is one at the high value and zero elsewhere. A shift by anything but the running max of the
    values seen so far overflows there, in fp64 too (exp overflows above 709.8): a fixed shift (the first
    block's max, the first value, the mean) at the high value; a max that goes down (the current block's max)
    when it rescales the sum after the high block (exp(1600))."""
    import torch

    low = -800.0 + (torch.rand(2, 1, generator=gen) * 2 - 1) * 20.0
    x = low + torch.randn(2, cols, generator=gen) * 3.0
    high = low[:, 0] + 1600.0 + torch.rand(2, generator=gen) * 20.0
    blocks = -(-cols // base)
    middle = base * (1 + int(torch.randint(0, blocks - 2, (1,), generator=gen))) + \
        int(torch.randint(0, base, (1,), generator=gen))
    last = cols - 1 - int(torch.randint(0, cols - (blocks - 1) * base, (1,), generator=gen))
    x[0, middle], x[1, last] = high[0], high[1]
    return x


def _argument_message(x, got, expected) -> str | None:
    """What to look at where ``got`` is finite but a little off (a relative error below 1e-2) in a row whose
    values are large enough that rounding the exponent's argument explains it, or None. x log2(e) at |x| = 800
    is about 1150, which fp32 holds to 2^-24 x 1150 ~ 7e-5: a kernel that scales x before subtracting the
    max passes that error to exp2 as a relative error of the same size (round 8's note on L3.online: the
    tolerance line alone sent the learner to the accumulator)."""
    import torch

    got = got.detach().cpu().double()
    if not bool(torch.isfinite(got).all()):
        return None
    x = x.detach().cpu().double()
    live = expected > 1e-30
    rel = torch.where(live, (got - expected).abs() / expected.where(live, torch.ones_like(expected)),
                      torch.zeros_like(expected))
    worst = float(rel.max())
    if not 0 < worst < 1e-2:
        return None
    r = int(rel.max(dim=1).values.argmax())
    big = float(torch.where(torch.isfinite(x[r]), x[r].abs(), torch.zeros_like(x[r])).max())
    scaled = big * 1.4426950408889634
    if worst > 4 * U32 * scaled:  # more than the rounding of the argument can explain
        return None
    return (f"your y is off by up to {worst:.2g} (relative) in row {r} of x, whose values reach {big:.0f} in "
            "magnitude: more than fp32 arithmetic allows. Two usual causes: a sum or exponentials kept in fp16 "
            "(or TF32), or an exponent whose argument was rounded at a large |x|: scaling x by log2(e) before "
            f"subtracting the max rounds x log2(e) (up to {scaled:.0f} here) to fp32, an error of up to "
            f"{U32 * scaled:.1g} that exp2 turns into a relative error of y. Subtract first, then scale: "
            "exp2((x - m) * log2(e))")


def _span_message(x, got, expected, block) -> str | None:
    """What to fix where ``got`` is wrong in a row of :func:`_span_rows`."""
    import torch

    x = x.detach().cpu().double()
    wrong = ~torch.isfinite(got.detach().cpu().double()) | ((got.detach().cpu().double() - expected).abs() > 1e-3)
    rows = [r for r in range(x.shape[0]) if bool(wrong[r].any())]
    if not rows:
        return None
    r = rows[0]
    high = int(x[r].argmax())
    return (f"your y is wrong in row {r} of x, whose values lie near {float(x[r, 0]):.0f} but for one of "
            f"{float(x[r, high]):.0f} at column {high}: exp(x - shift) overflows, in fp32 past e^88.7 and in "
            "fp64 past e^709.8, for any shift that is not the largest value of the row"
            + ("" if block else ". Shift by the row's max (its padding lanes -inf), not by its first value, its "
               "mean or a constant")
            + (" seen so far. A fixed shift (the first block's max, the first value, the mean) overflows at the "
               "high value; a \"running\" max that goes down (m_new = the current block's max) overflows when it "
               "rescales the sum by exp(m - m_new) after the high block. Keep a running max that never "
               "decreases, m_new = max(m, the block's max), and rescale the running sum by exp(m - m_new) "
               "whenever it grows" if block else ""))


def _softmax_case(gen, device, dtype, rows, cols, label, block, repeat=False, flat=False, span=0, rise=0):
    def run(runner):
        import torch

        from gpuperf.grading.core import row_strided

        base = block or (128 if device == "cpu" else 1024)  # the block a row's masked start covers
        if span:
            drawn = _span_rows(gen, cols, span)
        elif rise:
            drawn = _rise_rows(gen, cols, rise)
        else:
            drawn = _flat_rows(gen, rows, cols) if flat else _softmax_rows(gen, rows, cols, masked=base,
                                                                           early=block)
        x = row_strided(drawn.to(dtype).to(device))
        results = []
        for call in range(2 if repeat else 1):
            if call:  # the same tensor object, new contents
                x.copy_(_softmax_rows(gen, rows, cols, masked=base, early=block).to(dtype).to(device))
            if block is None:
                got, watch = runner.call(x, names=("x",))
            else:
                got, watch = runner.call(x, block, names=("x",))
            expected = torch_softmax64(x)
            what = "y" if call == 0 else "y (second call: same x, new values)"
            tol, bound = softmax_bound(x, dtype, cols)
            results += [compare(label, what, got, expected, tol, scale=bound, dtype=dtype, device=device)]
            if not results[-1].passed and isinstance(got, torch.Tensor) and got.shape == expected.shape:
                message = (_span_message(x, got, expected, block) if span else None) or \
                    (_RISE_MESSAGE if rise and _overflowed(got, rise) else None) or \
                    _falling_max_message(x, got, expected, block) or \
                    _masked_start_message(x, got, expected, block, base) or \
                    _argument_message(x, got, expected)
                if message:
                    results[-1] = dataclasses.replace(results[-1], message=message)
            if results[-1].passed:
                results += runner.written_check("y", got)
            del expected, bound  # the reference never exists while the reader's function runs
            if not all(r.passed for r in results):
                return results
        grid = _rows_off_axis_0(watch, rows)
        if grid:
            results.append(CaseResult(label, "-", False,
                                      f"your kernel ran on a grid of {list(grid)} programs for {rows} rows, the rows "
                                      "spread over axes 1 and 2: put the rows on the grid's first axis: CUDA "
                                      "allows at most 65,535 programs on axes 1 and 2 (2^31 - 1 on axis 0), and a "
                                      "softmax meets far more rows than that (a batch of 64 sequences of 2048 "
                                      "tokens is 131,072 rows)"))
            return results
        trace = runner.trace
        spread = _spread_check(runner, label, got, "y", cols, "one row", "rows",
                               "The exercise gives every row its own program (a grid of one program per row), "
                               "so the rows are processed at the same time") if rows > 1 else []
        if spread:
            return results + spread
        if trace is not None and block is None:
            loaded = trace.total("loaded")
            if loaded > rows * cols + rows * 16:
                results.append(CaseResult(label, "-", False,
                                          f"your kernel loaded {loaded} elements of x ({loaded / (rows * cols):.2g} "
                                          f"times each of the {rows * cols}): the fused softmax reads each row "
                                          "once, keeps it on chip for the max, the sum and the output, and "
                                          "writes once; a second pass over the row (one for the max and the "
                                          "sum, another to write) reads it twice, three passes three times"
                                          f"{_recast_note(trace)}"))
                return results
        if trace is not None:
            widest = trace.widest_load()
        else:
            widest = watch.counters.widest_block
        if block is not None and widest > block:
            what = "loaded" if trace is not None else "was launched with a block of"
            results.append(CaseResult(label, "-", False,
                                      f"the grader asked for blocks of {block} elements, but your kernel {what} "
                                      f"{widest} at once: the online kernel must walk the row block by block "
                                      "with the block it is given"
                                      + (_recast_note(trace) if trace is not None else "")))
        if trace is not None and block is not None:
            of_x, other = _online_row_loads(trace, x, got, rows)
            if of_x + other > 2 * rows * cols + rows * min(block, cols):
                more = (f", and {other} of other memory your kernels wrote and read back (a copy of x read "
                        "again is another pass over it)") if other else ""
                results.append(CaseResult(label, "-", False,
                                          f"your kernel loaded {of_x} elements of x ({of_x / (rows * cols):.2g} "
                                          f"times each of the {rows * cols}){more}: the online softmax reads a row "
                                          "twice, once for the running max and sum together, once to write; a "
                                          f"separate pass for the max reads it three times{_recast_note(trace)}"))
        return results

    return run


def _recast_note(trace) -> str:
    """Where a kernel loaded a tensor through a pointer to another element type (``int64`` lanes over fp32
    rows), why its loads count more elements than its lanes: the grader counts the bytes read."""
    for launch in trace.launches:
        for name, kind in launch.recast.items():
            return (f" (counted in bytes: your kernel {launch.kernel} loads {name} through a pointer to {kind}, "
                    f"so each lane counts as the elements of {name} it reads; reading a row through wider lanes "
                    "does not make a pass cheaper)")
    return ""


def _online_row_loads(trace, x, y, rows: int) -> tuple[int, int]:
    """The loads L3.online's pass count charges to the rows of ``x``: ``(loads of x or of the copies of it the
    reader's function made, loads of any other memory)``, leaving out a row's statistics: memory outside x and
    the output ``y`` of at most two values of at most 8 bytes per row of x (the running max and sum a first
    kernel stores for a second, normalising one), and two loads per row from any other memory outside x and y
    (m and l kept in one larger workspace: what is read per row, not the buffer's size); and in such a workspace,
    loads of at most two values (16 bytes) each, the values read most often first, up to two values of at most 8
    bytes per row in all (with the vectors above), whatever the number of programs that read them: a row's (m, 1/l)
    stored beside its blocks' partials and read by each block program (round 18's h03). Other memory counts
    past that, so that a kernel that copies x (or writes it into y) and walks the copy three times still reads
    each element three times. The statistics are measured by the bytes of memory the arguments reach (first
    byte to last element, together over every argument of every launch taken for them: slices of a
    workspace handed to many launches add up), never by their elements: a view of one column of a whole
    workspace (``ws[:, :1]``, rows elements) reaches every row of it (round 16's 06). Loads
    of the reader's own memory count in x's elements (bytes over x's element size, see
    :func:`gpuperf.grading.algorithm._worth`), and a 4-byte lane of it counts as one value of a narrower x, so
    the two statistics a row may load are two values, whatever x's type."""
    of_x = other = workspace = 0
    statistics = []  # the byte spans of the arguments taken for a row's statistics, over every launch
    reads: dict = {}  # (first byte, end) of a load of at most two values of a workspace: elements it counted
    for launch in trace.launches:
        reach = {name: (start, end) for name, start, end, _, _ in launch.args}
        sizes = {name: size for name, _, _, size, _ in launch.args}
        counted = set()
        for name, count in launch.loaded.items():
            if _rows_in(trace, launch, name, x) is not None:
                of_x += count
            elif name not in reach or _same_storage(launch, name, y):
                other += count
            elif _statistics_bytes(statistics + [reach[name]]) <= 2 * 8 * rows:
                statistics.append(reach[name])  # a row's statistics: one or two values per row
            else:
                workspace += count
                counted.add(name)
        worth = getattr(launch, "span_worth", ())
        for (name, _, low, high), elements in zip(launch.spans, worth):
            if name in counted and high + sizes[name] - low <= 2 * 8:
                reads[(low, high + sizes[name])] = reads.get((low, high + sizes[name]), 0) + elements
    # a row's statistics kept in a larger workspace (beside the partials of its blocks, round 18's h03): the
    # values read most often, one or two per load, up to two values of at most 8 bytes per row in all (with the
    # buffers above), are read free, however many programs read them
    for span, elements in sorted(reads.items(), key=lambda item: -item[1]):
        if _statistics_bytes(statistics + [span]) <= 2 * 8 * rows:
            statistics.append(span)
            workspace -= elements
    return of_x, other + max(0, workspace - 2 * rows)


def _statistics_bytes(spans) -> int:
    """The bytes of memory that the ``(first byte, end)`` spans cover together (overlaps counted once)."""
    total, reached = 0, None
    for start, end in sorted(spans):
        if reached is not None and start < reached:
            start = reached
        if end > start:
            total += end - start
            reached = end
    return total


def _rows_off_axis_0(watch, rows: int) -> tuple:
    """The grid of a launch with several programs on axes 1 and 2 but fewer than one per row on axis 0: its
    rows lie (partly) on axes 1 and 2, which grow with them past CUDA's 65,535; () when none does. (Programs
    on axis 1 beside one per row on axis 0, blocks of a long row, are fine.)"""
    if watch is None or rows < 2:
        return ()
    for _, grid in watch.counters.grids:
        if grid[1] * grid[2] > 1 and grid[0] < rows:
            return grid
    return ()


def torch_softmax64(x):
    import torch

    return torch.softmax(x.detach().double().cpu(), dim=-1)


# ---- L4: outer product and matmul ---------------------------------------------------------------------


def _outer_cases(gen, device) -> list[Case]:
    if device == "cpu":
        shapes = [(1, 1), (torch_randint(gen, 2, 120), torch_randint(gen, 2, 40)),
                  (torch_randint(gen, 20, 40), 1025), (130, 64 + torch_randint(gen, 1, 60)),
                  (1, torch_randint(gen, 100, 300)), (2, torch_randint(gen, 6000, 12_000))]
    else:
        shapes = [(1, 1), (97, 33), (1000 + torch_randint(gen, 1, 99), 1025), (4097, 333), (1, 5000),
                  (3, torch_randint(gen, 100_000, 1_000_000))]
    cases = []
    for dtype in _dtypes(device):
        for m, n in shapes:
            if device == "cpu" and m * n > 20_000 and dtype != _dtypes(device)[0]:
                continue
            label = f"x ({m},) y ({n},) {dtype_name(dtype)}"
            cases.append(Case(label, _outer_case(gen, device, dtype, m, n, label)))
    m, n = torch_randint(gen, 40, 90), torch_randint(gen, 70, 140)
    label = f"x ({m},) y ({n},) fp32, called twice on the same x and y with new values in them"
    cases.append(Case(label, _outer_case(gen, device, _torch().float32, m, n, label, repeat=True)))
    if device != "cpu":  # the 2-D tiles, counted by the interpreter on the CPU
        label = "x (70,) y (150,) fp32, your kernel run by Triton's interpreter on the CPU: its 2-D tiles"
        cases.append(Case(label, _outer_case(gen, "cpu", _torch().float32, 70, 150, label), interpret=True,
                          device="cpu"))
    return cases


def _outer_case(gen, device, dtype, m, n, label, repeat=False):
    def run(runner):
        x = runner.input(_randn(gen, (m,), dtype, device))
        y = runner.input(_randn(gen, (n,), dtype, device))
        results = []
        for call in range(2 if repeat else 1):
            if call:  # the same tensor objects, new contents
                x.copy_(_randn(gen, (m,), dtype, device))
                y.copy_(_randn(gen, (n,), dtype, device))
            got, watch = runner.call(x, y, names=("x", "y"))
            expected = x.double().cpu()[:, None] * y.double().cpu()[None, :]
            tol = Tolerance(_TINY16 if dtype_name(dtype) != "fp32" else 1.4e-45,
                            2 * UNIT_ROUNDOFF[dtype_name(dtype)], f"one product rounded to {dtype_name(dtype)}, "
                            "doubled")
            what = "out" if call == 0 else "out (second call: same x and y, new values)"
            results += [compare(label, what, got, expected, tol, dtype=dtype, device=device)]
            if results[-1].passed:
                results += runner.written_check("out", got)
            del expected  # the reference never exists while the reader's function runs
            if not all(r.passed for r in results):
                return results
        trace = runner.trace
        if trace is not None and m > 1 and n > 1 and trace.total("stored"):
            # every element written by a 2-D block, and most by blocks spanning two rows and two columns of out
            # (a tile, not one row reshaped into a 2-D block)
            tiled = trace.tiled_elements(got.data_ptr(), got.stride(0) * got.element_size())
            shapes = {shape: c for shape, c in trace.store_shapes().items() if len(shape) == 2}
            if shapes:
                bm, bn = max(shapes, key=shapes.get)
                biggest = max(shapes, key=lambda sh: sh[0] * sh[1])
                if max(biggest) > 1024 or biggest[0] * biggest[1] > 16384:
                    results.append(CaseResult(label, "-", False,
                                              f"your kernel stores tiles of {biggest[0]} x {biggest[1]}: a tile is "
                                              "a block that fits in one program's registers (at most 1024 a side "
                                              "and 16384 elements, e.g. 32 x 64), and the grid has a program "
                                              "for every tile"))
                    return results
                tm, tn = max(shapes, key=lambda sh: min(sh[0], m) * min(sh[1], n))
                spread = _spread_check(runner, label, got, "out", min(tm, m) * min(tn, n),
                                       f"one tile ({tm} x {tn} in yours)", "tiles",
                                       "The grid has one program per tile (two dimensions: blocks of rows by "
                                       "blocks of columns), so the tiles are computed at the same time")
                if spread:
                    return results + spread
            if trace.stored_2d() < m * n or (m >= 4 and tiled < m * n // 2):
                results.append(CaseResult(label, "-", False,
                                          f"your kernel wrote {tiled} of the {m * n} elements of out with 2-D "
                                          "tiles spanning rows and columns: the exercise asks for 2-D tiles (a "
                                          "block of rows times a block of columns, masked in both dimensions) "
                                          "that write every element"))
        return results

    return run


_TINY16 = 2.0**-24

#: The most of K, or of the keys, one tile product may take at once: a tiled kernel walks them in blocks.
LARGEST_BLOCK_K = 256


def _matmul_cases(gen, device) -> list[Case]:
    # (m, n, k, entries, layout of A, layout of B); A "strided": rows k + 13 apart; "transposed": a view
    # of a (k, m) tensor (columns adjacent); B "contiguous" or "transposed"
    if device == "cpu":
        shapes = [(1, 1, 1, "randn", "strided", "contiguous"),
                  (torch_randint(gen, 33, 100), torch_randint(gen, 20, 40), torch_randint(gen, 33, 80), "randn",
                   "transposed", "transposed"),
                  (64, 64, 64, "randn", "strided", "transposed"),
                  (33, 129, 70 + torch_randint(gen, 1, 50), "randn", "transposed", "contiguous"),
                  (1, torch_randint(gen, 1100, 2000), torch_randint(gen, 33, 60), "randn", "strided", "contiguous"),
                  (33, 40, 2048, "uniform", "strided", "transposed")]
    else:
        shapes = [(1, 1, 1, "randn", "strided", "contiguous"), (97, 33, 65, "randn", "transposed", "transposed"),
                  (64, 64, 64, "randn", "strided", "transposed"),
                  (1000 + torch_randint(gen, 1, 99), 1025, 777, "randn", "transposed", "contiguous"),
                  (1, 4096, 512, "randn", "strided", "contiguous"), (2048, 2048, 2048, "randn", "strided",
                                                                     "transposed"),
                  (257, 300, 8192, "uniform", "strided", "contiguous")]
    cases = []
    for dtype in _dtypes(device):
        for m, n, k, dist, a_layout, b_layout in shapes:
            if device == "cpu" and n > 1000 and dtype != _dtypes(device)[0]:
                continue
            label = _matmul_label(m, n, k, dtype, dist, a_layout, b_layout)
            cases.append(Case(label, _matmul_case(gen, device, dtype, m, n, k, dist, label, a_layout, b_layout)))
    m, n, k = torch_randint(gen, 20, 70), torch_randint(gen, 20, 70), torch_randint(gen, 20, 70)
    label = _matmul_label(m, n, k, _torch().float32, "randn", "strided", "contiguous") + \
        ", called twice on the same A and B with new values in them"
    cases.append(Case(label, _matmul_case(gen, device, _torch().float32, m, n, k, "randn", label, "strided",
                                          "contiguous", repeat=True)))
    if device != "cpu":  # the tiles and the walk over K, counted by the interpreter on the CPU; C of whole
        # tiles of any size up to 64 (at 40 x 48 two programs of two 32 x 32 tiles each wrote less than two
        # tiles' worth of C and passed, on an H100: the tiles at its edges are partial)
        label = (_matmul_label(192, 256, 1000, _torch().float32, "randn", "strided", "contiguous")
                 + ", your kernel run by Triton's interpreter on the CPU: its tiles and the walk over K")
        cases.append(Case(label, _matmul_case(gen, "cpu", _torch().float32, 192, 256, 1000, "randn", label,
                                              "strided", "contiguous"), interpret=True, device="cpu"))
    if _no_tf32(device):
        import torch

        label = "A 97x65 @ B 65x33 fp32 through Triton's interpreter (TF32 rounded as on an A100 or H200)"
        cases.append(Case(label, _matmul_case(gen, device, torch.float32, 97, 33, 65, "randn", label),
                          interpret=True))
    if device == "cpu":  # on the GPU the 1000+ and 2048 rows do it
        # more tiles than a persistent grid has programs (one per multiprocessor), and three groups of tile rows
        # or more, a middle one among them, whatever BLOCK_M x GROUP_M up to 512 (M > 1024; 8 x 32 and 8 x 64:
        # groups of 8, 8, 8, 8, 2-5 and 8, 8, 1-3), the last group short and its last tile sticking out; N of two
        # tile columns or more up to BLOCK_N = 64 (with one, any grouped order is row-major). K short, at most one
        # block: the interpreter's time goes by programs. Sizes from the seed, no draw
        seed = gen.initial_seed()
        m, n, k = 33 * 32 + 5 + 32 * (seed % 4), 3 * 32 + 5 + seed % 27, 16 + seed % 17
        rows, groups = -(-m // 32), -(-m // 256)
        label = (_matmul_label(m, n, k, _torch().float32, "randn", "strided", "contiguous")
                 + f", more tiles of 32 x 32 than the GPU has multiprocessors ({H200_MULTIPROCESSORS}) and "
                 "three groups of 8 tile rows or more")
        cases.append(Case(label, _more_work_than_programs(
            _matmul_case(gen, device, _torch().float32, m, n, k, "randn", label), "tiles",
            f"C has {rows} rows of 32-row tiles, {groups} groups of 8 (the last of {rows - 8 * (groups - 1)}) "
            f"and {-(-m // 64)} of 64-row tiles: check the grouped order's arithmetic, the first tile row of a "
            "group and the height of each group (GROUP_M but for the last, short one), which only a middle group "
            "and a last one test; and ")))
    return cases


def _matmul_label(m, n, k, dtype, dist, a_layout, b_layout) -> str:
    what = ", entries in [0, 1)" if dist == "uniform" else ""
    a = f"A rows {k + 13} apart" if a_layout == "strided" else "A transposed (a view of a K x M tensor)"
    b = "B contiguous" if b_layout == "contiguous" else "B transposed (a view of an N x K tensor)"
    return f"A {m}x{k} @ B {k}x{n} {dtype_name(dtype)}, {a}, {b}{what}"


def _matmul_operand(runner, values, layout):
    from gpuperf.grading.core import row_strided

    if layout == "strided":
        return row_strided(values)
    if layout == "transposed":
        return runner.input(values.t().contiguous()).t()
    return runner.input(values)


def _matmul_case(gen, device, dtype, m, n, k, dist, label, a_layout="strided", b_layout="contiguous",
                 repeat=False):
    def draw():
        import torch

        if dist == "uniform":
            return (torch.rand(m, k, generator=gen).to(dtype).to(device),
                    torch.rand(k, n, generator=gen).to(dtype).to(device))
        return _randn(gen, (m, k), dtype, device), _randn(gen, (k, n), dtype, device)

    def run(runner):
        a0, b0 = draw()
        a, b = _matmul_operand(runner, a0, a_layout), _matmul_operand(runner, b0, b_layout)
        results = []
        for call in range(2 if repeat else 1):
            if call:  # the same tensor objects, new contents
                a1, b1 = draw()
                a.copy_(a1)
                b.copy_(b1)
            got, _ = runner.call(a, b, names=("a", "b"))
            a64, b64 = a.double().cpu(), b.double().cpu()
            # (round 34: under a rerun with every tl.dot product doubled, C must come out doubled)
            scale = _algorithm_scale()
            expected = (a64 @ b64) * scale
            u_out = UNIT_ROUNDOFF[dtype_name(dtype)]
            bound = _stored_error(expected, dtype_name(dtype)) + 2 * (k + 2) * U32 * (a64.abs() @ b64.abs()) * scale
            tol = _bound(f"2 (u_out |C| + eta) + 2 (k + 2) 2^-24 (|A||B|), u_out = {u_out:.3g}, k = {k}",
                         f"C rounded to {dtype_name(dtype)} once, fp32 accumulation of {k} products; a 16-bit "
                         "accumulator or TF32 products (2^-11 each) exceed it")
            # the products of two non-zero elements C = A B needs (round 33): what the dots must make
            runner._matmul_nonzero = int(((a64 != 0).sum(0) * (b64 != 0).sum(1)).sum())
            what = "c" if call == 0 else "c (second call: same A and B, new values)"
            results += [compare(label, what, got, expected, tol, scale=bound, dtype=dtype, device=device)]
            if results[-1].passed:
                results += runner.written_check("c", got)
            del expected, bound, a64, b64  # the reference never exists while the reader's function runs
            if not all(r.passed for r in results):
                return results
        runner._matmul_mn = (m, n)
        return results + (_matmul_programs_check(runner, label, got, m, n) or _matmul_blocks_check(runner, label, k))

    return run


def _matmul_programs_check(runner, label, c, m, n) -> list[CaseResult]:
    """A program for every tile of C, all in one launch: the tiles counted from the blocks the kernel stores
    into C under the interpreter (at most LARGEST_BLOCK_K a side), and on a GPU from the grid of the launch,
    against tiles of the largest size allowed. Programs that loop over the tiles (a persistent kernel) pass
    when there is at least one per multiprocessor."""
    sms = _multiprocessors(runner.device)
    trace = runner.trace
    if trace is None:
        programs = runner.watch.counters.most_programs if runner.watch is not None else 0
        tiles = -(-m // LARGEST_BLOCK_K) * -(-n // LARGEST_BLOCK_K)
        if 0 < programs < min(tiles, sms):
            return [CaseResult(label, "-", False,
                               f"your kernel ran {programs} program(s) for C of {m} x {n}, which has at least {tiles} "
                               f"tiles even of {LARGEST_BLOCK_K} x {LARGEST_BLOCK_K}: the grid has one program per "
                               "tile of C, so the tiles are computed at the same time on the GPU's multiprocessors; "
                               "one program looping over the tiles uses one of them")]
        return []
    if m * n <= 1:
        return []
    # the launches that wrote C, found by the addresses they wrote (whatever argument a store was booked to), or
    # what a returned copy of C (c.clone()) copies
    end = c.data_ptr() + (sum((s - 1) * st for s, st in zip(c.shape, c.stride())) + 1) * c.element_size()
    wrote = {id(launch) for launch, *_ in trace.writers(c.data_ptr(), end)} | \
        {id(launch) for launch, *_ in _out_writes(trace, c)}
    launches = [launch for launch in trace.launches
                if id(launch) in wrote or any(_same_memory(launch, name, c) for name in launch.stored)]
    # an epilogue: a launch with no tile product that writes C from what earlier launches stored (split-K's
    # workspace cast into C, round 24's h16). Its blocks are not the tiles; the launches that made the products
    # are graded instead, by the programs that made them
    epilogues = [launch for launch in launches if not launch.dot_shapes and launch.sources]
    if epilogues:
        for launch in trace.launches:
            if not launch.dot_shapes:
                continue
            tm = min(max(a for a, _, _ in launch.dot_shapes), m)
            tn = min(max(b for _, _, b in launch.dot_shapes), n)
            tiles = -(-m // tm) * -(-n // tn)
            busy = sum(1 for count in launch.dots_run.values() if count)
            if busy < min(tiles, sms):
                return [CaseResult(label, "-", False,
                                   f"your kernel {launch.kernel} made its tile products in {busy} program(s) for C "
                                   f"of {m} x {n}, {tiles} tiles of {tm} x {tn}; the kernel that writes C from "
                                   "them afterwards does not count: the grid gives every tile of C its own "
                                   "program (a grid of cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N) programs, times the "
                                   "slices of K with split-K), so the tiles are computed at the same time")]
        launches = [launch for launch in launches if launch not in epilogues]
    shapes: dict = {}
    for launch in launches:
        for shape, count in launch.store_shapes.items():
            rows_cols = (1, shape[0]) if len(shape) == 1 else shape[-2:]
            shapes[rows_cols] = shapes.get(rows_cols, 0) + count
    if not shapes and not epilogues:
        return []
    biggest = max(shapes, key=lambda sh: sh[0] * sh[1]) if shapes else (0, 0)
    if max(biggest) > LARGEST_BLOCK_K:
        return [CaseResult(label, "-", False,
                           f"your kernel stores blocks of {biggest[0]} x {biggest[1]} into C: a tiled matmul keeps "
                           f"one tile of C (BLOCK_M x BLOCK_N, at most {LARGEST_BLOCK_K} a side, e.g. 64 x 64) in "
                           "registers per program and stores it, with a program for every tile")]
    # the tile a program owns: the largest block it stores into C, or the largest tile product (a tile stored
    # in pieces, an epilogue in halves, is one tile)
    shapes.update({(a, c_n): 1 for a, _, c_n in trace.dots()})
    if not shapes:
        return []
    tm, tn = max(shapes, key=lambda sh: min(sh[0], m) * min(sh[1], n))
    return _spread_check(runner, label, c, "C", min(tm, m) * min(tn, n), f"one tile ({tm} x {tn} in yours)",
                         "tiles", "The exercise gives every tile of C its own program (a grid of "
                         "cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N) programs), so the tiles are computed at the same "
                         "time")


def _algorithm_scale() -> float:
    """2 while the grader reruns a case with every tl.dot product doubled (round 34), else 1."""
    from gpuperf.grading import algorithm

    return 2.0 if algorithm._PERTURB.get("site") == "double" else 1.0


def _matmul_blocks_check(runner, label, k) -> list[CaseResult]:
    """The tiles, graded where the interpreter counts them: tile products with ``tl.dot``, and K walked in
    blocks (never all of K at once)."""
    trace = runner.trace
    if trace is None or k < 512:
        return []
    shapes = trace.dots()
    if not shapes:
        return [CaseResult(label, "-", False,
                           "your kernel multiplies no tiles with Triton's dot: the tiled matmul multiplies a "
                           "(BLOCK_M, BLOCK_K) tile of A by a (BLOCK_K, BLOCK_N) tile of B with a dot, "
                           "accumulating in fp32 (a broadcast multiply and a sum never reaches the tensor cores)")]
    widest = max(shape[1] for shape in shapes)
    # the tile products must do the matmul's multiply-adds (m n k, more with padded tiles): a dot kept only to
    # be seen, the products computed some other way, does far fewer
    m, n = runner._matmul_mn
    tile_m, tile_n = max(shape[0] for shape in shapes), max(shape[2] for shape in shapes)
    if tile_m > LARGEST_BLOCK_K or tile_n > LARGEST_BLOCK_K:
        return [CaseResult(label, "-", False,
                           f"your kernel's tiles of C are {tile_m} x {tile_n}: a tiled matmul keeps one tile of C "
                           f"(BLOCK_M x BLOCK_N, at most {LARGEST_BLOCK_K} a side, e.g. 64 x 64) in registers per "
                           "program, with a program for every tile")]
    # round 31 (09): only products of one input by another count, each operand computed from tensors the other
    # was not (A's tile by B's; with a gather, each with its own index table): a product of a tile with a
    # constant one (an identity), or of C computed some other way with a tile of A, multiplies no A by B
    macs = sum(a * b * c for pair, made in trace.products().items()
               if len(pair) == 2 and all(side and not side <= other for side, other in (tuple(pair), tuple(pair)[::-1]))
               for a, b, c in made)
    if macs < m * n * k:
        return [CaseResult(label, "-", False,
                           f"your kernel's tl.dot products do {macs} multiply-adds; C = A B with M = {m}, N = {n}, "
                           f"K = {k} needs {m * n * k}: the tile products with tl.dot must compute C (one dot per "
                           "block of K for every tile of C, accumulated in fp32, a tile of A by a tile of B), not a "
                           "product computed some other way beside a dot (only products of a tile loaded from A by "
                           "one loaded from B count: not a tile by a constant one, an identity, say)")]
    # round 33: and they must multiply the elements of A and B themselves, each non-zero a[i, k] b[k, j] once or
    # more: a dot of tiles masked to a column by an index (tl.where(k == 0, a, 0)) does its tile's multiply-adds
    # on zeros, the work done some other way
    made = sum(count for pair, count in trace.nonzero_products().items()
               if len(pair) == 2 and all(side and not side <= other
                                         for side, other in (tuple(pair), tuple(pair)[::-1])))
    needed = getattr(runner, "_matmul_nonzero", 0)
    if made < 0.99 * needed:
        return [CaseResult(label, "-", False,
                           f"your kernel's tl.dot products multiply {made} pairs of non-zero elements of A and B; "
                           f"C = A B needs {needed} (each a[i, k] b[k, j] once): your dots multiply tiles that are "
                           "mostly zeros (masked by an index, say), so most of C was computed some other way. "
                           "Multiply each block of A by the block of B with tl.dot")]
    if widest >= k or widest > LARGEST_BLOCK_K:
        return [CaseResult(label, "-", False,
                           f"your kernel's tile products take {widest} of K = {k} at once: a tiled matmul walks K "
                           f"in blocks (BLOCK_K of 16 to 128, at most {LARGEST_BLOCK_K}), accumulating the "
                           "products of each block, so its tiles fit in on-chip memory whatever K is")]
    return []


# ---- L5 and L6: attention -----------------------------------------------------------------------------


def _attention_shapes(device: str, gen) -> list[tuple[int, int, int, int, int, bool]]:
    """(batch, heads, n_q, n_k, head_dim, causal)."""
    # the i-th shape gets SPREADS[i % 3]: the fourth (N_q > N_k, causal) has ordinary random scores, where a
    # causal mask that replaces the bounds mask lets padded keys into the rows past N_k
    if device == "cpu":
        n, e = torch_randint(gen, 60, 130), torch_randint(gen, 20, 70)
        a = torch_randint(gen, 20, 60)
        return [(1, 1, 1, 1, 16, False), (1, 2, n, n, 32, True), (2, 1, a, torch_randint(gen, a + 1, 140), 16, False),
                (1, 2, torch_randint(gen, e + 33, 160), e, 32, True),
                (2, 3, 33 + torch_randint(gen, 0, 30), torch_randint(gen, 65, 140), 16, False),
                # the largest head size the labs take (a head-dimension block hard-coded to 32 or 64 lanes
                # shows) with batch and heads both above 1 (an index that mixes them up shows), kept small for
                # the interpreter
                (2, 3, torch_randint(gen, 17, 40), torch_randint(gen, 17, 40), 128, True)]
    return [(1, 1, 1, 1, 16, False), (1, 2, 97, 97, 32, True), (2, 3, 40, 1030, 64, False),
            (1, 2, 1000 + torch_randint(gen, 1, 99), 300, 64, True), (2, 4, 1024, 1024, 128, True),
            (2, 2, 777, 2000 + torch_randint(gen, 1, 99), 64, False)]


#: How the grader lays out an attention input of shape (B, H, N, d). The head dimension is always contiguous
#: (stride(-1) == 1: the labs' contract, written in L5, L6 and labs/README.md); the other strides are each
#: input's own, drawn per case (:func:`_attention_layouts`). Every input also starts a guard band into its
#: storage (a storage offset, :meth:`Runner.input`).
ATTENTION_LAYOUTS = ("contiguous", "heads interleaved", "a slice of a fused projection",
                     "heads outermost, rows padded")


def _layout_strides(kind: str, shape) -> tuple[int, ...]:
    """The strides of a (B, H, N, d) tensor laid out as ``kind`` (one of ATTENTION_LAYOUTS); the elements
    between (a fused projection's other slices, a row's padding) are NaN."""
    b, h, n, d = shape
    if kind == "heads interleaved":  # (B, N, H, d) viewed as (B, H, N, d), as x.view(B, N, H, d).transpose(1, 2)
        return (n * h * d, d, h * d, 1)
    if kind == "a slice of a fused projection":  # x.view(B, N, 3, H, d)[:, :, i].transpose(1, 2): heads
        return (n * 3 * h * d, d, 3 * h * d, 1)  # interleaved, rows 3 H d apart
    if kind == "heads outermost, rows padded":  # (H, B, N, d + 8)[..., :d] viewed as (B, H, N, d): the
        row = d + 8  # batch stride below the head stride, rows d + 8 apart
        return (n * row, b * n * row, row, 1)
    return _contiguous_strides(shape)


def _attention_layouts(gen, count: int, device: str, n_q: int, n_k: int) -> tuple[str, ...]:
    """The layouts of ``count`` inputs of one case (q, k, v, then O and dO), drawn from ``gen``: the first
    four each a different one of ATTENTION_LAYOUTS (so k and v never share strides, nor q and O), the fifth
    (dO) any but q's. All contiguous where the case's checks read the loads of the grader's own tensors (a
    sequence of 256 or more under the interpreter): a contiguous copy made in the reader's function would
    hide them."""
    import torch

    if device == "cpu" and max(n_q, n_k) >= 256:
        return ("contiguous",) * count
    order = [ATTENTION_LAYOUTS[i] for i in torch.randperm(len(ATTENTION_LAYOUTS), generator=gen).tolist()]
    kinds = order[:min(count, len(order))]
    if count > len(order):
        others = [kind for kind in ATTENTION_LAYOUTS if kind != kinds[0]]
        kinds.append(others[torch_randint(gen, 0, len(others))])
    return tuple(kinds)


def _layout_diagnosis(runner, names, values, kinds, values_pass) -> str:
    """After a case whose inputs each had a layout of their own failed: the reader's function called again on
    the same values, first all contiguous, then with each input alone in its layout (the others contiguous).
    ``values_pass(tensors)`` calls the function and compares its values. An input that fails alone is read as
    if contiguous; two that fail alone but pass in one shared layout are read one with the other's strides.
    Returns what to fix, or "" when the function fails with contiguous inputs too (the mistake is not the
    layout's). Runs only after a failure: 2 to 7 more calls of small cases."""
    def passes(layout) -> bool:
        tensors = [runner.input(t, strides=_layout_strides(kind, t.shape) if kind else None)
                   for t, kind in zip(values, layout)]
        try:
            return values_pass(tensors)
        except Exception:  # the reader's code (an access out of bounds, a check after the call): a failure
            return False

    plain = [None] * len(values)
    if not passes(plain):
        return ""
    failing = []
    for i, kind in enumerate(kinds):
        if kind not in (None, "contiguous"):
            alone = list(plain)
            alone[i] = kind
            if not passes(alone):
                failing.append(i)
    right = "your function is right when every input is contiguous"
    if len(failing) == 1:
        i = failing[0]
        name = names[i]
        plain_here = [n for n, kind in zip(names, kinds) if kind == "contiguous"]
        also = f" (or with the strides of {' or '.join(plain_here)}, contiguous in this case)" if plain_here else ""
        return (f"{right}, and wrong when {name} alone is laid out as {kinds[i]} (strides "
                f"{_layout_strides(kinds[i], values[i].shape)}, the others contiguous): it reads {name} as if it "
                f"were contiguous{also}. Pass {name}'s own strides to your kernel ({name}.stride(0), {name}.stride(1), "
                f"{name}.stride(2)) and use them, or make it contiguous first, as the given wrapper does")
    if len(failing) == 2:  # one read with the other's strides, or both as if contiguous: both in one layout
        both = list(plain)
        both[failing[0]] = both[failing[1]] = kinds[failing[0]]
        if passes(both):
            first, second = (names[i] for i in failing)
            return (f"{right}, and wrong when {first} alone or {second} alone has a layout of its own, right when "
                    f"they share one: it reads one with the other's strides ({second} with {first}'s strides, as a "
                    f"launch line copied from the one before?). Pass each tensor its own strides: "
                    f"{second}.stride(0), {second}.stride(1), {second}.stride(2) for {second}, {first}'s for {first}")
    if failing:
        which = " or ".join(names[i] for i in failing)
        return (f"{right}, and wrong when {which} alone has a layout of its own (the head dimension always "
                "contiguous): it reads them as if they were contiguous. Pass each tensor its own strides "
                "(x.stride(0), x.stride(1), x.stride(2)) and use them, or make them contiguous first, as the given "
                "wrapper does")
    return ""  # wrong only with several layouts at once, or right on every one: say nothing of layouts


def _diagnosed(runner, mixed: bool, first_call, diagnose) -> list:
    """The results of ``first_call()`` (the case's first call of the reader's function); where the inputs had
    layouts of their own (``mixed``) and it failed (values, or an exception), the first failure's message led
    by ``diagnose()`` (:func:`_layout_diagnosis`) where that says something."""
    from gpuperf.grading.core import ALL_NAN_BLANK, _result_of_exception

    if not mixed:
        return first_call()
    raised = True
    try:
        results = list(first_call())
        raised = False
    except CallFailed as failed:
        results = list(failed.results)
    except Exception as exc:  # the reader's code (an access out of bounds): reported as grade_report does
        results = [_result_of_exception(runner.label, exc)]
    first = next((i for i, r in enumerate(results) if not r.passed), None)
    # only a failed call or wrong values: a check of the algorithm after right values is not the layout's
    if first is None or not (raised or results[first].output != "-"):
        return results
    kept = (runner.trace, runner.watch, list(runner.poisoned))  # what the report reads of the failing call
    try:
        words = diagnose()
    finally:
        runner.trace, runner.watch, runner.poisoned = kept
    if words:
        found = results[first].message
        if ALL_NAN_BLANK in found or "is NaN" in found:
            found = f"every element of {results[first].output} came out NaN"
        results[first] = dataclasses.replace(results[first], message=f"{words}. What this case saw: {found}")
    return results


#: How the scores are spread: "normal" (q, k ~ N(0, 1): scores ~ N(0, 1)), "large" (q x 30: scores to about
#: +-100, exp overflows fp32 without the running max), "late" (q x 12 and the keys' norms growing along the
#: sequence: each row's max arrives in the last key blocks, far above the first blocks' max).
SPREADS = ("normal", "large", "late")


def _attention_inputs(gen, device, dtype, b, h, n_q, n_k, d, spread="normal"):
    import torch

    q = torch.randn(b, h, n_q, d, generator=gen)
    k = torch.randn(b, h, n_k, d, generator=gen)
    v = torch.randn(b, h, n_k, d, generator=gen)
    if spread == "large":
        q = q * 30.0
    elif spread == "late":
        q = q * 12.0
        k = k * torch.linspace(0.2, 2.5, n_k).reshape(1, 1, n_k, 1)
    elif spread == "shifted":  # every score far below 0 (about -200 at d = 16): exp(s) underflows, so a
        # running max that starts at 0 instead of -inf sums zeros
        k[..., 0] += 20.0
        q[..., 0] -= 40.0
    elif spread == "extreme":  # scores to about +-3000 (d = 16): q's first coordinate near 40, k's rising
        # from -300 to 300 along the keys and staying at 300 for the last 8, so every row's max sits in the last
        # keys (the last key block, whatever its size), thousands above the first blocks'; exp overflows float64
        # past 709.8, so a kernel without a running max fails even in float64
        q[..., 0] += 40.0
        k[..., 0] = torch.clamp(torch.arange(n_k) / max(1, n_k - 8), max=1.0) * 600.0 - 300.0
    elif spread == "early":  # the mirror of "extreme" in the even rows: their scores fall steadily along the
        # keys, from about +3000 at the first key to about -3000 at the last (d = 16; q's first coordinate near
        # 40, k's falling from 300 to -300), so each even row's max sits in its first key, and each block of 16
        # or more keys has a max at least ~290 below the block before it (N_k <= 330): a "running" max that is
        # only the current block's max goes down, and its rescale exp(m - m_new) overflows fp32 past 88.7.
        # The odd rows (q's first coordinate 0) keep ordinary scores, where every key counts: a mask that lets
        # in keys it should not shows there
        q[..., 0::2, 0] += 40.0
        q[..., 1::2, 0] = 0.0
        k[..., 0] = 300.0 - 600.0 * torch.arange(n_k) / max(1, n_k - 1)
    elif spread == "canary":
        q = torch.zeros_like(q)
        v = 1.0 / 3.0 + 0.01 * v
    elif spread in ("dq canary", "dk canary"):  # L6.backward's long sums of dQ and of dK (_l6_case)
        # every key alike (dq canary) or every query alike (dk canary), each dimension of its own size: block
        # after block adds the same amount to dQ (or dK), which a 16-bit accumulator rounds the same way each
        # time. Values of either sign by key (their mean 0): dS keeps one sign down each key's column
        sizes = 0.5 + torch.rand(d, generator=gen)
        if spread == "dk canary":
            q = sizes.expand(b, h, n_q, d).clone()
            sign = torch.ones(n_k)
            sign[n_k // 2:] = -1.0
            v = sign[torch.randperm(n_k, generator=gen)].reshape(1, 1, n_k, 1) * (1.0 + 0.1 * v)
        else:  # dS_ij = +3 c_i for the first quarter of the keys, -c_i for the rest: dQ's running sum climbs
            # in steps of one size and comes back to 0 in steps of another (steps of one size both ways would
            # round alike and cancel)
            k = sizes.expand(b, h, n_k, d).clone()
            sign = -torch.ones(n_k)
            sign[: n_k // 4] = 3.0
            v = sign.reshape(1, 1, n_k, 1) * (0.5 + torch.rand(d, generator=gen)).expand(b, h, n_k, d)
    return tuple(t.to(dtype).to(device) for t in (q, k, v))


def _extreme_scores_message(result: CaseResult, got) -> CaseResult:
    """``result`` of the extreme-scores case, with a message that says what to fix where ``got`` holds NaN
    or infinity (the expected values are finite)."""
    import torch

    if result.passed or not isinstance(got, torch.Tensor) or bool(torch.isfinite(got.detach()).all()):
        return result
    return dataclasses.replace(result, message=(
        f"{result.output} holds NaN or infinity: this case's scores reach about +-3000 and each row's max sits "
        "in its last keys, thousands above the first blocks' scores, so exp overflows past 88.7 in fp32 and "
        "past 709.8 even in float64; neither a fixed shift (the first block's max) nor float64 keeps it "
        "finite. Keep the running max m of the scores seen so far, subtract it before exp, and when a block "
        "raises it to m_new, rescale the running sum and output by exp(m - m_new)"))


def _early_scores_message(result: CaseResult, got) -> CaseResult:
    """``result`` of an early-scores case, with a message that says what to fix where ``got`` holds NaN or
    infinity (the expected values are finite)."""
    import torch

    if result.passed or not isinstance(got, torch.Tensor) or bool(torch.isfinite(got.detach()).all()):
        return result
    return dataclasses.replace(result, message=(
        f"{result.output} holds NaN or infinity: in this case each even row's max sits in its first key and "
        "its scores fall along the keys, every block's max hundreds below the block before it. A running max "
        "that goes down (m_new = the current block's max) rescales the running sum and output by "
        "exp(m - m_new) > 1, which overflows past 88.7 in fp32. The running max must never decrease: "
        "m_new = max(m, the block's max)"))


def _attention_reference(q, k, v, causal):
    """float64 on the CPU: o, lse, P (masked softmax), the scores S and A = scale |Q||K|^T; top-left causal
    mask, as ``scaled_dot_product_attention(is_causal=True)``."""
    import torch

    q64, k64, v64 = (_float64_cpu(t) for t in (q, k, v))
    scale = float(q.shape[-1]) ** -0.5  # operators only: no function a cell could rebind
    s = (q64 @ k64.transpose(-1, -2)) * scale
    a = (q64.abs() @ k64.abs().transpose(-1, -2)) * scale
    if causal:
        hidden = torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool).triu(1)
        s = s.masked_fill(hidden, float("-inf"))
        a = a.masked_fill(hidden, 0.0)
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None])
    o = p @ v64
    return o, lse, p, s, a


def _score_error(s, a, d):
    """Delta_i: the largest absolute error of a score of row i (see the module docstring)."""
    import torch

    finite = torch.where(torch.isfinite(s), s.abs(), torch.zeros_like(s))
    return (d + 2) * U32 * a.amax(dim=-1) + U32 * finite.amax(dim=-1)


def _forward_bounds(ref, v, dtype, n_k, d, canary=False):
    import torch

    o, lse, p, s, a = ref
    v64 = v.detach().double().cpu()
    name = dtype_name(dtype)
    u_p = 0.0 if (name == "fp32" or canary) else UNIT_ROUNDOFF[name]
    delta = _score_error(s, a, d)
    pv = p @ v64.abs()
    p_tiny = FLUSH if canary else max(ETA[name], FLUSH)
    visible = torch.isfinite(s).double()
    bound_o = _stored_error(o, name) + 2 * (2 * delta[..., None] + u_p + (n_k + d + 8) * U32) * pv \
        + 2 * p_tiny * (visible @ v64.abs())
    bound_lse = 2 * (delta + (n_k + 8) * U32 + U32 * lse.abs())
    return bound_o, bound_lse


def _l5_cases_for(want_causal: bool):
    """The forward's cases without (``L5.forward``) or with (``L5.causal``) the causal mask; the causal
    grader also checks a few full cases, so adding the mask cannot break the full path unnoticed."""

    def cases(gen, device) -> list[Case]:
        return _l5_cases(gen, device, want_causal)

    return cases


def _l5_cases(gen, device, want_causal: bool) -> list[Case]:
    cases = []
    for dtype in _dtypes(device):
        # each shape keeps its spread (the i-th of _attention_shapes gets SPREADS[i % 3]) when filtered
        shapes = [s + (SPREADS[i % len(SPREADS)] if s[3] > 1 else "normal",)
                  for i, s in enumerate(_attention_shapes(device, gen))]
        if want_causal:
            shapes = [s for s in shapes if s[5]] + [s for s in shapes if not s[5]][:1]
            shapes += [(1, 1, 50, 50, 16, True, "late"), (1, 1, 64, 33, 32, True, "normal")]
            if device == "cpu" and dtype != _dtypes(device)[0]:
                shapes = [s for s in shapes if s[2] > s[3]][:1] + shapes[:2]
        else:
            shapes = [s[:5] + (False, s[6]) for s in shapes]
        if device == "cpu" and dtype != _dtypes(device)[0]:
            shapes = shapes[:3]
        for b, h, n_q, n_k, d, causal, spread in shapes:
            label = (f"B={b} H={h} N_q={n_q} N_k={n_k} d={d} {dtype_name(dtype)} "
                     f"{'causal' if causal else 'full'}, {spread} scores")
            cases.append(Case(label, _l5_case(gen, device, dtype, b, h, n_q, n_k, d, causal, spread, label)))
        if dtype == _dtypes(device)[0]:
            n_q, n_k = torch_randint(gen, 20, 60), torch_randint(gen, 20, 60)
            label = (f"B=1 H=2 N_q={n_q} N_k={n_k} d=16 fp32 {'causal' if want_causal else 'full'}, normal "
                     "scores, called twice on the same q, k, v with new values in them")
            cases.append(Case(label, _l5_case(gen, device, dtype, 1, 2, n_q, n_k, 16, want_causal, "normal",
                                              label, repeat=True)))
        if dtype == _dtypes(device)[0]:
            n_q, n_k = torch_randint(gen, 20, 50), torch_randint(gen, 70, 140)
            label = (f"B=1 H=2 N_q={n_q} N_k={n_k} d=16 fp32 {'causal' if want_causal else 'full'}, extreme scores "
                     "(to about +-3000, each row's max in the last keys: exp overflows even float64 without the "
                     "running max)")
            cases.append(Case(label, _l5_case(gen, device, dtype, 1, 2, n_q, n_k, 16, want_causal, "extreme",
                                              label)))
        n_q, n_k = torch_randint(gen, 40, 90), torch_randint(gen, 40, 90)
        label = (f"B=1 H=2 N_q={n_q} N_k={n_k} d=16 {dtype_name(dtype)} {'causal' if want_causal else 'full'}, "
                 "shifted scores (every score near -200: a running max must start at -inf)")
        cases.append(Case(label, _l5_case(gen, device, dtype, 1, 2, n_q, n_k, 16, want_causal, "shifted",
                                          label)))
        n_k = 4096 if device == "cpu" else 16384
        label = (f"B=1 H=1 N_q=16 N_k={n_k} d=16 {dtype_name(dtype)} full, q = 0 and v near 1/3: the running "
                 "output summed over every key")
        cases.append(Case(label, _l5_case(gen, device, dtype, 1, 1, 16, n_k, 16, False, "canary", label)))
    if _no_tf32(device):
        import torch

        label = ("B=1 H=2 N_q=97 N_k=97 d=32 fp32 through Triton's interpreter (TF32 rounded as on an A100 "
                 "or H200)")
        cases.append(Case(label, _l5_case(gen, device, torch.float32, 1, 2, 97, 97, 32, want_causal, "normal",
                                          label), interpret=True))
    if want_causal:
        # early scores (each even row's max in its first key, every later block of keys hundreds lower; the odd
        # rows ordinary, so a wrong mask shows). Two shapes in one case, sizes from the seed without drawing from
        # the generator: fewer queries than keys (a loop bound shifted by N_k - N_q, the bottom-right diagonal,
        # walks past a top-left diagonal only there; N_q a multiple of 128, so that no block of queries of any
        # BLOCK_M ends in masked-off rows with keys after them), then more queries than keys, where past the
        # first 256 rows every row spans two blocks of keys or more, whatever the kernel's blocks, so a max that
        # goes down shows on every seed. Together less work than the square N = 512 they replace
        (n_q1, n_k1), (n_q2, n_k2) = _skip_shapes(gen, 256, 512, 320, 288)
        label = (f"B=1 H=1 N_q={n_q1} N_k={n_k1}, then N_q={n_q2} N_k={n_k2}, d=16 fp32 causal, early scores (each "
                 "even row's max in its first key, every later block far lower), your kernel run by Triton's "
                 "interpreter on the CPU: the key blocks it visits")
        cases.append(Case(label, _in_turn(_block_skip_case(gen, "cpu", n_q1, label, "early", n_k=n_k1),
                                          _block_skip_case(gen, "cpu", n_q2, label, "early", n_k=n_k2)),
                          interpret=True, device="cpu"))
        if device != "cpu":
            label = ("B=1 H=1 N=4096 d=16 fp32 causal, early scores: its values (graded) and its time "
                     "against full (information, not graded)")
            cases.append(Case(label, _block_skip_case(gen, device, 4096, label, "early")))
    else:
        # a long sequence of queries: how they are split over programs (L5.causal's N=512 case counts the same)
        n_q = 256 + torch_randint(gen, 0, 64)
        label = (f"B=1 H=1 N_q={n_q} N_k=256 d=16 fp32 full, your kernel run by Triton's interpreter on the CPU: "
                 "how the queries are split over programs")
        cases.append(Case(label, _l5_case(gen, "cpu", _torch().float32, 1, 1, n_q, 256, 16, False, "normal",
                                          label, programs=True), interpret=True, device="cpu"))
        if device != "cpu":
            label = ("B=1 H=1 N_q=64 N_k=600 d=16 fp32 full, your kernel run by Triton's interpreter on the CPU: "
                     "its blocks of keys")
            cases.append(Case(label, _l5_case(gen, "cpu", _torch().float32, 1, 1, 64, 600, 16, False, "normal",
                                              label), interpret=True, device="cpu"))
            # the CPU's long canary, interpreted: the one shape where the split-KV budget is far below the
            # scores (16 x 4096 against 32 splits of d + 2), so a kernel that stores S or P is refused here
            # too (an H100 accepted round 3's 25 with the interpreted cases on and only the two above)
            label = ("B=1 H=1 N_q=16 N_k=4096 d=16 fp32 full, q = 0 and v near 1/3, your kernel run by Triton's "
                     "interpreter on the CPU: what it stores")
            cases.append(Case(label, _l5_case(gen, "cpu", _torch().float32, 1, 1, 16, 4096, 16, False, "canary",
                                              label), interpret=True, device="cpu"))
        # more keys than the widest block of keys a kernel may take (256), sizes from the seed without drawing
        # from the generator (the cases before keep their inputs)
        n_q, n_k = 16 + gen.initial_seed() % 25, LARGEST_BLOCK_K + 4 + gen.initial_seed() % 70
        label = (f"B=1 H=1 N_q={n_q} N_k={n_k} d=16 fp32 full, early scores (to about +-3000, each even row's "
                 "max in its first key, every later block of keys hundreds lower)")
        cases.append(Case(label, _l5_case(gen, device, _torch().float32, 1, 1, n_q, n_k, 16, False, "early",
                                          label)))
        if device == "cpu":  # on the GPU the d = 128 case has 256 (query block, head) pairs
            # more (block of queries, head) pairs than a persistent grid has programs (one per multiprocessor),
            # whatever the block of queries (one block of at most 16 queries per head); sizes from the seed
            # without drawing from the generator
            n_q, n_k = 9 + gen.initial_seed() % 8, 10 + gen.initial_seed() % 29
            heads = H200_MULTIPROCESSORS // 2 + 3
            label = (f"B=2 H={heads} N_q={n_q} N_k={n_k} d=16 fp32 full, normal scores: more (block of queries, "
                     f"head) pairs than the GPU has multiprocessors ({H200_MULTIPROCESSORS})")
            cases.append(Case(label, _more_work_than_programs(
                _l5_case(gen, device, _torch().float32, 2, heads, n_q, n_k, 16, False, "normal", label),
                "(block of queries, head) pairs")))
    return cases


def _skip_shapes(gen, n_q_fewer, n_k_fewer, n_q_more, n_k_more, k_span=64) -> tuple[tuple[int, int], ...]:
    """The two shapes (N_q, N_k) of a skip case: fewer queries than keys (N_q kept, N_k up to ``k_span`` - 1
    more), then more queries than keys (both up to 31 more: ``n_q_more`` at least ``n_k_more`` + 32), sizes
    from the seed without drawing from the generator."""
    mixed = (gen.initial_seed() * 0x9E3779B1) % (1 << 32)  # neighbouring seeds, other sizes
    return ((n_q_fewer, n_k_fewer + (mixed >> 20) % k_span),
            (n_q_more + (mixed >> 8) % 32, n_k_more + (mixed >> 14) % 32))


def _l5_case(gen, device, dtype, b, h, n_q, n_k, d, causal, spread, label, repeat=False, programs=False):
    def run(runner):
        values = _attention_inputs(gen, device, dtype, b, h, n_q, n_k, d, spread)
        kinds = _attention_layouts(gen, 3, device, n_q, n_k)
        q, k, v = (runner.input(t, strides=_layout_strides(kind, t.shape)) for t, kind in zip(values, kinds))
        runner._attention_q, runner._attention_v, runner._attention_nq = q, v, n_q

        def values_pass(tensors):
            return all(r.passed for r in _l5_values(runner, *tensors, ""))

        results = _diagnosed(runner, len(set(kinds)) > 1, lambda: _l5_call(runner, q, k, v, ""),
                             lambda: _layout_diagnosis(runner, ("q", "k", "v"), values, kinds, values_pass))
        if repeat and all(r.passed for r in results):  # the same tensor objects, new contents
            for t, new in zip((q, k, v), _attention_inputs(gen, device, dtype, b, h, n_q, n_k, d, spread)):
                t.copy_(new)
            results += _l5_call(runner, q, k, v, " (second call: same q, k, v, new values)")
        return results

    def _l5_values(runner, q, k, v, second):
        """Call the function and compare o and lse with float64 (kept in runner._l5_got)."""
        import torch

        got, _ = runner.call(q, k, v, causal, names=("q", "k", "v"))
        if not isinstance(got, tuple) or len(got) != 2:
            return [CaseResult(label, "-", False, "return a tuple (o, lse)")]
        o, lse = runner._l5_got = got
        ref = _attention_reference(q, k, v, causal)
        bound_o, bound_lse = _forward_bounds(ref, v, dtype, n_k, d, canary=spread == "canary")
        name = dtype_name(dtype)
        tol_o = _bound("2 (u_out |o| + eta) + 2 (2 Delta + u_p + (N_k + d + 8) 2^-24) (P|V|)",
                       f"o rounded to {name}, scores off by at most Delta = (d + 2) 2^-24 scale (|Q||K|^T) "
                       "(fp32 products and sums), P rounded to the input type before P V, fp32 sums over "
                       "N_k keys; TF32 scores or a 16-bit running output exceed it")
        tol_lse = _bound("2 (Delta + (N_k + 8) 2^-24 + 2^-24 |lse|)",
                         "lse kept in fp32 from fp32 scores; TF32 scores, a 16-bit lse or one without the max "
                         "exceed it")
        results = [compare(label, "o" + second, o, ref[0], tol_o, scale=bound_o, dtype=dtype, device=device),
                   compare(label, "lse" + second, lse, ref[1], tol_lse, scale=bound_lse, dtype=torch.float32,
                           device=device)]
        if spread == "extreme":
            results = [_extreme_scores_message(r, t) for r, t in zip(results, (o, lse))]
        if spread == "early":
            results = [_early_scores_message(r, t) for r, t in zip(results, (o, lse))]
        return results

    def _l5_call(runner, q, k, v, second):
        results = _l5_values(runner, q, k, v, second)
        if len(results) != 2:
            return results
        o, lse = runner._l5_got
        if all(r.passed for r in results):
            results += runner.written_check("o", o) + runner.written_check("lse", lse)
        if all(r.passed for r in results):
            results += _key_blocks_check(runner, label, k, n_k, causal)
        if all(r.passed for r in results):
            results += _scratch_check(runner, label, (q, k, v), (o, lse), split_partials=not causal,
                                       causal=causal) or \
                _attention_dots_check(runner, label, b, h, n_q, n_k, d, causal) or \
                _launch_loop_check(runner, label, {"o": o}, "blocks of queries", "(cdiv(N_q, BLOCK_M), B x H)")
        if programs and all(r.passed for r in results):
            results += _query_programs_check(runner, label, q, k, n_q, n_k)
        return results

    return run


def _query_programs_check(runner, label, q, k, n_q, n_k) -> list[CaseResult]:
    """Under the interpreter, for a long sequence of queries: how they are split over programs. Each program
    holds one block of at most 128 queries (the rows its loads of q cover, halves merged: :func:`_held_rows`)
    and walks the keys once for it; a program that walks its head's blocks of queries one after another reads
    K once per block, and runs a head on one SM. Then the one pass over K and V (:func:`_one_pass_check`)."""
    trace = runner.trace
    if trace is None:
        return []
    if not _loaded_from(trace, q) or not _loaded_from(trace, k):
        return [CaseResult(label, "-", False,
                           "your kernel did not load q and k as the grader passed them (a copy of them?): the "
                           "grader reads how the queries are split over programs from the loads of q and k; pass "
                           "q, k and v to the kernel as they are (contiguous here)")]
    held = _held_rows(trace, q, k)
    if held > 128:
        return [CaseResult(label, "-", False,
                           f"one program of your kernel holds {held} queries at once (N_q = {n_q}), counted from "
                           "the rows of q it loads: a program keeps one block of queries on chip (BLOCK_M of 16 "
                           "to 128), and each block of queries gets a program of its own, a grid of "
                           "(cdiv(N_q, BLOCK_M), B x H), so that a long sequence spreads over the GPU's SMs; use "
                           "blocks of at most 128 queries")]
    return _walking_check(trace, label, q, k, n_q, n_k) or _one_pass_check(runner, label, k, n_k)


def _walking_check(trace, label, q, k, n_q, n_k) -> list[CaseResult]:
    """A program that walks several blocks of queries one after another (the distinct blocks of q it held,
    :func:`_runs`), reading all of K again for each: a head run on one SM. Asked before the pass count of
    :func:`_one_pass_check`, whose loads of K it also inflates: such a program makes one pass per block."""
    d = k.shape[-1]
    blocks: dict = {}  # (kernel, program): the distinct blocks of q the program held, one after another
    for kernel, program, loads in _program_loads(trace, {"q": q, "k": k}):
        held_blocks = {(min(load[1] for load in run), max(load[2] for load in run))
                       for run in _runs(loads) if run[0][0] == "q"}
        blocks[(kernel, program)] = held_blocks
    for launch in trace.launches:
        for name, *_ in launch.args:
            if not _same_memory(launch, name, k):
                continue
            for program, count in launch.per_program.get(name, {}).items():
                walked = blocks.get((launch.kernel, program), set())
                # a pass loads n_k d elements; one block of keys more is slack
                if len(walked) > 1 and count > n_k * d + min(n_k, LARGEST_BLOCK_K) * d:
                    rows = _covered_rows(sorted(walked))
                    return [CaseResult(
                        label, "-", False,
                        f"program {program} of your kernel {launch.kernel} walks {len(walked)} blocks of "
                        f"queries one after another ({rows} of the {n_q} queries) and reads K again for each "
                        f"({count / (n_k * d):.2g} times in all): give each block of queries a program of "
                        "its own, a grid of (cdiv(N_q, BLOCK_M), B x H), so that the blocks of a head run side "
                        "by side on the GPU's SMs, each reading K once")]
    return []


def _key_blocks_check(runner, label, k, n_k, causal=False) -> list[CaseResult]:
    """Where the interpreter counts them: K is loaded in blocks of keys, never all keys at once. The keys a load
    covers are read from its addresses, not from its shape (a (d, N_k) load of K transposed holds N_k keys).
    ``causal``: the case's mask (with fewer queries than keys, the last keys are seen by no query)."""
    return _key_width_check(runner, label, k, n_k) or \
        (_one_pass_check(runner, label, k, n_k, causal) if runner.trace is not None and n_k >= 512 else [])


def _key_width_check(runner, label, k, n_k) -> list[CaseResult]:
    """Where the interpreter counts them and N_k >= 512: no load of K covers all keys or more than
    LARGEST_BLOCK_K of them (the first half of :func:`_key_blocks_check`)."""
    trace = runner.trace
    if trace is None or n_k < 512:
        return []
    widest = _widest_rows(trace, k)
    if widest >= n_k or widest > LARGEST_BLOCK_K:
        return [CaseResult(label, "-", False,
                           f"one load of K in your kernel covers {widest} keys (N_k = {n_k}), whatever the shape "
                           "of its block: FlashAttention walks the keys in blocks (BLOCK_N of 16 to 128, at most "
                           f"{LARGEST_BLOCK_K}) with a running max and sum, so its tiles fit on chip whatever N_k "
                           "is")]
    return []


def _one_pass_check(runner, label, k, n_k, causal=False) -> list[CaseResult]:
    """Where the interpreter counts them: each program (a block of queries) loads each element of K once, and of
    V once: a first pass for the row max, then a second for the sum and the output, loads them twice."""
    trace = runner.trace
    if trace is None:
        return []
    trace = _with_derived_passes(trace)  # a walk of K * s (a loaded s) is a walk of K
    d = k.shape[-1]
    seen = _seen_keys(getattr(runner, "_attention_nq", None) or n_k, n_k, causal)
    for which, tensor in (("k", k), ("v", getattr(runner, "_attention_v", None))):
        if tensor is not None:
            missing = _uncovered(trace, label, which, tensor,
                                 "every key here is seen by a query" if seen is None else
                                 f"each of the first {seen} keys here is seen by a query", seen)
            if missing:
                return missing
    for which in ("k", "v"):
        tensor = k if which == "k" else getattr(runner, "_attention_v", None)
        if tensor is None:
            continue
        # each program's loads, plus those of every program of an earlier kernel whose stores it read: a first
        # kernel that finds the row max and a second that sums with it read K twice for one block of queries
        own: dict = {}
        for index, launch in enumerate(trace.launches):
            for name, _, _, _, _ in launch.args:
                if _rows_in(trace, launch, name, tensor) is not None:
                    for program, count in launch.per_program.get(name, {}).items():
                        own[(index << 32) | program] = own.get((index << 32) | program, 0) + count
        most = trace.through_launches(own)
        n_q = getattr(runner, "_attention_nq", None)
        total = _loaded_from(trace, tensor)
        whose = _whose(trace, which, tensor)
        # a pass loads n_k d elements (a few masked-off lanes less); one block of keys more is slack. Asked
        # first: a block of queries that reads K twice is two passes, whatever the total says
        if most > n_k * d + min(n_k, LARGEST_BLOCK_K) * d:
            q = getattr(runner, "_attention_q", None)
            # one program walking several blocks of queries reads K once per block: that, not a second pass,
            # is what to change
            walking = _walking_check(trace, label, q, k, n_q, n_k) if which == "k" and q is not None else []
            if walking:
                return walking
            return [CaseResult(label, "-", False,
                               f"one block of queries cost your kernels {most} loads of {whose} "
                               f"({most / (n_k * d):.2g} times each of the {n_k} x {d}), counting the loads of "
                               "every program of an earlier kernel whose results it read: FlashAttention reads "
                               "each block of keys once per block of queries, updating a running max, sum and "
                               "output as it goes (the online softmax); a first pass for the max, then a second "
                               f"for the sum, reads K twice, in one kernel or in two{_recast_note(trace)}")]
        # then the programs together (told after the passes, the bigger mistake): with a program per query
        # each reads K once, but N_q programs read it N_q times
        if n_q and total > (-(-n_q // 16) + 1) * n_k * d:
            return [CaseResult(label, "-", False,
                               f"your kernel loaded {total} elements of {whose} for {n_q} queries "
                               f"({total / (n_k * d):.2g} times each): FlashAttention loads a block of keys once "
                               "for a whole block of queries (BLOCK_M of 16 or more), not once per query")]
    return []


def _causal_pass_check(runner, label, q, k, v, n_k) -> list[CaseResult]:
    """With the top-left causal mask, after the blocks a kernel skips: the passes over K and V of each program
    counted against the keys its queries see (:func:`_causal_passes`), whatever N_k is. Memory a kernel filled
    with K's rows computed lane by lane (:func:`_with_derived`) is K, as a copy is: a walk of K scaled by a scale
    loaded from memory is one pass, not a walk of partial copies where a lane of K was 0."""
    trace = runner.trace
    if trace is None or q is None:
        return []
    trace = _with_derived(trace)
    d = k.shape[-1]
    for which, tensor in (("k", k), ("v", v)):
        if tensor is None:
            continue
        own: dict = {}
        for index, launch in enumerate(trace.launches):
            for name, *_ in launch.args:
                if _rows_in(trace, launch, name, tensor) is not None:
                    for program, count in launch.per_program.get(name, {}).items():
                        own[(index << 32) | program] = own.get((index << 32) | program, 0) + count
        twice = _causal_passes(trace, own, q, tensor, n_k, which == "v")
        if twice:
            loads, program, seen = twice
            return [CaseResult(label, "-", False,
                               f"one block of queries cost your kernels {loads} loads of {_whose(trace, which, tensor)}"
                               f" ({loads / (seen * d):.2g} times each of the {seen} x {d} its queries can see under "
                               f"the causal mask, program {program}), counting the loads of every program of an "
                               "earlier kernel whose results it read: FlashAttention reads each block of keys once "
                               "per block of queries, updating a running max, sum and output as it goes (the online "
                               "softmax), with the causal mask as without it; a first pass for the max, then a "
                               "second for the sum, reads K twice, in one kernel or in two")]
    return []


def _causal_passes(trace, own: dict, q, tensor, n_k: int, latest: bool = False):
    """With the top-left causal mask, the passes over ``tensor`` (K or V) of each program that holds queries. A
    program's blocks of queries are read from the rows of q that reach the products its loads of ``tensor`` reach
    (:func:`_query_walks`), not from the order of its loads (keys loaded before q, two blocks of q loaded before
    either walk): the loads whose rows of q overlap walk one block of queries (one query row more in one of them
    makes no block of its own; a block loaded in halves whose products share each tile is one block), loads
    with rows of q apart walk blocks apart (blocks i and n-1-i of a load-balanced program). Each block's keys may
    be loaded once, plus a block of B keys (B the program's widest load of ``tensor``); a second walk to the
    same diagonal for the same rows is a second pass. With the programs of earlier kernels whose results it
    read (``own`` as in :meth:`Trace.through_launches`: a max kernel, then a sum kernel), the loads may not pass
    one walk to the diagonal of each block: its last row i sees i + 1 keys, rounded up to B, plus a block. A
    walk past the diagonal loads distinct keys and is :func:`_skip_check`'s to tell. Returns ``(loads, "program
    p of your kernel k", keys seen)`` for the first such program, else None."""
    if q is None or q.dim() < 2 or tensor.dim() < 2:
        return None
    n_q, d = q.shape[-2], tensor.shape[-1]
    info: dict = {}  # node: [widest block of keys, whether it loaded q]
    for index, launch in enumerate(trace.launches):
        names = {}
        for name, *_ in launch.args:
            for which, t in (("q", q), ("k", tensor)):
                rows = _rows_in(trace, launch, name, t)
                if rows is not None:
                    names[name] = (which, rows)
        if not names:
            continue
        for at, (name, program, low, high) in enumerate(launch.spans):
            if name not in names:
                continue
            which, rows = names[name]
            node = info.setdefault((index << 32) | program, [0, False])
            if which == "q":
                node[1] = True
            else:
                node[0] = max([node[0]] + [last - first + 1
                                           for first, last in _span_blocks(launch, at, rows, low, high)])
    walks = _query_walks(trace, q, tensor, latest)
    found: dict = {}

    def ancestors(node):
        if node not in found:
            found[node] = set()
            launch = trace.launches[node >> 32]
            result = set()
            for source in launch.sources.get(node & 0xFFFFFFFF, ()):
                result.add(source)
                result |= ancestors(source)
            found[node] = result
        return found[node]

    for node in sorted(walks):
        block = info.get(node, [0, False])[0]
        if block <= 0 or node not in own:
            continue
        mine = own[node]
        # an earlier program counts where it held queries too (a max kernel), not a copy of K it made
        earlier = sum(own.get(a, 0) for a in ancestors(node) if a in info and info[a][1])
        # the loads whose rows of q overlap walk one block of queries (held again, or with a row more)
        parent = list(range(len(walks[node])))

        def root(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        high, holder = None, None
        for (low, last), at in sorted((span, at) for at, (rows, _) in enumerate(walks[node]) for span in rows):
            if high is not None and low <= high:
                parent[root(at)] = root(holder)
            else:
                high, holder = last, at
            high = max(high, last)
        joined: dict = {}  # block: [rows of q, keys]
        for at, (rows, keys) in enumerate(walks[node]):
            entry = joined.setdefault(root(at), [[], set()])
            entry[0] += rows
            for first, last in keys:
                entry[1].update(range(first, last + 1))
        allowed = distinct = 0
        lasts = []
        for rows, keys in joined.values():
            first, last = _judged_against("k", rows)  # the block that ends first (a far decoy row is none)
            last = last % n_q if last // n_q == first // n_q else n_q - 1
            lasts.append(last)
            distinct += len(keys) + block
            allowed += max(-(-min(n_k, last + 1) // block) * block + block, len(keys) + block)
        seen = min(n_k, max(lasts) + 1)
        where = f"{node & 0xFFFFFFFF} of your kernel {trace.launches[node >> 32].kernel}"
        if mine > distinct * d or (earlier and mine + earlier > allowed * d):
            return mine + earlier, where, seen
    return None


def _query_walks(trace, q, k, latest: bool = False) -> dict:
    """The walks of each program over ``k`` (K or V, or a copy of them), read from the values: ``{launch index
    << 32 | program: [(rows of q, rows of k) per load of k with active lanes]}``, each a list of (first, last)
    rows. The rows of q of a load are those of the tl.dot products of its own (its value among their operands,
    through any arithmetic, :attr:`Launch.dot_loads`, with no load of k made between other tl.dot: the tile of
    keys in ``q @ k^T``, the tile of values in ``p @ v``; not a later product its value reached through a running
    max) that took rows of q, each load of q as the blocks of rows its active lanes cover (less a wrap,
    :func:`_unwrapped`); every row of q in such a product counts (``q + 0 * far`` holds the far rows too), but
    for V (``latest``) only the latest load of q in it (p carries, through the running max, the blocks of
    queries held before). A load with no such product takes the block :func:`_paired_visits` judges it against
    (a block of keys loaded ahead and never multiplied, a program without tl.dot), or none."""
    import types

    out: dict = {}
    heads = q.shape[-2]
    for index, launch in enumerate(trace.launches):
        names = {name: which for name, *_ in launch.args for which, tensor in (("q", q), ("k", k))
                 if _rows_in(trace, launch, name, tensor) is not None}
        if "k" not in names.values():
            continue
        order: dict = {}  # as _paired_visits lists the visits: program by program, each in order
        for at, (name, program, *_) in enumerate(launch.visits):
            if name in names:
                order.setdefault(program, []).append(at)
        one = types.SimpleNamespace(launches=[launch], images=getattr(trace, "images", ()),
                                    owners=getattr(trace, "owners", ()))
        paired = _paired_visits(one, q, k)
        visits = [at for ats in order.values() for at in ats]
        if len(visits) != len(paired):
            continue
        by_index = dict(zip(visits, paired))
        reached: dict = {}  # visit of k: the rows of q of every product of its own it reached
        for program, loads in launch.dot_loads:
            held = sorted(at for at in loads if at in by_index and by_index[at][0] == "q"
                          and by_index[at][4] is not None)
            if latest:  # V: the latest load of q only (a running max carries the blocks held before it)
                held = held[-1:]
            taken = [block for at in held for block in _unwrapped(by_index[at][7][0], heads)]
            walked = [at for at in loads if at in by_index and by_index[at][0] == "k"]
            if taken:
                for at in walked:
                    # a product of this load's own: every load of k in it made between the same two tl.dot (a
                    # tile loaded in halves), not a later product its value reached through a running max
                    if all(by_index[other][6] == by_index[at][6] for other in walked):
                        reached.setdefault(at, []).extend(taken)
        for at, (which, _, program, _, active, block, _, covered) in by_index.items():
            if which != "k" or active is None:
                continue
            rows = reached.get(at) or ([block] if block is not None else [])
            if rows and covered[0]:
                out.setdefault((index << 32) | program, []).append((rows, list(covered[0])))
    return out


def _launch_loop_check(runner, label, outputs: dict, blocks: str, grid: str) -> list[CaseResult]:
    """Under the interpreter: a kernel launched again and again in one call, each launch writing a head's rows of
    an output (``outputs``: name to tensor, (..., N, d)) with one or two programs: a Python loop over the blocks
    of a head (``blocks``), a launch each, on a grid of one program per head, runs a head's blocks one after
    another, as one program walking them would; each launch alone looks right. A head written by at least 3
    launches of one kernel, 3 or more of them with fewer than half as many programs, is refused (whatever the
    widest: one wide launch of placeholders beside the loop hides nothing); a loop
    over heads or batches (each head written by one launch) and kernels launched once each pass."""
    import numpy as np

    trace = runner.trace
    if trace is None:
        return []
    for what, out in outputs.items():
        if out is None or out.dim() < 2 or out.numel() == 0:
            continue
        n = out.shape[-2]
        dims = sorted(((st, i) for i, (size, st) in enumerate(zip(out.shape, out.stride())) if size > 1),
                      reverse=True)
        heads: dict = {}  # (kernel, head): {launch index: (programs that wrote the head's rows, those kept)}
        # the programs that wrote the values out holds (through torch's copies of what they wrote: a returned
        # o.clone() was computed by the programs that wrote o; an atomic add of 0 writes nothing)
        written = _out_writes(trace, out)
        kept = _surviving_writes([(addr, prog) for _, addr, prog in written])
        for index, ((launch, addr, prog), survives) in enumerate(zip(written, kept)):
            offset = (addr.astype(np.int64) - out.data_ptr()) // out.element_size()
            index_of = [np.zeros_like(offset) for _ in out.shape]
            for stride, i in dims:
                index_of[i], offset = np.divmod(offset, stride)
            row = np.zeros_like(offset)
            for i in range(out.dim() - 1):
                row = row * out.shape[i] + index_of[i]
            for head in np.unique(row // n).tolist():
                mine = row // n == head
                programs = int(np.unique(prog[mine]).size)
                heads.setdefault((launch.kernel, head), {})[index] = (programs,
                                                                      int(np.unique(prog[mine & survives]).size))
        for (kernel, head), per_launch in sorted(heads.items(), key=lambda item: -len(item[1])):
            launches = len(per_launch)
            # the launches with few programs on the head, whatever the widest, counting every write or the writes
            # the output keeps (a wide launch of placeholders that the loop's launches overwrite hides nothing)
            narrow = [programs if 2 * programs < launches else kept for programs, kept in per_launch.values()
                      if 2 * programs < launches or 0 < 2 * kept < launches]
            if launches >= 3 and len(narrow) >= 3:
                which = "each launch" if len(narrow) == launches else f"{len(narrow)} of those launches"
                wide = ("" if len(narrow) == launches and all(kept == programs for programs, kept in
                                                                per_launch.values()) else
                        " (a wide launch whose programs write values that later launches overwrite does not change "
                        "that: what counts is the programs that compute the values kept)")
                return [CaseResult(label, "-", False,
                                   f"your function launched your kernel {kernel} {launches} times in one call to "
                                   f"write {what}, {which} with {max(narrow)} program(s) or fewer on a head's rows: "
                                   f"a Python loop of launches runs the {blocks} of a head one after another, as "
                                   f"one program walking them would{wide}. Launch the kernel once, on a grid of {grid}, whose programs cover the "
                                   f"{blocks}, so that they run at the same time on the GPU's multiprocessors")]
    return []


def _whose(trace, which: str, tensor) -> str:
    """``which`` (a tensor's name), and the copies of it the reader's function made where it made any."""
    if any(image.owner is tensor for image in getattr(trace, "images", ())):
        return f"{which} (counting the copy your function made of it: its loads are loads of {which})"
    return which


def _uncovered(trace, label, which, tensor, why, per_head=None) -> list[CaseResult]:
    """A failure where the loads of ``tensor`` (or of the copies of it the reader's function made) leave one of
    its rows unread, though ``why`` says every row is needed: what the grader counts (blocks, passes, skipped
    blocks) would otherwise be counted on one token load while the work reads something else. ``per_head``: the
    rows of each head that are needed, where fewer than all (the keys some query sees under a top-left causal
    mask: min(N_q, N_k), :func:`_seen_keys`)."""
    rows = tensor.numel() // max(1, tensor.shape[-1])
    heads = rows // max(1, tensor.shape[-2]) if tensor.dim() > 2 else 1
    needed = rows if per_head is None else heads * min(per_head, tensor.shape[-2])
    covered = _covered_by_loads(trace, tensor)
    if covered >= needed:
        return []
    kind = "keys" if which in ("k", "v") else "queries"
    every = "every row" if needed == rows else f"each of the first {needed // heads} rows of a head"
    return [CaseResult(label, "-", False,
                       f"your kernels loaded {covered} of the {rows} rows of {which} ({heads} head(s) of "
                       f"{tensor.shape[-2]} {kind}), counting their loads of {which} itself and of any copy your "
                       f"function made of it (clone, .contiguous(), .to(), copy_): {why}, so {every} must be "
                       f"loaded. Load {which} in your kernel from the tensor you were given (or from a copy of "
                       "it), block by block, not from memory a kernel of yours wrote")]


def _seen_keys(n_q: int, n_k: int, causal: bool) -> int | None:
    """The keys of a head that some query sees: all of them, or with the top-left causal mask the first
    min(N_q, N_k) (query i sees keys j <= i): with fewer queries than keys, the last N_k - N_q keys are seen by
    none and a kernel that skips hidden blocks never loads them. None where every key is seen."""
    return min(n_q, n_k) if causal and n_q < n_k else None


#: The most splits of the keys whose partials L5.forward's scratch budget holds (see :func:`_scratch_check`).
SPLIT_KV_MOST_SPLITS = 32
#: The smallest block of keys a split walks: tl.dot's smallest dimension.
SPLIT_KV_SMALLEST_BLOCK = 16


def _split_bound(n_k: int) -> int:
    """The splits of a split-KV walk over ``n_k`` keys whose partials the scratch budget holds: one per block of
    :data:`SPLIT_KV_SMALLEST_BLOCK` keys (a split with no keys has nothing to add), at most
    :data:`SPLIT_KV_MOST_SPLITS`."""
    return max(1, min(-(-n_k // SPLIT_KV_SMALLEST_BLOCK), SPLIT_KV_MOST_SPLITS))


def _scratch_check(runner, label, inputs, outputs, split_partials=False, causal=False) -> list[CaseResult]:
    """Under the interpreter: what the kernels store to memory that is neither an input nor an output (a
    scratch buffer) stays small: O(N d), never the N_q x N_k scores, probabilities or dS that FlashAttention
    keeps on chip; the rest of an output's storage (a buffer larger than the output it returns) counts as
    scratch. Plain stores count every element stored; atomics (an atomic add onto zeros writes as well
    as a store) count the distinct elements they update in a launch, so dQ accumulated by every block of keys
    into one fp32 buffer counts once. Budget: 1.5 times the outputs' elements (an fp32 accumulator of dQ
    fits), plus 4096; a forward (``split_partials``) may also keep a split-KV (Flash-Decoding) walk's partials,
    each split's unnormalised output, max and sum of each query in fp32: S B H N_q (d + 2) more, S the splits
    of :func:`_split_bound` (one per block of 16 keys, at most 32). The rule is by size, not by what was stored
    (a score tile and a partial are both fp32 lanes): a split's partials of a query are d + 2 values, 16 keys'
    scores are 16, so where d >= 14 one split per 16 keys would hold more than the scores themselves; the cap
    of 32 splits keeps the budget under a quarter of the scores in the one case that tells them apart by size,
    L5.forward's N_q = 16, N_k = 4096, d = 16 (32 x 18 = 576 values a query against 4096 scores; 16384 keys on
    a GPU), so a kernel that stores a quarter of S or P or more is refused there. The split budget is given
    only in L5's full (not causal) cases (the CPU's causal cases are too short to tell partials from a causal
    half of P). The message says what was stored, from what each stored value was computed
    (:attr:`gpuperf.grading.algorithm.Launch.stored_from`): partial outputs (from Q, K and V) or scores,
    probabilities and row statistics (from Q and K)."""
    trace = runner.trace
    if trace is None:
        return []
    tensors = [t for t in list(inputs) + list(outputs) if hasattr(t, "untyped_storage")]
    stored = from_three = 0
    for launch in trace.launches:
        for name, *_ in launch.args:
            # within an input or an output itself: the rest of an output's storage (a buffer allocated larger
            # than the output it returns) is scratch like any other
            if not any(_within(launch, name, t) for t in tensors):
                stored += launch.stored.get(name, 0) + getattr(launch, "atomic_written", {}).get(name, 0)
                # stored values computed from three tensors or more (q, k and v: P V, a split's output)
                from_three += sum(n for kinds, n in getattr(launch, "stored_from", {}).get(name, {}).items()
                                  if kinds >= 3)
    # a copy of an input that a kernel of the reader's made (its own .contiguous()) is that input, not scratch:
    # its copy stores count up to the elements it holds (copying an input again and again is scratch); so is
    # an input's rows computed lane by lane (K times a scale loaded from memory: :func:`_derived_images`, which
    # maps the copies too)
    made = _derived_images(trace) or [image for image in getattr(trace, "images", ()) if image.after >= 0]
    stored -= sum(min(image.copies, int((image.rows >= 0).sum()), image.owner.numel())
                  for image in made if image.after >= 0 and any(image.owner is t for t in inputs))
    held = sum(t.numel() for t in outputs if hasattr(t, "numel"))
    budget = int(1.5 * held) + 4096
    q, k = inputs[0], inputs[1]
    b, h, n_q, d = q.shape
    n_k = k.shape[-2]
    splits = _split_bound(n_k)
    partials = splits * b * h * n_q * (d + 2) if split_partials else 0
    budget += partials
    if stored > budget:
        # the scores a query sees (with the top-left causal mask, key j <= query i): the message's measure
        scores = b * h * (sum(min(i + 1, n_k) for i in range(n_q)) if causal else n_q * n_k)
        seen = "the visible (causal) part of the " if causal else "the "
        allowed = ("1.5 times the outputs plus 4096" +
                   (f", plus {partials} for the partials of a split-KV walk (up to {splits} splits of each "
                    f"query's unnormalised output, max and sum in fp32: one split per block of "
                    f"{SPLIT_KV_SMALLEST_BLOCK} keys, at most {SPLIT_KV_MOST_SPLITS})" if split_partials else ""))
        # what was stored: partial outputs (computed from q, k and v) or values computed from q and k only
        from_two = stored - min(from_three, stored)
        if split_partials and from_three and from_two < scores // 4:
            kept = stored / max(b * h * n_q * (d + 2), 1)
            what = (f"{min(from_three, stored)} of them computed from Q, K and V (the partial outputs of a "
                    f"split-KV walk: about {kept:.0f} splits' worth of each query's output, max and sum, counted "
                    f"together) and {from_two} from Q and K only (scores, probabilities or row maxima and sums), "
                    f"fewer than a quarter of the {scores} scores. Use at most {splits} splits here: at most one "
                    f"per block of {SPLIT_KV_SMALLEST_BLOCK} keys and at most {SPLIT_KV_MOST_SPLITS}, past which "
                    "the grader cannot tell "
                    "a split-KV walk's partials from a kernel that stores part of the N_q x N_k scores")
        elif stored >= scores // 4:
            what = (f"as many as {stored / scores:.0%} of {seen}B x H x N_q x N_k scores ({scores}), as a kernel "
                    "that stores the scores or probabilities (S or P" + ("" if split_partials else ", or dS")
                    + "), whole or in part, does" + (f" ({from_two} of them computed from Q and K only, as "
                                                      "scores, probabilities and row statistics are)"
                                                      if split_partials else "")
                    + ". FlashAttention never writes the N_q x N_k scores, "
                    "probabilities or dS to memory; each tile lives on chip from its product to its use")
        else:
            what = (f"{stored / max(held, 1):.1f} times the outputs' elements, fewer than {seen}N_q x N_k "
                    f"scores ({scores}) but more than the O(N d) values (a row's statistics"
                    + (", split-KV partials" if split_partials else ", an fp32 accumulator of dQ")
                    + ") that leave the chip in FlashAttention, which never writes the N_q x N_k scores, "
                    "probabilities or dS to memory")
        return [CaseResult(label, "-", False,
                           f"your kernels stored {stored} elements (plain stores and atomics) to memory that is "
                           f"neither an input nor an output nor a copy of an input (the outputs hold {held}; "
                           f"the budget is {budget}: {allowed}): {what}")]
    return []


def _attention_dots_check(runner, label, b, h, n_q, n_k, d, causal) -> list[CaseResult]:
    """Under the interpreter: the score and P V products are tile products (tl.dot), each doing its d
    multiply-adds per visible (query, key) pair (see :func:`_tile_products_check`)."""
    return _tile_products_check(runner, label, b, h, n_q, n_k, d, causal, _FORWARD_PRODUCTS)


#: The tile products of attention, as a learner writes them.
_FORWARD_PRODUCTS = ("S = Q K^T", "O += P V")
_BACKWARD_PRODUCTS = ("S = Q K^T", "dP = dO V^T", "dV += P^T dO", "dK += dS^T Q", "dQ += dS K")


def _tile_products_check(runner, label, b, h, n_q, n_k, d, causal, products) -> list[CaseResult]:
    """Under the interpreter: each product of ``products`` is a tile product (tl.dot) that does its d
    multiply-adds for every visible (query, key) pair. The trace groups the dots by what they multiply (the
    tensors each operand was computed from: (q) and (k) for the scores, (q, k, lse) and (dO) for dV, ...; a
    copy of one of the grader's tensors, made by torch or by a kernel of the reader's (:class:`Image`), counts
    as that tensor, and the reader's own memory as one tensor per kernel argument, the same in every launch), so one
    product done with a dot cannot stand in for another done as a broadcast and a sum. Padding counts only up
    to the problem: a dot's multiply-adds are counted over at most N_q queries, N_k keys and d dimensions
    (:func:`_real_macs`), so tiles far larger than a short sequence do not cover the missing products."""
    trace = runner.trace
    if trace is None:
        return []
    visible = sum(min(i + 1, n_k) for i in range(n_q)) if causal else n_q * n_k
    need = d * visible * b * h
    # A tensor of the grader's, or a copy of one (made by torch or by a kernel of the reader's), is that tensor:
    # its first byte stands for the slices and copies of it, however many launches take them
    grader: dict = {}
    for launch in trace.launches:
        for name, start, *_ in launch.args:
            owner = next((t for t in getattr(trace, "owners", ()) if _within(launch, name, t)), None)
            owner = owner if owner is not None else next(
                (image.owner for image in getattr(trace, "images", ()) if image.holds(launch, name)), None)
            if owner is not None:
                grader[start] = owner.data_ptr()
    # One argument of one kernel is one tensor however many launches it takes: a launch per head passes each
    # head's slice (another first byte each time), and the lowest of them stands for them all (memory of the
    # reader's own only: a helper kernel launched on q and on k does not make them one tensor)
    firsts: dict = {}
    for launch in trace.launches:
        for name, start, *_ in launch.args:
            if start not in grader:
                firsts.setdefault((launch.kernel, name), set()).add(start)
    lowest = {start: min(group) for group in firsts.values() if len(group) > 1 for start in group}

    def tensor_of(address):
        return grader.get(address, lowest.get(address, address))

    groups: dict = {}
    for pair, shapes in trace.products().items():
        key = frozenset(frozenset(tensor_of(a) for a in side) for side in pair)
        groups.setdefault(key, []).extend(shapes)
    done = sorted((sum(_real_macs(shape, (n_q, n_k, d)) for shape in shapes)
                   for shapes in groups.values()), reverse=True)
    covered = sum(1 for macs in done if macs >= need)
    if covered >= len(products):
        return []
    names = ", ".join(products)
    return [CaseResult(label, "-", False,
                       f"the products of a tile ({names}) should each be a tile product with tl.dot, doing its d "
                       f"multiply-adds for every visible pair of a query and a key ({need} here): yours does "
                       f"{covered} of {len(products)} as tl.dot. A broadcast multiply and a sum (or a dot on "
                       "padding only) never reaches the tensor cores: multiply the tiles with tl.dot, in every "
                       "block of queries against each block of keys")]


def _real_macs(shape, extents) -> int:
    """The multiply-adds of one (M, K, N) dot that can fall on real data: each side counted up to the real
    sizes (N_q, N_k, d), whichever side each is (a dot's operands may be transposed)."""
    import itertools

    return max(math.prod(min(side, real) for side, real in zip(shape, order))
               for order in itertools.permutations(extents))


def _same_storage(launch, name, tensor) -> bool:
    """Argument ``name`` of ``launch`` lies in ``tensor``'s storage (a view of it, at any offset)."""
    base = _raw_storage_ptr(tensor)
    size = tensor.untyped_storage().nbytes()
    for n, start, end, _, _ in launch.args:
        if n == name:
            return base <= start < base + size
    return False


def _within(launch, name, tensor) -> bool:
    """Argument ``name`` of ``launch`` spans only memory of ``tensor`` itself (the tensor or a view inside it),
    not the rest of its storage."""
    start = tensor.data_ptr()
    end = start + (sum((s - 1) * st for s, st in zip(tensor.shape, tensor.stride())) + 1) * tensor.element_size()
    for n, a, b, _, _ in launch.args:
        if n == name:
            return start <= a and b <= end
    return False


def _same_memory(launch, name, tensor) -> bool:
    for n, start, _, es, _ in launch.args:
        if n == name:
            return start == tensor.data_ptr() and es == tensor.element_size()
    return False


def _block_skip_case(gen, device, n_q, label, spread="normal", n_k=None):
    """The causal forward of one head (contiguous inputs) on N_q queries and N_k keys (default N_q): its values,
    and under the interpreter the key blocks each program visits (:func:`_skip_check`)."""
    n_k = n_q if n_k is None else n_k

    def run(runner):
        import torch

        q, k, v = (runner.input(t) for t in _attention_inputs(gen, device, torch.float32, 1, 1, n_q, n_k, 16,
                                                              spread))
        runner._attention_q, runner._attention_v, runner._attention_nq = q, v, n_q
        got, _ = runner.call(q, k, v, True, names=("q", "k", "v"))
        causal_trace = runner.trace
        if not isinstance(got, tuple) or len(got) != 2:
            return [CaseResult(label, "-", False, "return a tuple (o, lse)")]
        ref = _attention_reference(q, k, v, True)
        bound_o, bound_lse = _forward_bounds(ref, v, torch.float32, n_k, 16)
        tol = _bound("as in the other cases", "fp32")
        results = [compare(label, "o", got[0], ref[0], tol, scale=bound_o, dtype=torch.float32, device=device),
                   compare(label, "lse", got[1], ref[1], tol, scale=bound_lse, dtype=torch.float32,
                           device=device)]
        if spread == "early":
            results = [_early_scores_message(r, t) for r, t in zip(results, got)]
        if not all(r.passed for r in results):
            return results
        if causal_trace is None:
            runner.notes.append(_causal_timing_note(runner, q, k, v))
            return results
        results += _key_blocks_check(runner, label, k, n_k, True)
        if all(r.passed for r in results):
            results = results + _scratch_check(runner, label, (q, k, v), got, causal=True)
        if not all(r.passed for r in results):
            return results
        return results + (_skip_check(causal_trace, label, q, k, got[0]) or
                          _causal_pass_check(runner, label, q, k, v, n_k))

    return run


def _in_turn(*runs):
    """One case that runs ``runs`` (each a case's run) one after another on the same runner, up to the first
    that fails: the skip cases take one shape with fewer queries than keys and one with more, in one case (the
    time of one)."""

    def run(runner):
        results: list = []
        for one in runs:
            results += one(runner)
            if not all(r.passed for r in results):
                break
        return results

    return run


def _row_of(tensor, address: int) -> int:
    """The row of ``tensor``'s element at byte ``address``: its index over every dimension but the last, counted
    as in a contiguous tensor ((b H + h) N + n for a (B, H, N, d) tensor), whatever the strides. An address
    outside the tensor gives a row outside it."""
    offset = (address - tensor.data_ptr()) // tensor.element_size()
    index = [0] * tensor.dim()
    for stride, i in sorted(((st, i) for i, (size, st) in enumerate(zip(tensor.shape, tensor.stride()))
                             if size > 1), reverse=True):
        index[i], offset = divmod(offset, stride)
    row = 0
    for i in range(tensor.dim() - 1):
        row = row * tensor.shape[i] + index[i]
    return row


def _span_blocks(launch, index: int, rows, low: int, high: int) -> list:
    """The blocks of rows ((first, last) each, merged) that load ``index`` of ``launch`` covered with its active
    lanes (:attr:`Launch.spans`, :attr:`Launch.span_runs`), through ``rows`` (:func:`_rows_in`)."""
    runs = getattr(launch, "span_runs", {}).get(index)
    if runs is None:
        return [tuple(sorted((rows(low), rows(high))))]
    return _merged_spans(tuple(sorted((rows(a), rows(b)))) for a, b in runs)


def _rows_spanned(blocks, n: int) -> int:
    """The rows a load (or a run of loads) held, from the blocks of rows it covered: from its first row to its
    last, or, where its blocks are a tile wrapped past the end of its head of ``n`` rows (:func:`_unwrapped`: two
    blocks, one at the head's first row and one ending at its last), the shorter way round the head (a tile
    whose rows past N were taken modulo N, ``rows % N``, or clamped to the head's first row, and loaded
    unmasked: the tile it walks, not the whole head). Lanes at a head's first and last rows beside a block (three
    blocks) are no wrap: the load holds every row between. Never fewer than the rows it covered."""
    blocks = _merged_spans(blocks)
    span = blocks[-1][1] - blocks[0][0] + 1
    if len(blocks) != 2 or n <= 0 or len(_unwrapped(blocks, n)) == len(blocks):
        return span
    return n - (blocks[1][0] - blocks[0][1] - 1)


def _widest_rows(trace, tensor) -> int:
    """The most rows of ``tensor`` one load covered, from its lowest to its highest active row, whatever the
    shape of the block (a (d, N) load of K transposed covers N keys), or the shorter way round a head where its
    rows wrap (:func:`_rows_spanned`)."""
    widest = 0
    n = tensor.shape[-2] if tensor.dim() >= 2 else 0
    for launch in trace.launches:
        for name, *_ in launch.args:
            rows = _rows_in(trace, launch, name, tensor)
            if rows is not None:
                widest = max([widest] + [_rows_spanned(_span_blocks(launch, index, rows, low, high), n)
                                         for index, (a, _, low, high) in enumerate(launch.spans) if a == name])
    return widest


def _program_loads(trace, tensors: dict) -> list:
    """Every program's loads of ``tensors`` (which: tensor) in the order it made them: a list of (kernel,
    program, loads), each load (which, first row, last row, dot, blocks) with rows from :func:`_row_of`, ``dot``
    true when a tl.dot of the program ran since its previous load of these tensors, and ``blocks`` the blocks of
    rows its active lanes covered (:func:`_span_blocks`)."""
    import bisect

    out = []
    for launch in trace.launches:
        names = {name: (which, rows) for name, *_ in launch.args for which, tensor in tensors.items()
                 if tensor is not None and (rows := _rows_in(trace, launch, name, tensor)) is not None}
        if not names:
            continue
        marks: dict = {}
        for program, at in launch.dot_marks:
            marks.setdefault(program, []).append(at)
        loads: dict = {}
        previous: dict = {}
        for index, (name, program, low, high) in enumerate(launch.spans):
            if name not in names:
                continue
            which, rows = names[name]
            at = marks.get(program, [])
            dot = bisect.bisect_right(at, index) > bisect.bisect_right(at, previous.get(program, -1))
            previous[program] = index
            first, last = sorted((rows(low), rows(high)))
            loads.setdefault(program, []).append((which, first, last, dot,
                                                  _span_blocks(launch, index, rows, low, high)))
        out += [(launch.kernel, program, program_loads) for program, program_loads in loads.items()]
    return out


def _runs(loads) -> list:
    """A program's loads cut where it turns from one tensor to the other: the block it holds (a block loaded in
    halves is one run), then the run of tiles it walks against it."""
    runs: list = []
    for load in loads:
        if runs and runs[-1][0][0] == load[0]:
            runs[-1].append(load)
        else:
            runs.append([load])
    return runs


def _held_rows(trace, q, k) -> int:
    """The most rows of q a program held at once: in a run of its loads of q (between loads of k), each load from
    its first row to its last, or the shorter way round a head (:func:`_rows_spanned`), and loads whose rows
    touch or overlap merged (a block loaded in halves is one block). Loads of rows apart stay apart: a program
    that takes blocks i and n-1-i of a head in turn, loading both first (causal load balancing), holds two
    blocks, not every row between them (round 17's h01)."""
    n = q.shape[-2]
    held = 0
    for _, _, loads in _program_loads(trace, {"q": q, "k": k}):
        for run in _runs(loads):
            if run[0][0] != "q":
                continue
            spans = []
            for load in run:
                blocks = _merged_spans(load[4])
                if not blocks:
                    continue
                rows = _rows_spanned(blocks, n)
                low, high = blocks[0][0], blocks[-1][1]
                if rows < high - low + 1:  # a wrapped tile: the shorter way round, alone
                    held = max(held, rows)
                else:
                    spans.append((low, high))
            for low, high in _merged_spans(spans):
                held = max(held, high - low + 1)
    return max(held, _multiplied_rows(trace, q, k))


def _multiplied_rows(trace, q, k) -> int:
    """The most rows of q a program multiplied by one block of keys it loaded: for each load of k, the rows (active
    lanes) of every load of q whose values reached one operand of a tl.dot whose other operand this load's value
    reached (:attr:`Launch.dot_operand_loads`), counted row by row whatever their order or the gaps between them.
    A program that keeps several blocks of queries and walks the keys once for all of them multiplies each tile
    of keys by all of them (round 18's 12: three blocks of 127 rows and the two rows between them, loaded apart);
    one that takes blocks in turn (round 17's h01, a persistent grid) multiplies each tile by one block, also
    where its running max is carried from block to block (that max reaches ``p`` of ``p @ v`` beside the tile of
    k, on the same side of the product: no product of those rows with the tile)."""
    most = 0
    for launch in trace.launches:
        names = {name: (which, rows) for name, *_ in launch.args for which, tensor in (("q", q), ("k", k))
                 if (rows := _rows_in(trace, launch, name, tensor)) is not None}
        dot_loads = getattr(launch, "dot_operand_loads", ())
        if not names or not dot_loads:
            continue
        visits = launch.visits
        kinds: dict = {}  # visit index: "q" or "k"
        for index, (name, *_) in enumerate(visits):
            if name in names:
                kinds[index] = names[name][0]
        met: dict = {}  # (program, visit of k): the visits of q multiplied with it
        for program, first, second in dot_loads:
            for one, other in ((first, second), (second, first)):
                taken = [i for i in one if kinds.get(i) == "q"]
                if not taken:
                    continue
                for i in other:
                    if kinds.get(i) == "k":
                        met.setdefault((program, i), set()).update(taken)
        blocks: dict = {}  # visit of q: the blocks of rows its active lanes cover
        for taken in met.values():
            spans = []
            for i in taken:
                if i not in blocks:
                    name, _, low, high, _, active = visits[i]
                    rows = names[name][1]
                    if active is None:
                        blocks[i] = []
                    else:
                        span = tuple(sorted((rows(active[0]), rows(active[1]))))
                        lanes = tuple(sorted((rows(low), rows(high))))
                        blocks[i] = _visit_rows(launch, i, rows, lanes, span)[0]
                spans += blocks[i]
            most = max(most, sum(high - low + 1 for low, high in _merged_spans(spans)))
    return most


def _skip_check(trace, label, q, k, o=None) -> list[CaseResult]:
    """The key blocks a causal forward visits, program by program (with tl.dot or without): the queries a
    program holds are read from the rows its loads of q cover (a block loaded in halves is one block), and a
    block of k it loads, or visits with its lanes masked off, after the last of those rows is one that no query
    of the block can see (not counted against a run without the mask, which the reader's code could inflate or
    skip). Any such block refuses: there is no slack (the walk the lab asks for never visits one). Each block of k
    is judged against the rows of q its product took (:func:`_paired_visits`), and, given ``o`` (the output the
    reader's function returned), against the rows of o its program stores next (:func:`_stored_block_visits`)."""
    n_q, n_k = q.shape[-2], k.shape[-2]
    seen = _seen_keys(n_q, n_k, True)
    trace = _with_derived(trace)  # memory computed lane by lane from q or k is read as they are
    scrambled = _scrambled_copy_check(trace, label, {"q": q, "k": k})
    if scrambled:
        return scrambled
    for which, tensor in (("q", q), ("k", k)):
        missing = _uncovered(trace, label, which, tensor, "every query sees the first key and the last query "
                             "sees every key" if seen is None else "every query sees the first key and the last "
                             f"query the first {seen} keys", seen if which == "k" else None)
        if missing:
            return missing
    bm = _held_rows(trace, q, k)
    if bm > 128:
        return [CaseResult(label, "-", False,
                           f"each program of your kernel takes a block of {bm} queries (N_q = {n_q}), counted from "
                           "the rows of q it loads: a block of queries is what one program keeps on chip (BLOCK_M "
                           "of 16 to 128), and with blocks that large there is almost nothing left to skip; use "
                           "blocks of at most 128 queries")]
    hidden, pairs, example = _hidden_pairs(trace, q, k, "k")
    if not pairs:
        return [CaseResult(label, "-", False,
                           "the grader found no block of keys that a program of your kernel walked while it held "
                           "a block of queries: no program loaded q (or a copy of it) and then blocks of k (or "
                           "of a copy of it). Each program should hold its block of queries and walk the keys "
                           "block by block, loading them with tl.load from k as you were given it (or from a "
                           "copy of it), not from memory another kernel of yours wrote")]
    visits = _hidden_visits(trace, q, k)
    if not visits.hidden and o is not None:  # each walk against the block of o its program writes next
        visits = _stored_block_visits(trace, q, k, {"o": o}, "k", "o")
    # no slack: a walk that stops at the block holding the last query of the block the program works on visits
    # no hidden block, whatever BLOCK_M and BLOCK_N (each block that starts at or before that row holds a key the
    # row sees)
    if hidden or visits.hidden:
        where = example or visits.example
        shape = "" if n_q >= n_k else (
            f" With fewer queries than keys (N_q = {n_q}, N_k = {n_k}) the mask is still top-left: query i sees "
            f"keys j <= i, so the last {n_k - n_q} keys are seen by no query; a loop bound shifted by N_k - N_q "
            "(the bottom-right diagonal) walks past it")
        return [CaseResult(
            label, "-", False,
            "with the causal mask your kernel visited key blocks that no query of the program's block can see: "
            f"{max(hidden, visits.hidden)} of the {max(pairs, visits.total)} it visited come after the last "
            f"query of the block it was working on ({where}). Skip them: each program stops at its diagonal, the "
            "block of keys that holds its last query (about half the blocks of a long sequence), and visits no "
            "block after it, even with its lanes masked off (a masked load still runs, and so do the tile "
            f"products after it, on zeros).{_in_turn_note(visits, 'queries')}{shape}")]
    return []


def _in_turn_note(visits: _HiddenVisits, held: str) -> str:
    """A sentence for a program that worked on several blocks of ``held`` in turn (a persistent grid, a fused
    backward) when one of its walks went past the diagonal: where the loop's bound comes from."""
    if not visits.hidden or visits.blocks_in_turn < 2:
        return ""
    return (f" That program worked on {visits.blocks_in_turn} blocks of {held} in turn: compute each walk's "
            f"bound from the block of {held} it works on then, not from another block of the program (the last it "
            "takes, or the whole sequence).")


def _merged_spans(spans) -> list:
    """``spans`` ((first, last) rows) merged where they overlap or touch: the blocks they make together (a block
    loaded in halves is one block)."""
    merged: list = []
    for low, high in sorted(spans):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


def _judged_against(which: str, spans):
    """Of the blocks the rows of the other tensor in ``spans`` make (:func:`_merged_spans`), the one a visit of
    ``which`` is judged against: a block of keys against the block of queries that ends first, a block of queries
    against the block of keys that starts last (a visit hidden from any block of the other tensor its product
    took is hidden: rows of a far block added to an operand, say times 0, do not make it visible). None: no
    rows."""
    blocks = _merged_spans(spans)
    if not blocks:
        return None
    return min(blocks, key=lambda b: b[1]) if which == "k" else max(blocks, key=lambda b: b[0])


def _visit_rows(launch, index: int, rows, lanes, active) -> tuple:
    """The rows visit ``index`` of ``launch`` covers, as blocks ((first, last) row each, :func:`_merged_spans`):
    ``(blocks of its active lanes, blocks of all its lanes, pieces of its active lanes, pieces of all its
    lanes)``, read run by run (:attr:`Launch.visit_runs`, through ``rows``, :func:`_rows_in`), so that a lane far
    from the rest of its tile is a block of its own, not the end of one span. A piece is ``(first row, last row,
    elements of each row)`` of one run of consecutive elements (its elements shared out over its rows): how much
    of each row the load read (:func:`_row_levels`), one element of a row being no row loaded. ``lanes``,
    ``active``: the visit's spans of rows, of all its lanes and of its active ones (or None)."""
    found = getattr(launch, "visit_runs", {}).get(index, (None, None))
    visits = getattr(launch, "visits", ())
    name, _, low, high, _, active_at = visits[index] if index < len(visits) else (None, 0, None, None, 0, None)
    size = next((es for n, _, _, es, _ in getattr(launch, "args", ()) if n == name), 1)

    def pieces(runs, at, span):
        if runs is None and (at is None or at[0] is None):  # one run, its addresses not at hand: its rows
            return [] if span is None else [(*span, 1.0)]
        out = []
        for a, b in (runs if runs is not None else [at]):
            first, last = sorted((rows(a), rows(b)))
            out.append((first, last, ((b - a) // size + 1) / (last - first + 1)))
        return out

    active_pieces, lane_pieces = pieces(found[0], active_at, active), pieces(found[1], (low, high), lanes)
    return (_merged_spans((a, b) for a, b, _ in active_pieces), _merged_spans((a, b) for a, b, _ in lane_pieces),
            active_pieces, lane_pieces)


def _in_storage(lanes, covered, n_rows: int) -> tuple:
    """A visit's rows (``lanes``: the (first, last) row of all its lanes; ``covered``: :func:`_visit_rows`) less
    the masked-off lanes whose rows lie outside the tensor's own storage, rows 0 to ``n_rows`` - 1 (every head of
    it): no key or query lives there, so they are no block visited. A program that takes two heads with one
    batched tl.dot, whose second head does not exist where B*H is odd, masks that head's lanes off (``hs <
    HEADS``), and their addresses lie past the end of the tensor: read as rows, they would be the rows just past
    the last head, far past the diagonal (round 30's h06). Masked-off lanes inside the storage stay visits (a
    block of a real head loaded with every lane masked off is visited); active lanes are left as they are.
    Returns ``(lanes, covered)``, ``lanes`` None where no lane of the visit lies in the storage."""
    last = n_rows - 1

    def clip(blocks):
        return [(max(a, 0), min(b, last)) for a, b in blocks if a <= last and b >= 0]

    def clip_pieces(pieces):
        return [(max(a, 0), min(b, last), each) for a, b, each in pieces if a <= last and b >= 0]

    active_blocks, lane_blocks, active_pieces, lane_pieces = covered
    if lanes is not None and 0 <= lanes[0] and lanes[1] <= last:
        return lanes, covered  # every lane inside: as it was
    kept = clip(lane_blocks)
    inside = [(min(a for a, _ in kept), max(b for _, b in kept))] if kept else clip([lanes] if lanes else [])
    return (inside[0] if inside else None), (active_blocks, kept, active_pieces, clip_pieces(lane_pieces))


def _row_levels(pieces) -> list:
    """The elements ``pieces`` ((first row, last row, elements of each row), :func:`_visit_rows`) read of each
    row, added up: ``(first row, last row, elements)`` per run of rows with the same count, in row order (rows
    read by no piece left out)."""
    events: dict = {}
    for first, last, each in pieces:
        events[first] = events.get(first, 0.0) + each
        events[last + 1] = events.get(last + 1, 0.0) - each
    out, level = [], 0.0
    points = sorted(events)
    for a, b in zip(points, points[1:]):
        level += events[a]
        if level > 1e-9:
            out.append((a, b - 1, level))
    return out


def _dense_blocks(pieces, top: float | None = None, width: int = 0) -> list:
    """The blocks of rows (merged, :func:`_merged_spans`) of which ``pieces`` (:func:`_visit_rows`) read at
    least half as many elements as of the row they read most of (or half of ``top``), and never more than half
    of ``width`` (a row's elements, where given: a row loaded twice is one row loaded): the rows a tile loaded,
    without the rows it touched with a lane or two (one element of every row between a tile past the diagonal
    and the diagonal, round 15's "bridge", is no row of keys: a tile reads the head dimension of each of its
    rows, or the same part of each, a head dimension loaded in chunks)."""
    levels = _row_levels(pieces)
    if not levels:
        return []
    top = max(level for *_, level in levels) if top is None else top
    top = min(top, width) if width > 0 else top
    return _merged_spans((a, b) for a, b, level in levels if 2 * level >= top * (1 - 1e-9))


def _judged_rows(covered, n: int, width: int = 0) -> list:
    """The blocks of rows a visit (or the loads of one visited block together) is judged by, from ``covered``:
    the rows of :func:`_visit_rows` of each load. Every block of active rows, and every block of lanes with no
    active row in it (a block loaded with every lane masked off is visited); the masked-off lanes of a block
    that has active rows (its tail past N or past the diagonal) are not rows. Each load is judged by its own
    rows (:func:`_load_blocks`): the rows it read at least half as much of as of its own row read most of, less
    the rows it wrapped to at its head's start (:func:`_unwrapped`, load by load: ``n``, the rows of one head).
    Blocks of different loads join only across rows the loads together read whole (``width``, the elements of a
    row, the head dimension d: a block loaded in parts, or its head dimension in chunks); elsewhere each load's
    blocks stay apart, so a load never removes another's rows nor lengthens them: a tile past the diagonal read
    at any width (7 of 16 columns) beside one whole row at the diagonal is still a tile past the diagonal, and a
    "bridge" of part of every row (one element, or half the head dimension) between a tile and the diagonal is a
    block of its own, the tile judged alone."""
    active = _load_blocks([rows[2] for rows in covered], n, width, light=True)
    judged = active + [(low, high) for low, high in _load_blocks([rows[3] for rows in covered], n, width)
                       if not any(low <= a_low and a_high <= high for a_low, a_high in active)]
    return sorted(set(judged))


def _load_blocks(loads, n: int, width: int = 0, light: bool = False) -> list:
    """The blocks of rows of a group of loads (``loads``: the pieces of each, :func:`_visit_rows`), for
    :func:`_judged_rows`: each load's dense rows (:func:`_dense_blocks`, against its own row read most of, at
    most ``width``), less the rows it wrapped to (:func:`_unwrapped`, ``n`` the rows of one head); where the
    loads together read every element of a row (``width``; without it, as much as of the row read most), those
    rows make one block across loads (merged where they touch); every other block of a load stays as it is.
    ``light`` (the loads' active lanes): the rows a load read less of than its dense rows are each a block of
    their own too (:func:`_light_blocks`)."""
    kept, pieces = [], []
    for load in loads:
        dense = _dense_blocks(load, width=width) if load else []
        blocks = _unwrapped(dense, n) if load else []
        pieces += [(max(a, lo), min(b, hi), each) for a, b, each in load for lo, hi in blocks
                   if a <= hi and lo <= b]
        kept.append(blocks + (_light_blocks(load, dense) if light else []))
    levels = _row_levels(pieces)
    if not levels:
        return []
    whole = width if width > 0 else max(level for *_, level in levels)
    full = _merged_spans((a, b) for a, b, level in levels if level >= whole * (1 - 1e-9))
    out = list(full)
    for blocks in kept:
        out += [b for b in blocks if not any(lo <= b[0] and b[1] <= hi for lo, hi in full)]
    return sorted(set(out))


def _light_blocks(load, dense) -> list:
    """The rows one load (its pieces, :func:`_visit_rows`, active lanes) read less of than its dense rows
    (``dense``, :func:`_dense_blocks`), each a block of its own (never merged with another row): a row read by a
    lane or two is no row of the tile beside it, so it neither joins the tile (a "bridge" to the diagonal) nor
    drops out of the load (round 17's 11: one whole row at the diagonal inside the load of a far tile read one
    element a row; the far rows are blocks of their own, and the visit is judged by the last of them, as it
    is where those rows run on from the diagonal in one load)."""
    rows = [(a, b) for a, b, _ in _row_levels(load)]
    out = []
    for a, b in rows:
        low = a
        for lo, hi in sorted(dense):
            if hi < low or lo > b:
                continue
            if lo > low:
                out.append((low, lo - 1))
            low = hi + 1
        if low <= b:
            out.append((low, b))
    return [(r, r) for a, b in _merged_spans(out) for r in range(a, b + 1)]


def _unwrapped(blocks, n: int) -> list:
    """``blocks`` of rows ((first, last) each) without the rows a tile wrapped to at the start of its head of
    ``n`` rows: where a head's rows make exactly two blocks, one starting at its first row and one ending at its
    last, the first is left out. They are the lanes of a tile past the end of the sequence taken modulo N
    (``rows % N``) or clamped to row 0 (``tl.where(rows < N, rows, 0)``) and loaded unmasked, whose scores the
    kernel masks: the tile is the block that ends the head. A block with lanes at both the head's first and last
    rows besides (three blocks) is not a wrap, and is judged by all of them (round 15's 21). (A block that
    really starts at row 0 with a far lane at the head's last row is read as that lane: only a head's first block
    can be read so.) ``blocks`` are one load's (the skip checks un-wrap load by load): two loads, a tile at a
    head's first rows and a row at its last loaded beside it, are no wrap (round 16's 09)."""
    import itertools

    n = max(n, 1)
    out: list = []
    for _, group in itertools.groupby(sorted(blocks), key=lambda b: b[0] // n):
        group = list(group)
        if len(group) == 2 and group[0][0] % n == 0 and group[-1][1] % n == n - 1 \
                and group[-1][1] // n == group[0][0] // n:
            group = group[1:]  # a wrap or a clamp makes two blocks: lanes at row 0 beside a real block are not one
        out += group
    return out or list(blocks)


def _judged_block(which: str, blocks) -> tuple:
    """Of the blocks of rows one visit of ``which`` covers (:func:`_visit_rows`), the one it is judged by: a visit
    of keys by the block starting last, of queries by the block ending first. A visit any block of which is
    hidden from the other tensor's block is hidden: a tile past the diagonal with one lane at a row the held
    block sees (key 0) is still a tile past the diagonal (an honest tile is one block of rows)."""
    return max(blocks, key=lambda b: b[0]) if which == "k" else min(blocks, key=lambda b: b[1])


def _judged_visits(which: str, loads, n: int, width: int = 0) -> list:
    """The visits one group of loads of ``which`` makes (the loads of one tensor between the same two tl.dot,
    judged against the same block), each ``(block of rows it is judged by, masked)``: one where the loads'
    spans (``loads``: (span, masked, :func:`_visit_rows`) each) lie within LARGEST_BLOCK_K rows together (a
    block loaded in parts), else one per load; rows by :func:`_judged_rows` (``n``: the rows of one head,
    ``width``: the elements of one row)."""
    first, last = min(lo for (lo, _), _, _ in loads), max(hi for (_, hi), _, _ in loads)
    parts = [([covered for _, _, covered in loads], all(m for _, m, _ in loads))] \
        if last - first < LARGEST_BLOCK_K else [([covered], m) for _, m, covered in loads]
    return [(_judged_block(which, _judged_rows(covered, n, width)), m) for covered, m in parts]


def _paired_visits(trace, q, k) -> list:
    """Every load of q or k (or of a copy of them) a program made, with the block of the other tensor it is judged
    against: ``(which, kernel, program, (first, last) row of all its lanes, (first, last) row of its active
    lanes or None, the other's block or None, group, the blocks of rows it covers (:func:`_visit_rows`))``; the
    loads of one tensor in one ``group`` (made between
    the same two tl.dot of the program) judged against the same block make one visited block (a block loaded in
    parts before its products).

    The other's block is read from the values, not from the order of the loads: the rows of the other tensor
    whose loaded values reach a tl.dot this load's value reaches (one of its two operands, through any
    arithmetic: :attr:`Launch.dot_loads`), among those products that took rows of the other tensor; where it
    reaches several (a tile of keys multiplied with each half of a program's queries), the one that sees most of
    it (a decoy product with a far block is left to :func:`_stored_block_visits`, which judges the walk by the
    rows of the output the program writes). A load
    whose value reaches no operand (``acc += x * 0``) is the other's block of no visit. A load that reaches no
    such product (a block of keys loaded ahead of the one in use and never multiplied, a block of keys whose walk
    over the queries is empty) is judged by the program's latest product before it: where this tensor was the
    one walked in it (loaded after the other's block), against that product's block of the other; where it was
    the block held (or before any product), against the rows of the other the program loads after it and before
    its next load of this tensor that reach a product with rows of this tensor, if any (an empty walk has none,
    and a one-element decoy of the other tensor loaded between tiles and never multiplied with them is no block:
    no pair). A block the program stored to its own scratch and loaded back in the same launch is still the rows
    it loaded (the loads tag travels through memory, :attr:`Launch.dot_loads`). In a program that ran no tl.dot, a
    load is judged against the latest rows of the other tensor loaded before it (consecutive loads of one tensor
    merged)."""
    out = []
    for launch in trace.launches:
        names = {name: (which, rows) for name, *_ in launch.args for which, tensor in (("q", q), ("k", k))
                 if (rows := _rows_in(trace, launch, name, tensor)) is not None}
        if not names:
            continue
        heads = {"q": q.shape[-2], "k": k.shape[-2]}  # the rows of one head of each
        rows_of = {"q": q.numel() // max(1, q.shape[-1]), "k": k.numel() // max(1, k.shape[-1])}  # of all heads
        # visit index: (which, (first, last) all lanes, (first, last) active or None, dots before, blocks of rows)
        mine: dict = {}
        programs: dict = {}
        for index, (name, program, low, high, dots, active) in enumerate(launch.visits):
            if name in names:
                which, rows = names[name]
                span = None if active is None else tuple(sorted((rows(active[0]), rows(active[1]))))
                lanes = tuple(sorted((rows(low), rows(high))))
                # masked-off lanes outside the tensor's storage (a head that does not exist) are no rows
                lanes, covered = _in_storage(lanes, _visit_rows(launch, index, rows, lanes, span), rows_of[which])
                if lanes is None and span is None:
                    continue
                mine[index] = (which, lanes or span, span, dots, covered)
                programs.setdefault(program, []).append(index)
        products: dict = {}  # program: per tl.dot in order, the loads of q and k that reached its operands
        for program, loads in launch.dot_loads:
            reached = sorted(index for index in loads if index in mine)
            # judged against the active rows of the other tensor only (as the tiles they hold), block by block
            taken = {which: [(i, block) for i in reached if mine[i][0] == which and mine[i][2] is not None
                             for block in _unwrapped(mine[i][4][0], heads[which])] for which in "qk"}
            products.setdefault(program, []).append((reached, taken))
        for program, indices in programs.items():
            dots = [taken for _, taken in products.get(program, [])]
            # the loads that reached a product with rows of both tensors: the rows a fallback may pair with
            met = {i for reached, taken in products.get(program, []) if taken["q"] and taken["k"] for i in reached}
            reached_dots: dict = {}  # visit index: the products it reached that took rows of the other tensor
            for n, (reached, taken) in enumerate(products.get(program, [])):
                for index in reached:  # (a load with every lane masked off reaches it too: its block was visited)
                    if taken[_other(mine[index][0])]:
                        reached_dots.setdefault(index, []).append(n)
            held = {"q": [], "k": []}  # a program without tl.dot: the latest rows of each, consecutive merged
            previous = None
            for position, index in enumerate(indices):
                which, lanes, active, before, covered = mine[index]
                other = _other(which)
                if index in reached_dots:
                    # each product judged on its own; the visit against the product that sees most of it (a tile
                    # of keys multiplied with both halves of a program's queries serves the later half)
                    each = [_judged_against(which, [span for _, span in dots[n][other]])
                            for n in reached_dots[index]]
                    each = [b for b in each if b is not None]
                    block = (max(each, key=lambda b: b[1]) if which == "k" else min(each, key=lambda b: b[0])) \
                        if each else None
                elif not dots:
                    block = _judged_against(which, held[other])
                else:
                    latest = next((n for n in range(min(before, len(dots)) - 1, -1, -1)
                                   if dots[n]["q"] and dots[n]["k"]), None)
                    if latest is not None and max(i for i, _ in dots[latest][which]) > \
                            max(i for i, _ in dots[latest][other]):
                        block = _judged_against(which, [span for _, span in dots[latest][other]])
                    else:
                        after = []
                        for later in indices[position + 1:]:
                            if mine[later][0] == which:
                                break
                            if mine[later][2] is not None and later in met:
                                after += _unwrapped(mine[later][4][0], heads[other])
                        block = _judged_against(which, after)
                if active is not None:
                    held[which] = (held[which] if previous == which else []) + _unwrapped(covered[0], heads[which])
                previous = which
                out.append((which, launch.kernel, program, lanes, active, block,
                            ("between", before) if dots else ("load", index), covered))
    return out


def _visit_pairs(trace, q, k) -> list:
    """Every block of q or k a program visited (loaded, or with every lane masked off) and the block of the other
    tensor it worked on then (:func:`_paired_visits`): ``(which, kernel, program, (first, last) row of the visit,
    (first, last) row of the other's block, masked)``, ``which`` the visited tensor ("q" or "k") and ``masked``
    true when no lane of the visit was active. The loads of one tensor made between the same two tl.dot and judged
    against the same block are one visited block where they span at most LARGEST_BLOCK_K rows together (a block
    loaded in halves before its products); otherwise, and in a program
    without tl.dot, each load is one. Its rows are the blocks of rows its active lanes cover (every lane's where
    none is active, :func:`_visit_rows`), and the visit is the one of them it is judged by
    (:func:`_judged_block`: for keys the block starting last). A visit judged against no block of the other
    tensor (an empty walk, a load before any of the other) has no pair."""
    out = []
    groups: dict = {}
    for which, kernel, program, lanes, active, block, group, covered in _paired_visits(trace, q, k):
        if block is not None:
            groups.setdefault((which, kernel, program, group, block), []).append((lanes, active is None, covered))
    for (which, kernel, program, _, block), loads in groups.items():
        n, width = (q if which == "q" else k).shape[-2:]
        out += [(which, kernel, program, rows, block, m) for rows, m in _judged_visits(which, loads, n, width)]
    return out


def _other(which: str) -> str:
    return "k" if which == "q" else "q"


class _HiddenVisits(NamedTuple):
    """What :func:`_hidden_visit_pairs` found: the hidden visits, all the visits compared, and the first hidden
    one: in words, whether every lane of it was masked off, and how many blocks of the other tensor its program
    worked on in turn (more than one: a persistent program, or a fused backward's two walks)."""

    hidden: int
    total: int
    example: str = ""
    masked: bool = False
    blocks_in_turn: int = 0


def _hidden_visit_pairs(pairs, which: str) -> _HiddenVisits:
    """Of ``pairs`` (:func:`_visit_pairs`), the visits of ``which`` ("q" or "k") in which every key comes after
    every query of the block of the other tensor the program worked on then, out of all the visits of
    ``which``."""
    hidden = total = 0
    first = None
    for pair in pairs:
        visited, kernel, program, (low, high), (other_low, other_high), masked = pair
        if visited != which:
            continue
        total += 1
        queries, keys = ((low, high), (other_low, other_high)) if which == "q" else ((other_low, other_high),
                                                                                    (low, high))
        if keys[0] > queries[1]:
            hidden += 1
            first = first or pair
    if first is None:
        return _HiddenVisits(hidden, total)
    visited, kernel, program, (low, high), (other_low, other_high), masked = first
    held, walked = ("keys", "queries") if which == "q" else ("queries", "keys")
    blocks = {other for v, kern, prog, _, other, _ in pairs if (v, kern, prog) == (visited, kernel, program)}
    return _HiddenVisits(hidden, total, f"program {program} of {kernel}, working on {held} {other_low}-"
                                        f"{other_high}, visited {walked} {low}-{high}"
                                        + (" with every lane masked off" if masked else ""), masked, len(blocks))


def _hidden_visits(trace, q, k) -> _HiddenVisits:
    """The blocks of k each program visited (loaded, masked off or not; a block loaded in halves is one) whose
    first key comes after the last query of the block of q it worked on then (:func:`_visit_pairs`), out of
    all it visited while working on one. (The mirror, for programs that hold keys and walk the queries, a
    backward's dK, dV pass: ``_hidden_visit_pairs(pairs, "q")``.)"""
    return _hidden_visit_pairs(_visit_pairs(trace, q, k), "k")


def _stored_block_visits(trace, q, k, outputs: dict, which: str, against: str) -> _HiddenVisits:
    """The blocks of ``which`` ("q" or "k") each program visited (loaded, masked off or not; loads between the
    same two tl.dot merged as in :func:`_visit_pairs`), each judged against the rows of output ``against`` (a
    key of ``outputs``, name: the grader's tensor the reader's function returned) that the program stores next,
    where its next store to any of ``outputs`` is to that one (consecutive stores merged): the block the program
    worked on is the block whose result it writes, whatever rows its products took (a walk whose tiles past the
    diagonal are multiplied with some other block of queries, loaded for them, still walks past the diagonal of
    the block it writes). An atomic into an output writes it (:attr:`Launch.store_marks`: O added onto zeros
    with ``tl.atomic_add``). A visit's rows are the blocks its active lanes cover (:func:`_visit_rows`), judged by
    :func:`_judged_block`. A program that writes its result elsewhere (scratch another launch copies out) is not
    judged here."""
    hidden = total = 0
    first = None
    blocks_of: dict = {}
    visited_tensor = q if which == "q" else k
    n_rows = visited_tensor.numel() // max(1, visited_tensor.shape[-1])  # the rows of all its heads
    for launch in trace.launches:
        rows_of = {name: rows for name, *_ in launch.args
                   if (rows := _rows_in(trace, launch, name, visited_tensor)) is not None}
        outs = {name: (tag, tensor) for name, *_ in launch.args for tag, tensor in outputs.items()
                if tensor is not None and _same_memory(launch, name, tensor)}
        if not rows_of or against not in {tag for tag, _ in outs.values()}:
            continue
        marks: dict = {}  # program: [(visits before the store, output, first row, last row)]
        for name, program, at, low, high in launch.store_marks:
            if name in outs:
                tag, tensor = outs[name]
                marks.setdefault(program, []).append((at, tag, *sorted((_row_of(tensor, low),
                                                                         _row_of(tensor, high)))))
        groups: dict = {}
        for index, (name, program, low, high, dots, active) in enumerate(launch.visits):
            if name not in rows_of:
                continue
            after = [m for m in marks.get(program, ()) if m[0] > index]
            if not after or after[0][1] != against:
                continue
            written = [m for m in after if m[0] == after[0][0] and m[1] == against]
            block = (min(m[2] for m in written), max(m[3] for m in written))
            rows = rows_of[name]
            lanes = tuple(sorted((rows(low), rows(high))))
            span = None if active is None else tuple(sorted((rows(active[0]), rows(active[1]))))
            # masked-off lanes outside the tensor's storage (a head that does not exist) are no rows
            lanes, covered = _in_storage(lanes, _visit_rows(launch, index, rows, lanes, span), n_rows)
            if lanes is None and span is None:
                continue
            groups.setdefault((launch.kernel, program, dots, block), []).append(
                (lanes or span, active is None, covered))
        for (kernel, program, _, block), loads in groups.items():
            blocks_of.setdefault((kernel, program), set()).add(block)
            for (lo, hi), masked in _judged_visits(which, loads, *visited_tensor.shape[-2:]):
                total += 1
                if (lo > block[1]) if which == "k" else (block[0] > hi):
                    hidden += 1
                    first = first or (kernel, program, block, (lo, hi), masked)
    if first is None:
        return _HiddenVisits(hidden, total)
    kernel, program, (b_lo, b_hi), (lo, hi), masked = first
    held, walked = ("keys", "queries") if which == "q" else ("queries", "keys")
    return _HiddenVisits(hidden, total, f"program {program} of {kernel}, working on {held} {b_lo}-{b_hi} (the "
                                        f"rows of {against} it stored next), visited {walked} {lo}-{hi}"
                                        + (" with every lane masked off" if masked else ""), masked,
                         len(blocks_of[(kernel, program)]))


def _loaded_from(trace, tensor) -> int:
    """The elements the call's kernels loaded from ``tensor`` or from the copies of it the reader's function
    made."""
    return sum(launch.loaded.get(name, 0) for launch in trace.launches for name, _, _, _, _ in launch.args
               if _rows_in(trace, launch, name, tensor) is not None)


def _causal_timing_note(runner, q, k, v) -> str:
    """On a GPU, the causal/full time ratio: information only (a busy machine must never fail a grade)."""
    try:
        from gpuperf.labs import median_time_s

        causal = median_time_s(lambda: runner.fn(q, k, v, True), on_gpu=True)
        full = median_time_s(lambda: runner.fn(q, k, v, False), on_gpu=True)
        return (f"information, not graded: causal took {causal / full:.2f}x the time of full at N = "
                f"{q.shape[2]} (about 0.5-0.6x when the kernel skips the hidden key blocks)")
    except Exception as exc:  # the reader's code or the timer: information only
        return f"information, not graded: the causal/full timing did not run ({type(exc).__name__})"


def _l6_cases(gen, device) -> list[Case]:
    cases = []
    for dtype in _dtypes(device):
        shapes = _attention_shapes(device, gen)
        if device == "cpu":
            shapes = shapes[:4] + shapes[5:] if dtype == _dtypes(device)[0] else shapes[:2]
        for i, (b, h, n_q, n_k, d, causal) in enumerate(shapes):
            spread = ("normal", "large", "late")[i % 3] if n_k > 1 else "normal"
            label = (f"B={b} H={h} N_q={n_q} N_k={n_k} d={d} {dtype_name(dtype)} "
                     f"{'causal' if causal else 'full'}, {spread} scores")
            cases.append(Case(label, _l6_case(gen, device, dtype, b, h, n_q, n_k, d, causal, spread, label)))
        n_q = 4096 if device == "cpu" else 16384
        label = (f"B=1 H=1 N_q={n_q} N_k=32 d=16 {dtype_name(dtype)} full, q = 0 and dO near 1/3: dV summed "
                 "over every query")
        cases.append(Case(label, _l6_case(gen, device, dtype, 1, 1, n_q, 32, 16, False, "canary", label)))
        if dtype_name(dtype) == "fp32":
            continue  # below: the long sums of dQ and of dK, where a 16-bit accumulator shows
        label = (f"B=1 H=1 N_q=32 N_k={n_q} d=16 {dtype_name(dtype)} full, every key alike, dS of either sign: "
                 "dQ summed over every key")
        cases.append(Case(label, _l6_case(gen, device, dtype, 1, 1, 32, n_q, 16, False, "dq canary", label)))
        label = (f"B=1 H=1 N_q={n_q} N_k=32 d=16 {dtype_name(dtype)} full, every query alike, dS of one sign down "
                 "each key's column: dK summed over every query")
        cases.append(Case(label, _l6_case(gen, device, dtype, 1, 1, n_q, 32, 16, False, "dk canary", label)))
    n_q, n_k = torch_randint(gen, 20, 60), torch_randint(gen, 20, 60)
    label = (f"B=1 H=2 N_q={n_q} N_k={n_k} d=16 fp32 causal, normal scores, called twice on the same tensors with "
             "new values in them")
    cases.append(Case(label, _l6_case(gen, device, _torch().float32, 1, 2, n_q, n_k, 16, True, "normal", label,
                                      repeat=True)))
    # fewer queries than keys (N_q a multiple of 128; both 256 or more, where no program may hold a whole head),
    # then more queries than keys, small: about the work of the square N = 256 they replace
    (n_q1, n_k1), (n_q2, n_k2) = _skip_shapes(gen, 256, 272, 64, 32, k_span=16)
    label = (f"B=1 H=1 N_q={n_q1} N_k={n_k1}, then N_q={n_q2} N_k={n_k2}, d=16 fp32 causal, your kernels run by "
             "Triton's interpreter on the CPU: the blocks of queries and keys the backward visits")
    cases.append(Case(label, _in_turn(_backward_skip_case(gen, n_q1, n_k1, label),
                                      _backward_skip_case(gen, n_q2, n_k2, label)), interpret=True, device="cpu"))
    if device != "cpu":  # races between programs (a dQ added by every key block), seen by the interpreter
        label = ("B=1 H=2 N_q=70 N_k=50 d=16 fp32 causal, normal scores, your kernels run by Triton's "
                 "interpreter on the CPU: races between programs")
        cases.append(Case(label, _l6_case(gen, "cpu", _torch().float32, 1, 2, 70, 50, 16, True, "normal", label),
                          interpret=True, device="cpu"))
    if _no_tf32(device):
        import torch

        label = ("B=1 H=2 N_q=97 N_k=97 d=32 fp32 causal through Triton's interpreter (TF32 rounded as on an "
                 "A100 or H200)")
        cases.append(Case(label, _l6_case(gen, device, torch.float32, 1, 2, 97, 97, 32, True, "normal", label),
                          interpret=True))
    return cases


def _backward_skip_case(gen, n_q, n_k, label):
    """A causal backward on contiguous inputs, graded on the blocks it visits: a (block of queries, block of
    keys) pair in which every key comes after every query has P = 0, and a backward that skips the hidden
    blocks (as the causal forward does) never loads it."""

    def run(runner):
        import torch

        results = _l6_case(gen, "cpu", torch.float32, 1, 1, n_q, n_k, 16, True, "normal", label)(runner)
        if not all(r.passed for r in results) or runner.trace is None:
            return results
        q, k, lse = runner._l6_qk
        if _loaded_from(runner.trace, lse) < n_q:
            results.append(CaseResult(label, "-", False,
                                      "your backward did not read the log-sum-exp it was given for every row: "
                                      "P = exp(S - lse) is recomputed from the forward's lse (one load per row), "
                                      "not from a new pass over the keys for the max and the sum"))
            return results
        return results + _causal_backward_pairs_check(runner.trace, label, q, k, runner._l6_v, runner._l6_got)

    return run


def _hidden_pairs(trace, q, k, walked: str = "qk") -> tuple[int, int, str]:
    """Over every program, the blocks of q or k it loaded with active lanes, each with the block of the other
    tensor it is judged against (:func:`_paired_visits`: the rows of the other tensor its product took), the
    loads of one block merged as in :func:`_visit_pairs` and read from the blocks of rows their active lanes
    cover (:func:`_visit_rows`, the visit judged by :func:`_judged_block`); only the blocks of
    ``walked`` ("k": a forward's blocks of keys, each program holding its block of queries). Returns the pairs
    wholly on the hidden side of the causal mask (every key after every query), all the pairs, and one hidden
    pair in words. Rows are read from the loads' addresses (:func:`_row_of`)."""
    hidden = pairs = 0
    example = ""
    groups: dict = {}
    for which, kernel, program, _, active, block, group, covered in _paired_visits(trace, q, k):
        if block is not None and active is not None and which in walked:
            groups.setdefault((which, kernel, program, group, block), []).append(
                (active, False, (covered[0], covered[0], covered[2], covered[2])))
    for (which, kernel, program, _, block), loads in groups.items():
        for (low, high), _ in _judged_visits(which, loads, *(q if which == "q" else k).shape[-2:]):
            pairs += 1
            queries, keys = ((low, high), block) if which == "q" else (block, (low, high))
            if keys[0] > queries[1]:
                hidden += 1
                example = example or (f"program {program} of {kernel} with queries {queries[0]}-{queries[1]} "
                                      f"and keys {keys[0]}-{keys[1]}")
    return hidden, pairs, example


def _backward_blocks_check(runner, label, tensors: dict, causal: bool = False) -> list[CaseResult]:
    """Under the interpreter, where a sequence is long (256 rows or more): each load of q, k, v, o or dO covers
    a block of rows (at most LARGEST_BLOCK_K, and fewer than all of them), read from its addresses whatever the
    shape of the block; and no program multiplies every (query, key) pair of a head, every pair the causal mask
    lets through where ``causal`` (a whole head in one program, :func:`_whole_head_program`)."""
    trace = runner.trace
    if trace is None:
        return []
    for which, tensor in tensors.items():
        n = tensor.shape[-2]
        if n < 256:
            continue
        widest = _widest_rows(trace, tensor)
        if widest > LARGEST_BLOCK_K or widest >= n:
            rows = "keys" if which in ("k", "v") else "queries"
            covers = f"all {n} {rows}" if widest >= n else f"{widest} {rows} (N = {n})"
            return [CaseResult(label, "-", False,
                               f"one load of {which} in your backward covers {covers}: each program should take "
                               f"a block of at most {LARGEST_BLOCK_K} {rows} and fewer than all of them (BLOCK_M "
                               "or BLOCK_N of 16 to 128), and walk the rest of the sequence block by block; a tile "
                               f"of all the {rows} puts N x BLOCK scores (P, dS) on chip, which stops fitting past "
                               "a few hundred")]
    q, k = tensors["q"], tensors["k"]
    n_q, n_k = q.shape[-2], k.shape[-2]
    if n_q < 256 or n_k < 256:
        return []
    whole = _whole_head_program(trace, q, k, causal)
    if whole:
        kernel, program, multiplied, needed = whole
        pairs = "(query, key) pairs the causal mask lets through" if causal else "(query, key) pairs"
        amount = f"every one of the {needed} {pairs}" if multiplied >= needed else \
            f"{multiplied} of the {needed} {pairs} ({100 * multiplied // needed}%: more than half)"
        return [CaseResult(label, "-", False,
                           f"program {program} of your kernel {kernel} multiplied {amount} of a head of {n_q} "
                           f"queries and {n_k} keys: it does {'a whole' if multiplied >= needed else 'most of a'} "
                           "head alone, and on a GPU one program runs on one SM while the others wait. "
                           "Split the sequence over programs: one block of keys per program for dK and dV, one "
                           "block of queries per program for dQ (N / BLOCK programs per head; a persistent "
                           "program may take a few blocks in turn, never most of a head)")]
    return []


def _whole_head_program(trace, q, k, causal: bool):
    """``(kernel, program, pairs multiplied, pairs of a head)`` of a program that did more than half of a head
    alone, else None: the (query, key) pairs its tl.dot multiplied cover more than half of the pairs of one head
    (with the causal mask, of the pairs the mask lets through: key j <= i). A product covers the rows of q by
    the rows of k whose loaded values reached its operands (:attr:`Launch.dot_loads`; rows of each load's active
    lanes), so a load whose value reaches no product covers nothing and a block loaded in halves covers its
    rows. A program that holds a block of keys and walks every query (dK, dV), then holds a block of queries and
    walks every key (dQ), as in Triton's fused tutorial layout, covers a cross, a few blocks' share; a persistent
    program that takes a few of a head's blocks in turn (a quarter of them) covers about that share; a program
    whose pairs fit in the strip of one block it multiplied (that block with every row of the other tensor: a
    block of 128 on a head of 256, up to 3/4 of the causal pairs) is not judged by the share, only if it covers
    more than 3/4 of the head; one that computes dK and dV for every key (or every key but one: round 16's 03),
    or dQ for every query, covers it all. A strip is
    taken from each block of rows a load read most of (:func:`_dense_blocks`, against the most of one row the
    program's loads of that tensor read): a decoy tile whose lanes are key 0 and the last key is two rows, not a
    strip of every key (round 15's 14), and the pairs are counted from the blocks of rows that reached the
    product, not from a load's first row to its last. A program that ran no tl.dot is judged by the rows it
    loaded (every query and every key)."""
    import numpy as np

    n_q, n_k = q.shape[-2], k.shape[-2]
    visible = np.tril(np.ones((n_q, n_k), dtype=bool)) if causal else np.ones((n_q, n_k), dtype=bool)
    needed = int(visible.sum())
    if needed == 0:
        return None
    for launch in trace.launches:
        names = {name: (which, rows) for name, *_ in launch.args for which, tensor in (("q", q), ("k", k))
                 if (rows := _rows_in(trace, launch, name, tensor)) is not None}
        if not names:
            continue
        spans: dict = {}  # visit index: (which, first row, last row) of its active lanes
        loads: dict = {}
        rows_of: dict = {}  # visit index: the blocks of rows its active lanes cover, and their pieces
        top: dict = {}  # (program, which): the most elements of one row one load of the program read
        for index, (name, program, _, _, _, active) in enumerate(launch.visits):
            if name in names and active is not None:
                which, rows = names[name]
                spans[index] = (which, *sorted((rows(active[0]), rows(active[1]))))
                loads.setdefault(program, []).append(spans[index])
                covered_rows = _visit_rows(launch, index, rows, None, None)
                rows_of[index] = (covered_rows[0], covered_rows[2])
                most = max((level for *_, level in _row_levels(covered_rows[2])), default=0.0)
                top[(program, which)] = max(top.get((program, which), 0.0), most)
        dotted = set(launch.dots_run)
        for program, program_loads in loads.items():
            if program not in dotted:  # no tl.dot: every query and every key loaded
                if all(_covered_rows([(lo % n, hi % n) for w, lo, hi in program_loads if w == which
                                      and lo // n == hi // n]) >= n for which, n in (("q", n_q), ("k", n_k))):
                    return launch.kernel, program, needed, needed
        covered: dict = {}  # (program, head): (n_q, n_k) pairs multiplied
        strips: dict = {}  # (program, head): the most pairs one block it multiplied makes with the whole other
        done: set = set()
        for program, operands in launch.dot_loads:
            taken = [i for i in operands if i in spans]
            for i in taken:
                which = spans[i][0]
                n = n_q if which == "q" else n_k
                # a strip is a block the program loaded whole (each row's head dimension, as its tiles do): two
                # lanes at a head's first and last rows, or one element of every row, are no block of rows
                for lo, hi in _dense_blocks(rows_of[i][1], top[(program, which)], q.shape[-1]):
                    if lo // n == hi // n:
                        rows = slice(lo % n, hi % n + 1)
                        strip = int(visible[rows, :].sum() if which == "q" else visible[:, rows].sum())
                        key = (program, lo // n)
                        strips[key] = max(strips.get(key, 0), strip)
            # the pairs multiplied: the blocks of rows of q by the blocks of rows of k that reached the product
            blocks = {which: [b for i in taken if spans[i][0] == which for b in rows_of[i][0]] for which in "qk"}
            for q_lo, q_hi in blocks["q"]:
                for k_lo, k_hi in blocks["k"]:
                    head = q_lo // n_q
                    if head != q_hi // n_q or k_lo // n_k != head or k_hi // n_k != head:
                        continue  # a block across heads is no block of one head
                    if (program, q_lo, q_hi, k_lo, k_hi) in done:
                        continue
                    done.add((program, q_lo, q_hi, k_lo, k_hi))
                    grid = covered.setdefault((program, head), np.zeros((n_q, n_k), dtype=bool))
                    grid[q_lo % n_q:q_hi % n_q + 1, k_lo % n_k:k_hi % n_k + 1] = True
        for (program, head), grid in covered.items():
            multiplied = int((grid & visible).sum())
            # a block of 128 on a head of 256 makes, with every row of the other tensor, up to 3/4 of the causal
            # pairs: one block's strip is never "most of a head" (the whole head still is, and so is more than
            # 3/4 of it: a block of every key but one walked against every query is no strip of one block)
            strip = strips.get((program, head), 0)
            if 2 * multiplied > needed and (multiplied > strip or 4 * multiplied > 3 * needed):
                return launch.kernel, program, multiplied, needed
    return None


def _covered_rows(spans) -> int:
    """The rows that ``spans`` ((first, last) pairs) cover together."""
    total, end = 0, None
    for low, high in sorted(spans):
        if end is None or low > end:
            total += high - low + 1
            end = high
        elif high > end:
            total += high - end
            end = high
    return total


def _backward_reference(q, k, v, do, causal):
    """float64 gradients through ``scaled_dot_product_attention`` (autograd, math backend)."""
    import torch.nn.functional as F

    q64, k64, v64 = (_float64_cpu(t).requires_grad_(True) for t in (q, k, v))
    o64 = F.scaled_dot_product_attention(q64, k64, v64, is_causal=causal)
    o64.backward(_float64_cpu(do))
    return o64.detach(), q64.grad, k64.grad, v64.grad


def _backward_bounds(ref, q, k, v, do, dtype, refs, canary=False, forward_bounds=None):
    """Elementwise bounds of dq, dk, dv (module docstring). ``forward_bounds``: the bounds of o and lse when
    they come from the reader's own forward (L6.autograd) instead of the exact values rounded."""
    import torch

    o, lse, p, s, a = ref
    q64, k64, v64, do64 = (t.detach().double().cpu() for t in (q, k, v, do))
    dq, dk, dv = refs
    n_q, n_k, d = q.shape[-2], k.shape[-2], q.shape[-1]
    scale = float(d) ** -0.5
    name = dtype_name(dtype)
    u_in = 0.0 if name == "fp32" else UNIT_ROUNDOFF[name]
    u_o = UNIT_ROUNDOFF[name]
    delta = _score_error(s, a, d) + 2 * U32 * lse.abs()
    if forward_bounds is not None:
        delta = delta + forward_bounds[1]
    e_rel = 2 * delta[..., None] + 8 * U32
    visible = torch.isfinite(s).double()
    ep = p * e_rel + FLUSH * visible
    dp = do64 @ v64.transpose(-1, -2)
    dd = (do64 * o).sum(-1, keepdim=True)
    d_dp = (d + 2) * U32 * (do64.abs() @ v64.abs().transpose(-1, -2))
    d_dd = ((d + 2) * U32 + u_o) * (do64.abs() * o.abs()).sum(-1, keepdim=True)
    if forward_bounds is not None:
        d_dd = d_dd + (do64.abs() * forward_bounds[0]).sum(-1, keepdim=True)
    ds = p * (dp - dd)
    e = ep * (dp - dd).abs() + p * (d_dp + d_dd)
    u_p = 0.0 if canary else u_in
    p_tiny = 0.0 if canary else ETA[name]
    pt = p.transpose(-1, -2)
    bound_dv = _stored_error(dv, name) \
        + 2 * ((ep + u_p * p + p_tiny * visible).transpose(-1, -2) @ do64.abs()) \
        + 2 * (n_q + 8) * U32 * (pt @ do64.abs())
    eds = e + u_in * ds.abs() + max(ETA[name], FLUSH) * visible
    bound_dq = _stored_error(dq, name) \
        + 2 * scale * (eds @ k64.abs() + (n_k + 8) * U32 * (ds.abs() @ k64.abs()))
    bound_dk = _stored_error(dk, name) + 2 * scale * (eds.transpose(-1, -2) @ q64.abs()
                                                   + (n_q + 8) * U32 * (ds.abs().transpose(-1, -2) @ q64.abs()))
    return bound_dq, bound_dk, bound_dv


def _grad_tolerances(dtype):
    name = dtype_name(dtype)
    why = (f"{name} inputs; P recomputed from lse, dP and D in fp32, dS rounded to the input type, fp32 sums; "
           "each gradient against its own magnitude; TF32 products or 16-bit accumulators exceed it")
    return {
        "dq": _bound("2 (u_out |dQ| + eta) + 2 scale ((E + u_in |dS|)|K| + (N_k + 8) 2^-24 |dS||K|)", why),
        "dk": _bound("2 (u_out |dK| + eta) + 2 scale ((E + u_in |dS|)^T|Q| + (N_q + 8) 2^-24 |dS|^T|Q|)", why),
        "dv": _bound("2 (u_out |dV| + eta) + 2 ((eP + u_in) P)^T|dO| + 2 (N_q + 8) 2^-24 P^T|dO|", why)}


def _l6_case(gen, device, dtype, b, h, n_q, n_k, d, causal, spread, label, repeat=False):
    def draw():
        q, k, v = _attention_inputs(gen, device, dtype, b, h, n_q, n_k, d, spread)
        do0 = _randn(gen, (b, h, n_q, d), dtype, device)
        if spread == "canary":
            do0 = (1.0 / 3.0 + 0.01 * do0.float()).to(dtype)
        elif spread == "dq canary":  # positive, a size of its own per query
            size = 0.5 + _torch().rand(b, h, n_q, 1, generator=gen)
            do0 = (size * (1.0 / 3.0 + 0.01 * do0.float().cpu())).to(dtype).to(device)
        elif spread == "dk canary":  # every query alike
            do0 = ((0.5 + _torch().rand(d, generator=gen)) / 3.0).expand(b, h, n_q, d).to(dtype).to(device)
        ref = _attention_reference(q, k, v, causal)
        # the forward values handed to the backward: o rounded to the input dtype, lse in fp32
        return q, k, v, ref[0].to(dtype).to(device), ref[1].float().to(device), do0

    def run(runner):
        values = draw()
        # q, k, v, O and dO each laid out its own way (lse contiguous, as a forward allocates it)
        kinds = list(_attention_layouts(gen, 5, device, n_q, n_k))
        kinds.insert(4, None)
        tensors = [runner.input(t, strides=_layout_strides(kind, t.shape) if kind else None)
                   for t, kind in zip(values, kinds)]

        def values_pass(tensors):
            return all(r.passed for r in _l6_values(runner, *tensors, ""))

        results = _diagnosed(runner, len(set(kinds) - {None}) > 1, lambda: one(runner, *tensors, ""),
                             lambda: _layout_diagnosis(runner, ("q", "k", "v", "o", "lse", "do"), values, kinds,
                                                       values_pass))
        if repeat and all(r.passed for r in results):  # the same tensor objects, new contents
            for t, new in zip(tensors, draw()):
                t.copy_(new)
            results += one(runner, *tensors, " (second call: same tensors, new values)")
        return results

    def _l6_values(runner, q, k, v, o_in, lse_in, do, second):
        """Call the function and compare dq, dk and dv with float64 (kept in runner._l6_got)."""
        got, _ = runner.call(q, k, v, o_in, lse_in, do, causal, names=("q", "k", "v", "o", "lse", "do"))
        if not isinstance(got, tuple) or len(got) != 3:
            return [CaseResult(label, "-", False, "return a tuple (dq, dk, dv)")]
        runner._l6_got = got
        ref = _attention_reference(q, k, v, causal)
        _, dq, dk, dv = _backward_reference(q, k, v, do, causal)
        bounds = _backward_bounds(ref, q, k, v, do, dtype, (dq, dk, dv), canary=spread == "canary")
        tols = _grad_tolerances(dtype)
        results = []
        for name, mine, want, bound in zip(("dq", "dk", "dv"), got, (dq, dk, dv), bounds):
            results.append(compare(label, name + second, mine, want, tols[name], scale=bound, dtype=dtype,
                                   device=device))
        long_sum = {"canary": ("dv", "dV", n_q, "query"), "dq canary": ("dq", "dQ", n_k, "key"),
                    "dk canary": ("dk", "dK", n_q, "query")}.get(spread)
        if long_sum is not None:  # say what this case is for, in place of a guess from where the errors fall
            from dataclasses import replace

            name, grad, terms, what = long_sum
            results = [r if r.passed or r.output != name + second else replace(r, message=(
                f"{grad} here sums one term per {what}, {terms} in all: kept in a 16-bit accumulator, or rounded to "
                f"the input's type after each block, the running sum drifts past the tolerance; accumulate {grad} "
                "in fp32 across the blocks and round once, when you store it")) for r in results]
        return results

    def one(runner, q, k, v, o_in, lse_in, do, second):
        runner._l6_qk, runner._l6_v = (q, k, lse_in), v
        results = _l6_values(runner, q, k, v, o_in, lse_in, do, second)
        if len(results) != 3:
            return results
        got = runner._l6_got
        if all(r.passed for r in results):
            for name, mine in zip(("dq", "dk", "dv"), got):
                results += runner.written_check(name, mine)
        if all(r.passed for r in results):
            results += _scratch_check(runner, label, (q, k, v, o_in, lse_in, do), got, causal=causal) or \
                _tile_products_check(runner, label, b, h, n_q, n_k, d, causal, _BACKWARD_PRODUCTS)
        if all(r.passed for r in results):
            results += _launch_loop_check(runner, label, dict(zip(("dq", "dk", "dv"), got)), "blocks",
                                          "(cdiv(N_k, BLOCK_N), B x H) for dK and dV, "
                                          "(cdiv(N_q, BLOCK_M), B x H) for dQ") or \
                _backward_blocks_check(runner, label, {"q": q, "k": k, "v": v, "o": o_in, "do": do}, causal) or \
                _o_reads_check(runner, label, o_in)
        return results

    return run


def _o_reads_check(runner, label, o) -> list[CaseResult]:
    """Round 23 (file 47): under the interpreter, O loaded at most twice over in all (D = rowsum(dO * O) needs
    each row of O once: a preprocessing kernel, or the dQ kernel's programs, one block of queries each). A dK/dV
    kernel that recomputes D for every (block of keys, block of queries) pair reads O once per block of keys."""
    trace = runner.trace
    if trace is None or o.numel() == 0:
        return []
    loaded = 0
    for launch in trace.launches:
        for name, *_ in launch.args:
            if _rows_in(trace, launch, name, o) is not None:
                loaded += launch.loaded.get(name, 0)
    if loaded <= 2 * o.numel():
        return []
    return [CaseResult(label, "-", False,
                       f"your backward loaded {loaded} elements of O ({loaded / o.numel():.2g} times each of the "
                       f"{o.numel()}): D = rowsum(dO * O) needs each row of O once; compute D once per row (a "
                       "small kernel before the others, or in the dQ kernel) and read D, not O, wherever it is "
                       "needed again")]


# ---- L5.tiled: FlashAttention forward in plain PyTorch ------------------------------------------------


def _tiled_cases(gen, device) -> list[Case]:
    # (n_q, n_k, d, block_rows, block_cols): blocks smaller than N and wider than d, so a block of rows
    # against all keys (block_rows x N_k) or of keys against all queries (N_q x block_cols) is larger than
    # the limit max(block_rows * block_cols, block_rows * d, N_q * d, N_k * d)
    shapes = [(64, 64, 16, 32, 32, "large"), (97, 130, 16, 32, 48, "late"), (32, 300, 16, 32, 64, "large"),
              (130, 97, 32, 64, 48, "normal"), (70 + torch_randint(gen, 0, 30), 200, 16, 32, 32, "huge"),
              (50, 90 + torch_randint(gen, 0, 30), 16, 32, 32, "shifted"),
              # many blocks of keys for few queries: a whole row of scores for a block of queries (br x N_k)
              # is many times one block's (br x bc) and the output's (N_q x d)
              (64, 1984 + torch_randint(gen, 0, 128), 16, 32, 32, "normal"),
              (torch_randint(gen, 20, 64), torch_randint(gen, 100, 160), 16, 32, 32, "extreme")]
    # each even row's max in its first key, every later block of keys hundreds lower (a max that goes down
    # overflows); sizes from the seed without drawing from the generator (the cases before keep their inputs)
    shapes.append((16 + gen.initial_seed() % 25, 100 + gen.initial_seed() % 60, 16, 32, 32, "early"))
    cases = []
    for n_q, n_k, d, br, bc, spread in shapes:
        label = f"N_q={n_q} N_k={n_k} d={d} fp32, block_rows={br} block_cols={bc}, {spread} scores"
        cases.append(Case(label, _tiled_case(gen, n_q, n_k, d, br, bc, spread, label)))
    # the same tensor objects called twice with new values in them (as L2 to L5.forward): a result kept
    # from the first call (a cache keyed on the tensors) shows. Drawn last, so the cases before keep their inputs
    n_q, n_k = torch_randint(gen, 20, 60), torch_randint(gen, 40, 100)
    label = (f"N_q={n_q} N_k={n_k} d=16 fp32, block_rows=16 block_cols=32, normal scores, called twice on the "
             "same q, k, v with new values in them")
    cases.append(Case(label, _tiled_case(gen, n_q, n_k, 16, 16, 32, "normal", label, repeat=True)))
    return cases


#: ATen matrix products (``@``, ``torch.matmul``, ``einsum`` and ``F.linear`` arrive as one of these).
_MATRIX_PRODUCTS = frozenset(("mm", "bmm", "addmm", "baddbmm", "addbmm", "mv", "addmv", "dot", "vdot",
                              "matmul", "_addmm_activation"))
#: ATen operators that join their inputs (none broadcast along the output's rows): _count_reads.
_JOINS = frozenset(("cat", "_cat", "stack", "hstack", "vstack", "column_stack", "index_put", "index_put_"))
#: ATen reductions: what they output is a statistic of what they read, not an image of it (_count_reads).
_REDUCTIONS = frozenset(("sum", "mean", "nansum", "nanmean", "amax", "amin", "max", "min", "aminmax", "prod",
                         "logsumexp", "norm", "linalg_vector_norm", "var", "std", "var_mean", "std_mean",
                         "argmax", "argmin", "any", "all", "median", "nanmedian", "count_nonzero"))


def _tiled_limit(n_q, n_k, d, br, bc) -> int:
    return max(br * bc, br * d, n_q * d, n_k * d)


def _tiled_live_budget(n_q, d, br, bc) -> int:
    """Elements computed from q that an online-softmax loop may hold at one time: a few images of one block of
    scores (S, S - m, P), a few of the block's running output (acc, P V, the rescaled acc), its statistics,
    and the output with a copy of q (or the finished blocks of the output in a list, then joined)."""
    return 8 * br * bc + 8 * br * d + 16 * br + 4 * n_q * d


def _tiled_case(gen, n_q, n_k, d, br, bc, spread, label, repeat=False):
    def run(runner):
        results = _tiled_run(runner)
        if repeat and all(r.passed for r in results):  # the same tensor objects, new contents
            import torch

            q, k, v = runner._tiled_inputs
            for t, new in zip((q, k, v), _attention_inputs(gen, "cpu", torch.float32, 1, 1, n_q, n_k, d, spread)):
                t.copy_(new[0, 0])
            got, _ = runner.call(q, k, v, br, bc, names=("q", "k", "v"))
            ref = _attention_reference(q[None, None], k[None, None], v[None, None], False)
            bound_o, _ = _forward_bounds(ref, v[None, None], torch.float32, n_k, d)
            tol = _bound("2 (u_out |o| + eta) + 2 (2 Delta + (N_k + d + 8) 2^-24) (P|V|)",
                         "fp32 scores, probabilities and sums (see the forward's tolerance)")
            results.append(compare(label, "o (second call: same q, k, v, new values)", got, ref[0][0, 0], tol,
                                   scale=bound_o[0, 0], dtype=torch.float32, device="cpu"))
        return results

    def _tiled_run(runner):
        import torch

        s = "large" if spread == "huge" else spread
        q, k, v = (t[0, 0] for t in _attention_inputs(gen, "cpu", torch.float32, 1, 1, n_q, n_k, d, s))
        if spread == "huge":  # scores to about +-1000: exp overflows even fp64 without the running max
            q = q * 10.0
        q, k, v = runner.input(q), runner.input(k), runner.input(v)
        runner._tiled_inputs = (q, k, v)
        limit = _tiled_limit(n_q, n_k, d, br, bc)
        runner.policy = Policy(runner.policy.exercise, allowed=None, refused=SOFTMAX_LIKE_OPS,
                               refused_names=SOFTMAX_LIKE_NAMES, max_numel=limit, kernels=False,
                               why="asks for the online softmax over blocks of keys, in plain PyTorch")
        runner.count_reads = {"k": k, "v": v}
        runner.count_live = (q, _tiled_live_budget(n_q, d, br, bc))
        got, watch = runner.call(q, k, v, br, bc, names=("q", "k", "v"))
        ref = _attention_reference(q[None, None], k[None, None], v[None, None], False)
        bound_o, _ = _forward_bounds(ref, v[None, None], torch.float32, n_k, d)
        tol = _bound("2 (u_out |o| + eta) + 2 (2 Delta + (N_k + d + 8) 2^-24) (P|V|)",
                     "fp32 scores, probabilities and sums (see the forward's tolerance)")
        results = [compare(label, "o", got, ref[0][0, 0], tol, scale=bound_o[0, 0], dtype=torch.float32,
                           device="cpu")]
        if spread == "extreme":
            results = [_extreme_scores_message(results[0], got)]
        if spread == "early":
            results = [_early_scores_message(results[0], got)]
        # one pass: each (block of queries, block of keys) pair costs two matrix products, S = Q_i K_j^T and
        # P V_j; a first pass for the max, blocks of another size or one query at a time cost more
        tiles = -(-n_q // br) * -(-n_k // bc)
        products = sum(1 for name in watch.ops if name in _MATRIX_PRODUCTS)
        # one block of queries at a time: the products of q's rows with the keys (S = Q_i K_j^T, by @ or by
        # elementwise multiplies) come to each block of queries once, walk all its keys, then move on
        back = runner.reads.get("order:back")
        if results[0].passed and back is not None:
            (low, high), (left_low, left_high) = back
            results.append(CaseResult(label, "-", False,
                                      f"your loop visits the key blocks outermost: it multiplied rows {low} to "
                                      f"{high} of q by keys again after moving on to rows {left_low} to "
                                      f"{left_high}. The exercise walks one block of {br} queries at a time: for "
                                      "each block of queries, keep its m, l and acc and walk every block of "
                                      "keys before the next block of queries (the FlashAttention-2 order that "
                                      "the kernel of Exercise 2 runs, one program per block of queries)"))
            return results
        # one pass reads each element of k once per block of queries (S = Q_i K_j^T) and each of v once (P V_j),
        # whatever computes the products (@, or a broadcast and a sum)
        blocks = -(-n_q // br)
        for name in ("k", "v"):
            widest = runner.reads.get(f"{name}:widest", 0)
            if results[0].passed and widest > bc * d:
                results.append(CaseResult(label, "-", False,
                                          f"one operation of your function read {widest // d} rows of {name} (or of "
                                          f"a copy made from it) at once, with block_cols = {bc}: the exercise walks "
                                          "the keys in blocks of block_cols rows, keeping a running max and sum, "
                                          "so that no step ever holds all the keys"))
                return results
            times = runner.reads.get(name, 0) / (blocks * n_k * d)
            if results[0].passed and times > 1.5:
                results.append(CaseResult(label, "-", False,
                                          f"your function read each element of {name} {times:.2g} times per block "
                                          f"of {br} queries: the online softmax reads each block of keys once "
                                          "per block of queries (S = Q_i K_j^T, then P V_j), keeping a running "
                                          "max and sum; a first pass for the max, or one query at a time, reads "
                                          "them more"))
                return results
        # the memory held across steps: a block of scores (and the few of its images one step makes), the
        # running statistics and output of a block of queries, and the output (or copies of q): never a whole
        # row of scores for a block of queries, kept to take the exact max before a second pass
        held, budget = runner.reads.get("live:peak", 0), runner.count_live[1]
        if results[0].passed and held > budget:
            results.append(CaseResult(label, "-", False,
                                      f"your function held {held} values computed from q in memory at one time "
                                      f"(blocks of {br} queries against {bc} keys hold {br * bc} scores; a whole "
                                      f"row of scores for {br} queries is {br * n_k}): the online softmax keeps "
                                      "one block of scores at a time and, for the block of queries, only the "
                                      "running max, sum and output. Keeping every block of scores (in a list, "
                                      "or in a buffer) to take the exact max before a second pass is the "
                                      "two-pass softmax that FlashAttention avoids"))
            return results
        if results[0].passed and products > 2 * tiles:
            results.append(CaseResult(label, "-", False,
                                      f"your function ran {products} matrix products; one pass over the "
                                      f"{tiles} pairs of a block of {br} queries and a block of {bc} keys "
                                      f"runs {2 * tiles} (S = Q_i K_j^T, then P V_j): keep a running max and "
                                      "sum instead of a first pass for the max, and use the block sizes "
                                      "given"))
        return results

    return run


# ---- L6.autograd: the reader's forward and backward as one autograd.Function --------------------------


def _autograd_cases(gen, device) -> list[Case]:
    if device == "cpu":
        shapes = [(1, 2, 97, 97, 32, True, "normal"), (2, 1, 64, 80, 16, False, "large"),
                  (1, 1, 70, 70, 16, True, "late"), (1, 1, 40, 50, 16, True, "shifted"),
                  # d = 128, the largest head size the labs take (a head-dimension block hard-coded to 64 shows)
                  (2, 3, torch_randint(gen, 17, 40), torch_randint(gen, 17, 40), 128, True, "late")]
    else:
        shapes = [(1, 2, 97, 97, 32, True, "normal"), (2, 3, 512, 700, 64, False, "large"),
                  (2, 2, 1024, 1024, 128, True, "late"), (1, 2, 300, 400, 64, True, "shifted")]
    cases = []
    for dtype in _dtypes(device):
        for b, h, n, n_k, d, causal, spread in (shapes if dtype == _dtypes(device)[0] else shapes[:2]):
            label = (f"B={b} H={h} N_q={n} N_k={n_k} d={d} {dtype_name(dtype)} "
                     f"{'causal' if causal else 'full'}, {spread} scores: O, then dQ, dK, dV of a random dO")
            cases.append(Case(label, _autograd_case(gen, device, dtype, b, h, n, n_k, d, causal, spread, label)))
    # the accumulation case of L6.backward, through the Function: q = 0, N_k a power of two (P = 1/N_k exactly)
    # and dO near 1/3 summed over 4096 queries, where 16-bit dQ, dK, dV accumulators fall outside the bound
    n_q = 4096 if device == "cpu" else 16384
    label = (f"B=1 H=1 N_q={n_q} N_k=32 d=16 fp16 full, q = 0 and dO near 1/3: dV summed over every query, through "
             "your Function")
    cases.append(Case(label, _autograd_case(gen, device, _torch().float16, 1, 1, n_q, 32, 16, False, "canary",
                                            label)))
    # a long sequence through the interpreter, then a causal one: the Function's own kernels graded as L5 and
    # L6.backward grade theirs (blocks of keys, one pass over them, scratch memory, tile products, the blocks a
    # causal kernel skips: _autograd_blocks_check), not only its values. Early scores in the long one (each even
    # row's max in its first key, every later block of keys hundreds lower; more keys than any block may take):
    # a forward whose running max goes down overflows on every seed
    n = 512 + torch_randint(gen, 0, 64)
    label = (f"B=1 H=1 N_q={n} N_k={n} d=16 fp32 full, early scores (each even row's max in its first key, "
             "every later block far lower), your Function's kernels run by Triton's interpreter on the CPU: their "
             "blocks of keys")
    cases.append(Case(label, _autograd_case(gen, "cpu", _torch().float32, 1, 1, n, n, 16, False, "early", label,
                                            blocks=True), interpret=True, device="cpu"))
    # fewer queries than keys (N_q a multiple of 128), then more queries than keys: less work than the square
    # N = 192 they replace
    (n_q1, n_k1), (n_q2, n_k2) = _skip_shapes(gen, 128, 144, 64, 32, k_span=16)
    label = (f"B=1 H=1 N_q={n_q1} N_k={n_k1}, then N_q={n_q2} N_k={n_k2}, d=16 fp32 causal, your Function's kernels "
             "run by Triton's interpreter on the CPU: the blocks they visit")
    cases.append(Case(label, _in_turn(*(_autograd_case(gen, "cpu", _torch().float32, 1, 1, n_q, n_k, 16, True,
                                                       "normal", label, blocks=True)
                                        for n_q, n_k in ((n_q1, n_k1), (n_q2, n_k2)))),
                      interpret=True, device="cpu"))
    # two calls in one case (the second after the first's backward, on the same tensors with new values): an
    # O kept between calls (a cache per shape) and returned again overwrites the first call's result. First,
    # so such a Function is refused early; sizes and inputs from a generator of its own, seeded from the
    # grade's seed, so that the other cases keep their inputs
    own = _torch().Generator().manual_seed(gen.initial_seed() + 30)
    n_q, n_k = torch_randint(own, 20, 43), torch_randint(own, 20, 49)
    label = (f"B=1 H=2 N_q={n_q} N_k={n_k} d=16 fp32 causal, normal scores, called twice on the same q, k, v, dO "
             "with new values in them: O, then dQ, dK, dV, each time")
    cases.insert(0, Case(label, _autograd_case(own, device, _torch().float32, 1, 2, n_q, n_k, 16, True, "normal",
                                               label, repeat=True)))
    # two layers (two calls, then one backward through both), and the tensors the backward needs changed in
    # place between forward and backward: where the Function keeps what its backward reads (ctx, saved for
    # backward). Early, so such a Function is refused early; inputs from generators of their own
    layers = _torch().Generator().manual_seed(gen.initial_seed() + 31)
    label = ("two attention layers, B=1 H=2 d=16 fp32 (one causal, one full, other sizes): two calls of your "
             "Function, then one backward through both")
    cases.insert(1, Case(label, _autograd_layers_case(layers, device, label)))
    inplace = _torch().Generator().manual_seed(gen.initial_seed() + 32)
    label = ("B=1 H=1 d=16 fp32 causal, q, k, v or O changed in place between the forward and the backward (four "
             "calls): autograd's check of the saved tensors")
    cases.insert(2, Case(label, _autograd_inplace_case(inplace, device, label)))
    if device != "cpu":  # the long interpreted case above runs on a GPU machine only when asked to
        label = ("B=1 H=2 N_q=300 N_k=700 d=64 fp32 full, early scores (each even row's max in its first key, "
                 "the scores falling along the keys): O, then dQ, dK, dV of a random dO")
        cases.append(Case(label, _autograd_case(gen, device, _torch().float32, 1, 2, 300, 700, 64, False, "early",
                                                label)))
    return cases


def _autograd_blocks_check(runner, label, tensors: dict, grads, causal: bool, backward_from: int
                           ) -> list[CaseResult]:
    """Under the interpreter: the Function's forward launches (those before the backward began, at
    ``backward_from``) graded as L5 grades its kernels (blocks of keys and one pass over them where N_k >= 512,
    scratch memory, tile products, and with the causal mask the key blocks it skips), then its backward's as
    L6.backward grades its kernels (scratch memory, tile products, blocks of keys, rows per load, and with the
    causal mask the pairs of blocks it skips). ``tensors``: the grader's q, k, v, dO and the O the Function
    returned. The backward's programs are counted on their own: the links through memory among its own
    launches are kept (a max pass in one kernel and a sum pass in another count as two passes), those to the
    forward's launches dropped (reading the forward's lse and O is not a second pass over K)."""
    import dataclasses

    trace = runner.trace
    if trace is None:
        return []
    q, k, v, do, o = (tensors[name] for name in ("q", "k", "v", "do", "o"))
    (b, h, n_q, d), n_k = q.shape, k.shape[-2]
    shift = backward_from << 32  # Launch.sources: launch index << 32 | program, the index counted from 0

    def own(sources):
        return {program: {owner - shift for owner in owners if owner >= shift}
                for program, owners in sources.items()}

    def own_lineage(read_lineage):  # keyed as the sources are; a lineage keeps its launches' own indices
        return {(program, owner - shift): lineage for (program, owner), lineage in read_lineage.items()
                if owner >= shift}

    derived = _derived_images(trace)  # (made by any launch of the call, as the copies)
    forward = Trace(launches=trace.launches[:backward_from], images=trace.images, owners=trace.owners,
                    derived_images=derived)
    backward = Trace(launches=[dataclasses.replace(launch, sources=own(launch.sources),
                                                   read_lineage=own_lineage(launch.read_lineage))
                               for launch in trace.launches[backward_from:]], images=trace.images,
                     owners=trace.owners, derived_images=derived)
    runner._attention_q, runner._attention_v, runner._attention_nq = q, v, n_q

    def forward_checks():
        found = _key_blocks_check(runner, label, k, n_k, causal) or \
            _launch_loop_check(runner, label, {"O": o}, "blocks of queries", "(cdiv(N_q, BLOCK_M), B x H)") or \
            _scratch_check(runner, label, (q, k, v), (o,), causal=causal) or \
            _attention_dots_check(runner, label, b, h, n_q, n_k, d, causal)
        # with the causal mask, after the blocks it skips: one pass over K and V, against the keys each block of
        # queries sees, whatever N_k is (the causal case here has fewer than the 512 keys _key_blocks_check asks)
        return found or ((_skip_check(forward, label, q, k, o) or _causal_pass_check(runner, label, q, k, v, n_k))
                         if causal else [])

    def backward_checks():
        # the passes over K and V counted as L6.backward's causal check counts them (what a program read from an
        # earlier kernel charged only where it was computed from K: round 23's h22, a D stored by the dQ kernel),
        # not as the forward's (every earlier program whose results it read)
        return _scratch_check(runner, label, (q, k, v, do), grads, causal=causal) or \
            _tile_products_check(runner, label, b, h, n_q, n_k, d, causal, _BACKWARD_PRODUCTS) or \
            _key_width_check(runner, label, k, n_k) or \
            (_backward_passes_check(backward, label, k, v) if n_k >= 512 else []) or \
            _launch_loop_check(runner, label, dict(zip(("dQ", "dK", "dV"), grads)), "blocks",
                               "(cdiv(N_k, BLOCK_N), B x H) for dK and dV, (cdiv(N_q, BLOCK_M), B x H) for dQ") or \
            _backward_blocks_check(runner, label, {"q": q, "k": k, "v": v}, causal) or \
            _o_reads_check(runner, label, o) or \
            (_causal_backward_pairs_check(backward, label, q, k, v, grads) if causal else [])

    for part, which, checks in ((forward, "forward", forward_checks), (backward, "backward", backward_checks)):
        if not part.launches:
            continue
        runner.trace = part
        try:
            found = checks()
        finally:
            runner.trace = trace
        if found:
            return [dataclasses.replace(r, message=f"in your Function's {which}: {r.message}") for r in found]
    return []


def _causal_backward_pairs_check(trace, label, q, k, v=None, grads=None) -> list[CaseResult]:
    """A causal backward's pairs of blocks (L6.backward's skip case, and L6.autograd's backward): K loaded about
    once per block of queries at most, every row of q and k loaded (or of copies of them), at least one (block of
    queries, block of keys) pair walked, none visited in which every key comes after every query (by the pairs of
    loads with active lanes, and by the blocks the loops visit, masked off or not, both ways round), and K and V
    loaded once per program (:func:`_backward_passes_check`). Given ``grads`` (the dQ, dK, dV the reader's function
    returned), each block visited is also judged against the rows of dQ (a block of keys) or of dK (a block of
    queries) its program stores next (:func:`_stored_block_visits`)."""
    n_q, n, d = q.shape[-2], k.shape[-2], k.shape[-1]
    loaded_k = _loaded_from(trace, k)
    if loaded_k > (-(-n_q // 16) + 2) * n * d:
        return [CaseResult(label, "-", False,
                           f"your backward loaded {loaded_k} elements of k ({loaded_k / (n * d):.2g} times each): "
                           "the dK, dV pass loads each block of keys once, the dQ pass once per block of queries; "
                           "a pass over all the keys for every block (recomputing the row statistics) reads them "
                           "far more")]
    seen = _seen_keys(n_q, n, True)
    counted, trace = trace, _with_derived(trace)  # (K and V loaded once per program: counted as before)
    scrambled = _scrambled_copy_check(trace, label, {"q": q, "k": k})
    if scrambled:
        return scrambled
    for which, tensor in (("q", q), ("k", k)):
        missing = _uncovered(trace, label, which, tensor,
                             "dQ of the last query needs every key, dK of the first key every query" if seen is None
                             else f"dQ of the last query needs the first {seen} keys, dK of the first key every "
                             "query", seen if which == "k" else None)
        if missing:
            return missing
    hidden, pairs, example = _hidden_pairs(trace, q, k)
    if not pairs:
        return [CaseResult(label, "-", False,
                           "the grader found no (block of queries, block of keys) pair that a program of your "
                           "backward walked: no program held a block of q (or k) while it loaded blocks of the "
                           "other, from q and k or from copies of them your function made. Each program should "
                           "hold its block of keys (for dK, dV) or of queries (for dQ) and walk the other block by "
                           "block, loading them with tl.load from the tensors you were given (or their copies)")]
    # the blocks visited, loaded or with every lane masked off: a masked load still runs, and so do the tile
    # products after it (on zeros). Programs of queries walking keys, and programs of keys walking queries
    # (each visit compared with the block of the other tensor the program worked on then: a fused backward's dQ
    # walk with its block of queries, not with the queries its dK, dV walk visited before)
    visited = _visit_pairs(trace, q, k)
    key_visits, query_visits = _hidden_visit_pairs(visited, "k"), _hidden_visit_pairs(visited, "q")
    hidden_visits, visits = key_visits.hidden + query_visits.hidden, key_visits.total + query_visits.total
    first_found = key_visits if key_visits.hidden else query_visits
    held_word = "queries" if first_found is key_visits else "keys"
    if not hidden and not hidden_visits and grads is not None:  # each walk against the block it writes
        outputs = {"dQ": grads[0], "dK": grads[1]}
        for which, against in (("k", "dQ"), ("q", "dK")):
            found = _stored_block_visits(trace, q, k, outputs, which, against)
            if found.hidden:
                first_found, hidden_visits, visits = found, found.hidden, found.total
                held_word = "queries" if which == "k" else "keys"
                break
    # no slack, as in the forward's check: a loop that starts at the block holding the first key of the block
    # the program works on, or stops at the block holding its last query, visits no pair in which every key
    # comes after every query
    if hidden or hidden_visits:
        if hidden:
            counted = f"{hidden} (block of queries, block of keys) pairs of its {pairs}"
            where = example
        else:
            counted = f"{hidden_visits} blocks of the {visits} its loops visited"
            where = first_found.example + (": a masked load still runs, and so do the tile products after it, on "
                                           "zeros" if first_found.masked else "")
        shape = "" if n_q >= n else (
            f" With fewer queries than keys (N_q = {n_q}, N_k = {n}) the mask is still top-left (query i sees keys "
            f"j <= i): the last {n - n_q} keys are seen by no query, and a loop bound shifted by N_k - N_q (the "
            "bottom-right diagonal) walks past the diagonal")
        return [CaseResult(label, "-", False,
                           f"with the causal mask your backward visited {counted} in which every key comes after "
                           f"every query ({where}): P is 0 there, and dQ, dK, dV gain nothing from them. Skip them, "
                           "as the causal forward does: a program of keys starts its loop at the block of queries "
                           "that holds its first key; a program of queries stops its loop at the block of keys "
                           "that holds its last query, its diagonal; a loop must stop there, not only mask."
                           f"{_in_turn_note(first_found, held_word)}"
                           f"{shape}")]
    return _backward_passes_check(counted, label, k, v)


def _backward_passes_check(trace, label, k, v) -> list[CaseResult]:
    """Each program of a backward loads each element of K, and of V, once at most (one block of at most 128 keys
    more is slack), counting the loads of every program of an earlier kernel of the backward whose stores it
    read where what it read was computed from that tensor (:meth:`Trace.through_launches`, its lineage): a dQ
    pass that ignores the forward's lse and rebuilds each row's max and sum with a first pass over the keys
    reads K twice for a block of queries; a row sum D = rowsum(dO * O) stored by a dQ kernel that walks K and
    read by the dK, dV kernel hands nothing of K over."""
    n_k, d = k.shape[-2], k.shape[-1]
    trace = _with_derived_passes(trace)  # a walk of K * s (a loaded s) is a walk of K
    for which, tensor in (("k", k), ("v", v)):
        if tensor is None:
            continue
        own: dict = {}
        tokens = set()  # (launch index, first byte) of the arguments that are the tensor (or copies of it)
        for index, launch in enumerate(trace.launches):
            for name, start, *_ in launch.args:
                if _rows_in(trace, launch, name, tensor) is not None:
                    tokens.add((launch.index, start))
                    for program, count in launch.per_program.get(name, {}).items():
                        own[(index << 32) | program] = own.get((index << 32) | program, 0) + count
        most, node, earlier = trace.heaviest(own, lambda lineage: not tokens.isdisjoint(lineage))
        if most > (n_k + min(n_k, 128)) * d:
            whose = _whose(trace, which, tensor)
            index, program = node >> 32, node & 0xFFFFFFFF
            mine = own.get(node, 0)
            kernels = sorted({trace.launches[a >> 32].kernel for a in earlier if own.get(a, 0)})
            who = f"{_program_label(program, trace.launches[index].grid)} of {trace.launches[index].kernel}"
            if kernels:
                counted = (f"{who} loaded {mine} elements of {whose} and the programs of {', '.join(kernels)} "
                           f"whose results it read, computed from {which}, {most - mine} more: {most} in all")
            else:
                counted = f"{who} loaded {most} elements of {whose}"
            return [CaseResult(label, "-", False,
                               f"one program of your backward, {counted} ({most / (n_k * d):.2g} times each of "
                               f"the {n_k} x {d}). Each program walks the keys once, and P = exp(S - lse) is "
                               "recomputed from the forward's lse (one load per row of queries): nothing about a "
                               f"row needs a second walk over {which}. A first pass over the keys that rebuilds "
                               "each row's max and sum, in the dQ kernel or in a kernel of its own, or a program "
                               "that loads its block of keys again for every block of queries, reads "
                               f"{which} more than once{_recast_note(trace)}")]
    return []


def _autograd_case(gen, device, dtype, b, h, n_q, n_k, d, causal, spread, label, blocks=False, repeat=False):
    """``repeat``: called a second time on the same tensors with new values in them (after the first call's
    backward), both calls checked, and the first call's O must be unchanged by the second."""

    def run(runner):
        import torch

        # q, k, v and dO each laid out its own way (ATTENTION_LAYOUTS: heads interleaved, a slice of a fused
        # projection, rows padded, contiguous), as model code hands them over: q from one projection, k and v
        # from another, dO as autograd hands it when O's heads are merged, o.transpose(1, 2).reshape(B, N, H d)
        # (The long case that counts the Function's blocks takes them contiguous; its checks count the loads of
        # the grader's own k and of the copies made of it, :class:`Image`.)
        values = _attention_inputs(gen, device, dtype, b, h, n_q, n_k, d, spread)
        do0 = draw_do()
        kinds = ("contiguous",) * 4 if blocks else _attention_layouts(gen, 4, device, n_q, n_k)
        q, k, v = (runner.input(t, strides=_layout_strides(kind, t.shape)).requires_grad_(True)
                   for t, kind in zip(values, kinds))
        do = runner.input(do0, strides=_layout_strides(kinds[3], do0.shape))
        if getattr(runner.fn, "apply", None) is None:
            return [CaseResult(label, "-", False, "expected a torch.autograd.Function subclass (with .apply)")]
        results, o_first = one(runner, q, k, v, do, "")
        if repeat and all(r.passed for r in results):  # the same tensor objects, new contents
            kept = o_first.detach().clone()
            with torch.no_grad():
                for t, new in zip((q, k, v, do), _attention_inputs(gen, device, dtype, b, h, n_q, n_k, d, spread)
                                  + (draw_do(),)):
                    t.copy_(new)
            results += one(runner, q, k, v, do, " (second call: same q, k, v, dO, new values)")[0]
            if all(r.passed for r in results) and not torch.equal(o_first.detach(), kept):
                results.append(CaseResult(label, "o", False,
                                          "the O your Function returned from the first call changed when it was "
                                          "called again: a later call overwrote an earlier result (an output "
                                          "kept between calls); allocate each output inside the call"))
        return results

    def draw_do():
        do0 = _randn(gen, (b, h, n_q, d), dtype, device)
        if spread == "canary":
            do0 = (1.0 / 3.0 + 0.01 * do0.float()).to(dtype)
        return do0

    def one(runner, q, k, v, do, second):
        import torch

        apply = runner.fn.apply
        started = []  # the launches made before the backward began
        grads = {}

        def backward(o):
            started.append(len(_recording_trace().launches) if _recording_trace() is not None else 0)
            # torch.autograd.grad rather than o.backward: the gradients come back as the Function returns them,
            # with no copy by the engine into the strided layout of q.grad (it would allocate inside the watch)
            if isinstance(o, torch.Tensor) and o.requires_grad:
                grads["qkv"] = torch.autograd.grad(o, (q, k, v), do, allow_unused=True)
                return grads["qkv"]  # looked at by Runner.call (no attributes of the reader's on them)

        o, _ = runner.call(q, k, v, causal, names=("q", "k", "v"), fn=apply, after=backward, known=(do,))
        if not isinstance(o, torch.Tensor):
            return [CaseResult(label, "o" + second, False, f"Fn.apply returned {type(o).__name__}, expected the "
                               "output O (a tensor)")], None
        if not o.requires_grad:
            return [CaseResult(label, "o" + second, False, "Fn.apply returned an O that does not require grad: "
                               "the backward would never run")], None
        results = _autograd_results(label, q, k, v, do, o, grads.get("qkv", (None,) * 3), causal, dtype, device,
                                    second, spread)
        if blocks and started and all(r.passed for r in results):
            results += _autograd_blocks_check(runner, label, {"q": q, "k": k, "v": v, "do": do, "o": o},
                                              grads["qkv"], causal, started[0])
        return results, o

    return run


def _autograd_results(label, q, k, v, do, o, grads, causal, dtype, device, second="", spread="normal"
                      ) -> list[CaseResult]:
    """O and the gradients (dq, dk, dv) of one call of the reader's Function compared with float64 (the inputs'
    values as they were at the forward)."""
    (_, _, _, d), n_k = q.shape, k.shape[-2]
    ref = _attention_reference(q, k, v, causal)
    o64, dq, dk, dv = _backward_reference(q, k, v, do, causal)
    canary = spread == "canary"
    bound_o, bound_lse = _forward_bounds(ref, v, dtype, n_k, d, canary=canary)
    tol_o = _bound("2 (u_out |o| + eta) + 2 (2 Delta + u_p + (N_k + d + 8) 2^-24) (P|V|)", "as in L5")
    results = [compare(label, "o" + second, o, o64, tol_o, scale=bound_o, dtype=dtype, device=device)]
    if spread == "early":
        results = [_early_scores_message(results[0], o)]
    # the backward reads the reader's own o and lse: their errors (at most the forward's bounds) add to D
    # and to the recomputed P
    bounds = _backward_bounds(ref, q, k, v, do, dtype, (dq, dk, dv), canary=canary,
                              forward_bounds=(bound_o, bound_lse))
    # The reader's own forward and backward compiled for a GPU (exp2 with log2(e) folded into the scale,
    # their own order of roundings) add error that the itemised bound does not list: on the H200
    # (2026-12-01, fp16) the course's solution exceeded it on 1 element of 6208 of dV. This exercise
    # grades the wiring of the Function; L6.backward grades the precision: allow twice the bound, except
    # in the accumulation case (q = 0: P is exact, so the bound is the accumulators' alone)
    if not canary:
        bounds = tuple(2 * b for b in bounds)
    tols = {name: _bound(f"2 x [{t.scale_name}]", t.reason + "; doubled: your own forward's rounding")
            if not canary else t for name, t in _grad_tolerances(dtype).items()}
    for name, t, want, bound in zip(("dq", "dk", "dv"), grads, (dq, dk, dv), bounds):
        if t is None:
            results.append(CaseResult(label, name + second, False, f"{name} is None after the backward: "
                                      "the Function's backward must return a gradient for q, k and v"))
            continue
        results.append(compare(label, name + second, t, want, tols[name], scale=bound, dtype=dtype,
                               device=device))
    return results


#: What the reader's Function is told when a call's backward did not get that call's own tensors.
_SAVE_ON_CTX = ("keep what the backward needs on ctx: the tensors with ctx.save_for_backward(q, k, v, o, lse) in "
                "forward, read back with ctx.saved_tensors in backward, and flags as attributes (ctx.causal = "
                "causal); never on the class, the module or in a global, which the next call overwrites")


def _autograd_layers_case(gen, device, label):
    """Two calls of the reader's Function (two attention layers, as in a model: other shapes, one causal and
    one not), then one backward through both: each call's backward must get its own call's tensors and flag,
    and every gradient of both is compared."""

    def run(runner):
        import torch

        if getattr(runner.fn, "apply", None) is None:
            return [CaseResult(label, "-", False, "expected a torch.autograd.Function subclass (with .apply)")]
        f32 = torch.float32
        # the first layer the larger: a backward handed the second layer's tensors reads inside them
        layers = ((1, 2, torch_randint(gen, 40, 60), torch_randint(gen, 40, 60), 16, True),
                  (1, 2, torch_randint(gen, 20, 36), torch_randint(gen, 20, 36), 16, False))
        inputs, dos = [], []
        for b, h, n_q, n_k, d, causal in layers:
            inputs.append(tuple(runner.input(t).requires_grad_(True)
                                for t in _attention_inputs(gen, device, f32, b, h, n_q, n_k, d, "normal")))
            dos.append(runner.input(_randn(gen, (b, h, n_q, d), f32, device)))
        grads: dict = {}

        def two_layers(*flat):
            return tuple(runner.fn.apply(*flat[3 * i:3 * i + 3], layer[-1]) for i, layer in enumerate(layers))

        def backward(outs):
            if not (isinstance(outs, tuple) and all(isinstance(o, torch.Tensor) and o.requires_grad
                                                    for o in outs)):
                return
            try:
                grads["all"] = torch.autograd.grad(outs, [t for three in inputs for t in three], dos,
                                                   allow_unused=True)
                return grads["all"]
            except RuntimeError as exc:  # a gradient of the other layer's shape, as autograd words it
                grads["error"] = exc

        flat = [t for three in inputs for t in three]
        outs, _ = runner.call(*flat, names=("q1", "k1", "v1", "q2", "k2", "v2"), fn=two_layers, after=backward,
                              known=tuple(dos))
        if not all(isinstance(o, torch.Tensor) and o.requires_grad for o in outs):
            return [CaseResult(label, "o", False, "Fn.apply returned something other than an O that requires "
                               "grad")]
        if "error" in grads:
            exc = grads["error"]
            return [CaseResult(label, "-", False,
                               "two calls of your Function, then one backward through both (two attention layers): "
                               f"the backward raised {type(exc).__name__}: {str(exc).splitlines()[0][:200]}. Each "
                               f"call's backward must get that call's tensors: {_SAVE_ON_CTX}")]
        from dataclasses import replace

        results = []
        for i, ((_, _, _, _, _, causal), (q, k, v), do, o) in enumerate(zip(layers, inputs, dos, outs)):
            found = _autograd_results(label, q, k, v, do, o, grads["all"][3 * i:3 * i + 3], causal, f32, device,
                                      f" (layer {i + 1})")
            why = ("two calls of your Function ran before one backward (two attention layers, the first causal, "
                   f"the second full, other sizes), and layer {i + 1}'s gradients are wrong: its backward did not "
                   f"get its own call's tensors or flag; {_SAVE_ON_CTX}")
            results += [r if r.passed or r.output.startswith("o") else
                        replace(r, message="; ".join(m for m in (r.message, why) if m)) for r in found]
        return results

    return run


def _autograd_inplace_case(gen, device, label):
    """One call of the reader's Function per tensor the backward may need (q, k, v and the O returned): after
    the forward, that tensor is changed in place (as an optimizer step or a reused buffer does), then the
    backward runs. Autograd refuses it ("modified by an inplace operation") when the tensor was saved with
    ctx.save_for_backward; a backward that kept copies gives the gradients of the forward's values. Anything
    else (a plain attribute, ctx.q = q, or a class attribute) reads the new values and returns wrong gradients
    without a word; ctx.o = o also makes a cycle (O, its grad_fn, ctx) that keeps every O alive."""

    def run(runner):
        import torch

        if getattr(runner.fn, "apply", None) is None:
            return [CaseResult(label, "-", False, "expected a torch.autograd.Function subclass (with .apply)")]
        f32 = torch.float32
        n_q, n_k = torch_randint(gen, 17, 33), torch_randint(gen, 17, 33)
        results = []
        for which in ("q", "k", "v", "o"):
            q, k, v = (runner.input(t).requires_grad_(True)
                       for t in _attention_inputs(gen, device, f32, 1, 1, n_q, n_k, 16, "normal"))
            do = runner.input(_randn(gen, (1, 1, n_q, 16), f32, device))
            target_shape = q.shape if which in ("q", "o") else k.shape
            other = runner.input(3.0 * _randn(gen, tuple(target_shape), f32, device) + 1.0)
            kept = runner.input({"q": q, "k": k, "v": v}[which].detach()) if which != "o" else None
            outcome: dict = {}

            def backward(o, which=which, q=q, k=k, v=v, do=do, other=other, kept=kept, outcome=outcome):
                if not (isinstance(o, torch.Tensor) and o.requires_grad):
                    return
                target = {"q": q, "k": k, "v": v, "o": o}[which]
                with torch.no_grad():
                    target.copy_(other)
                try:
                    outcome["grads"] = torch.autograd.grad(o, (q, k, v), do, allow_unused=True)
                    return outcome["grads"]
                except RuntimeError as exc:
                    if "modified by an inplace operation" not in str(exc):
                        raise
                    outcome["refused"] = True
                finally:
                    if kept is not None:
                        with torch.no_grad():
                            target.copy_(kept)

            o, _ = runner.call(q, k, v, True, names=("q", "k", "v"), fn=runner.fn.apply, after=backward,
                               known=(do, other) + ((kept,) if kept is not None else ()))
            if not isinstance(o, torch.Tensor) or not o.requires_grad:
                return [CaseResult(label, "o", False, "Fn.apply returned something other than an O that "
                                   "requires grad")]
            if outcome.get("refused"):
                continue
            found = _autograd_results(label, q, k, v, do, o, outcome["grads"], True, f32, device,
                                      f" ({which} changed)")[1:]  # the gradients (O may be the tensor changed)
            if not all(r.passed for r in found):
                what = "the O it returned" if which == "o" else which
                results.append(CaseResult(
                    label, f"dq, dk, dv ({which} changed)", False,
                    f"after the forward, {what} was changed in place (as an optimizer step or a reused buffer "
                    "does) before the backward: your backward read the new values and returned wrong gradients "
                    "(autograd raises \"modified by an inplace operation\" here when the tensor was saved with "
                    "ctx.save_for_backward: a plain attribute such as ctx.q = q, or a class attribute, skips that "
                    "check, and ctx.o = o keeps every O alive in a cycle with its grad_fn). Save q, k, v, o and "
                    "lse with ctx.save_for_backward(...) in forward, read them with ctx.saved_tensors in "
                    "backward"))
                return results
        return results or [CaseResult(label, "dq, dk, dv", True)]

    return run


def _recording_trace():
    """The trace being recorded (inside a call of the reader's function), or None."""
    from gpuperf.grading import algorithm

    return algorithm._TRACE


# --------------------------------------------------------------------------------------------------------
# The exercises.
# --------------------------------------------------------------------------------------------------------


def _policy(key, **kw) -> Policy:
    return Policy(key, **kw)


EXERCISES: dict[str, Exercise] = {
    e.key: e
    for e in (
        Exercise("L1.time", "roofline lower bound on the time of an operation",
                 "gpuperf.labs.solutions:time_lower_bound_s", _l1_time_cases, needs_torch=False),
        Exercise("L1.matmul_bytes", "bytes a matmul must move", "gpuperf.labs.solutions:matmul_bytes_moved",
                 _l1_bytes_cases, needs_torch=False),
        Exercise("L2.add", "vector add in Triton", "gpuperf.kernels.labs.l2:add", _l2_add_cases,
                 policy=_policy("L2.add", int64_offsets=True)),
        Exercise("L2.chain", "fused elementwise chain in Triton", "gpuperf.kernels.labs.l2:chain",
                 _l2_chain_cases, policy=_policy("L2.chain", int64_offsets=True)),
        Exercise("L3.softmax", "fused softmax, one row per program", "gpuperf.kernels.labs.l3:softmax_rows",
                 _softmax_cases_for(False), policy=_policy("L3.softmax", wide_offsets=True)),
        Exercise("L3.online", "online softmax for long rows", "gpuperf.kernels.labs.l3:online_softmax",
                 _softmax_cases_for(True), policy=_policy("L3.online", wide_offsets=True)),
        Exercise("L4.outer", "outer product, a 2-D tiled kernel", "gpuperf.kernels.labs.l4:outer",
                 _outer_cases, policy=_policy("L4.outer", wide_offsets=True)),
        Exercise("L4.matmul", "tiled matmul", "gpuperf.kernels.labs.l4:matmul", _matmul_cases,
                 policy=_policy("L4.matmul", wide_offsets=True)),
        Exercise("L5.tiled", "FlashAttention forward in plain PyTorch (blocks in a loop)",
                 "gpuperf.kernels.labs.l5:tiled_attention", _tiled_cases,
                 policy=_policy("L5.tiled", allowed=None, refused=SOFTMAX_LIKE_OPS, refused_names=SOFTMAX_LIKE_NAMES,
                                kernels=False,
                                why="asks for the online softmax over blocks of keys, in plain PyTorch")),
        Exercise("L5.forward", "FlashAttention forward (o, lse)", "gpuperf.kernels.labs.l5:attention_forward",
                 _l5_cases_for(False), policy=_policy("L5.forward", wide_offsets=True, within_head=True)),
        Exercise("L5.causal", "FlashAttention forward with the causal mask",
                 "gpuperf.kernels.labs.l5:attention_forward", _l5_cases_for(True),
                 policy=_policy("L5.causal", wide_offsets=True, within_head=True)),
        Exercise("L6.backward", "FlashAttention backward (dq, dk, dv)",
                 "gpuperf.kernels.labs.l6:attention_backward", _l6_cases,
                 policy=_policy("L6.backward", wide_offsets=True, within_head=True)),
        Exercise("L6.autograd", "your forward and backward as one torch.autograd.Function",
                 "gpuperf.kernels.labs.l6:FlashAttention", _autograd_cases,
                 # the lab's cell imports the course's L5 forward: the exercise is the backward and the glue
                 policy=Policy("L6.autograd", wide_offsets=True, within_head=True, course_kernels=frozenset(
                     {"gpuperf.kernels.labs.l5.attention_forward_kernel"}))),
    )
}

__all__ = ["EXERCISES", "Case", "Exercise", "ForbiddenCall", "Runner", "TRITON_OPS"]
