"""Graders of the labs: run the reader's function on fresh random inputs and say precisely what is wrong.

Each exercise of a lab has a key (``"L2.add"``) in :data:`EXERCISES`. :func:`grade_report` runs the reader's
function on a list of cases drawn from a fresh random seed (awkward sizes included: one element, sizes that
are not multiples of any block, masked tails, rows longer than a block, N_q != N_k, inputs whose rows are
strided), compares every output with a float64 reference and returns a :class:`GradeReport`: for the first
failing case, the first wrong index, the reader's value and the expected one, the largest error, the
tolerance used and why that tolerance. It never shows the solution.

The inputs are chosen so that only the algorithm a lab teaches passes: softmax rows whose offsets differ
within and between rows (up to +-800) with the max late and in a different column per row, attention
scores spread wide enough that exp overflows without the running max, maxima that arrive in the last key
block, non-negative matmul inputs with K = 2048 and attention cases with thousands of keys (where a 16-bit
accumulator falls outside tolerances scaled by the output's own magnitude), and block sizes the grader picks.
The tolerances are derived in :mod:`gpuperf.grading.exercises`.

What the reader's function may do while it runs is enforced at torch's dispatch level (an allow-list of
operators, data kept inside torch, the course's kernels refused by what runs, tamper checks) and, under the
Triton interpreter, at every load and store of a kernel (out-of-bounds accesses, dots and loads counted):
:mod:`gpuperf.grading.watch`. Every buffer sits between guard bands; the inputs are copied before the call and
must be unchanged after it; the float64 reference is computed only after the reader's function returned.
An exception (a stub not yet written, a compile error) is reported as such, never raised, so a lab as
shipped runs top to bottom.

:func:`grade` is what a lab calls: it prints the report and returns the function later cells should use (the
reader's once it passes, the course's solution until then). With the environment variable
``GPUPERF_LAB_SOLUTIONS=1`` set when the grader is imported it grades the course's solution
(``gpuperf.kernels.labs``) instead of the reader's cell, prints ``SOLUTION OK`` (not ``PASSED``) and raises
``AssertionError`` if that fails: that is how CI runs every lab with the solutions in place.

torch is imported inside the functions (``import gpuperf.grading`` stays light).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sys
from typing import Callable, Iterator, Sequence

from gpuperf.grading.core import (SOLUTIONS_ENV_VAR, UNIT_ROUNDOFF, CaseResult, GradeReport, Tolerance,
                                  _result_of_exception, compare, dtype_name, elementwise_tolerance, guarded,
                                  interpreter_dot_as_on_gpu, matmul_tolerance, normwise_tolerance,
                                  poison_memory, reduction_tolerance, row_strided, softmax_bound,
                                  solutions_requested)
from gpuperf.grading.exercises import (EXERCISES, Case, CallFailed, Exercise, Runner, _device)
from gpuperf.grading.watch import (TRITON_OPS, ForbiddenCall, OutOfBounds, Policy, Watch,
                                   forget_earlier_calls, plain_guarded, triton_hooks)
from gpuperf.grading import frontend as _frontend  # noqa: F401  (imported before the baseline is taken)
from gpuperf.grading import dataflow as _dataflow  # noqa: F401  (imported before the baseline is taken)
from gpuperf.grading import watch as _watch



#: Whether a grader on a GPU machine also runs its interpreted cases (the kernel through Triton's interpreter
#: on CPU tensors, in the same process: the algorithm counted on every machine, and TF32 on GPUs without it).
#: Off by default: on the H200 (Triton 3.6, NumPy 2.5) the interpreter failed on kernels whose loops have
#: runtime bounds ("only 0-dimensional arrays can be converted to Python scalars"), so a correct kernel was
#: refused; gpuperf.kernels._interpreter_compat fixes that conversion, and ``interpreted_launches`` the names
#: Triton 3.6's interpreter lost ("interpreter_semantic" not defined). With both, every lab's course solutions
#: pass with it on (an H100, 2026-12-05), but not every grader test has run that way (bench/NOTES.md).
#: ``GPUPERF_GRADING_INTERPRET_ON_GPU=1`` turns them on (see labs/README.md, "What the grader cannot see").
#: Under the interpreter (a CPU) every case runs as before.
INTERPRET_ON_GPU = __import__("os").environ.get("GPUPERF_GRADING_INTERPRET_ON_GPU", "0") == "1"

def _os_entropy():
    """The operating system's random bytes, taken from the ``posix`` (or ``nt``) module itself when the grader
    is imported: a later cell that rebinds ``secrets``, ``random`` or ``os.urandom`` cannot fix the seed of
    the next grade (rebinding this module's name is reported as tampering)."""
    import importlib
    import types

    for name in ("posix", "nt"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        urandom = getattr(module, "urandom", None)
        if isinstance(urandom, types.BuiltinFunctionType):
            return urandom
    import os  # pragma: no cover - neither module: the standard library's

    return os.urandom


_ENTROPY = _os_entropy()


def _fresh_seed() -> int:
    return int.from_bytes(_ENTROPY(4), "little") & (2**31 - 1)


def _is_solution(ex: Exercise, fn) -> bool:
    """The course's own kernels may run only when the function graded is the exercise's solution itself (by
    identity: a wrapper around it, or a copy, is the reader's function), or where the exercise's
    :class:`Policy` hands them to the reader (``course_kernels``)."""
    try:
        from gpuperf.labs import is_pinned

        return fn is _solution_of(ex) or is_pinned(ex.solution, fn)
    except Exception:  # pragma: no cover - a broken install: grade as the reader's
        return False


def _solution_of(ex: Exercise) -> Callable:
    """The exercise's solution as its own module defined it (``gpuperf.labs._PINNED``, filled by each solution
    module as it is imported): a cell that later rebinds the name in the course's module
    (``gpuperf.kernels.labs.l5.attention_forward = mine``) neither unlocks the course's kernels for its own
    function nor changes what :func:`solution` returns (and the rebinding is reported as tampering, whichever
    was imported first: ``watch._solutions_rebound``)."""
    from gpuperf.labs import _PINNED

    bound = ex.load_solution()  # imports the module, which pins its functions as its import ends
    return _PINNED.get(ex.solution, bound)


def _exercise(key: str) -> Exercise:
    if key not in EXERCISES:
        raise ValueError(f"exercise must be one of {sorted(EXERCISES)}, got {key!r}")
    return EXERCISES[key]


def grade_report(key: str, fn: Callable, *, seed: int | None = None, device: str | None = None,
                 graded: str = "yours", only: Callable[[str], bool] | None = None,
                 stop_at_first_failure: bool = False) -> GradeReport:
    """Grade ``fn`` on the cases of exercise ``key``; never raises for a wrong or crashing ``fn``.

    ``seed`` (default: fresh, from the OS) draws the inputs; ``device`` defaults to ``"cuda"`` when kernels
    run compiled on a GPU, else ``"cpu"`` (the Triton interpreter). ``only`` (a predicate on case labels)
    and ``stop_at_first_failure`` run fewer cases (the tests of the graders use them to stay fast). The
    course's own kernels run only inside the exercise's solution itself (:func:`_is_solution`). Every trace
    and profile function is off while it grades (:func:`_trace_and_profile_off`), unless one of the reader's
    is set, which the grade then refuses by name."""
    arguments = dict(seed=seed, device=device, graded=graded, only=only,
                     stop_at_first_failure=stop_at_first_failure)
    if _hooks_set():  # the reader's hook, as far as it can be told: refused by name
        return _grade_report(key, fn, **arguments)
    with _trace_and_profile_off():
        return _grade_report(key, fn, **arguments)


@contextlib.contextmanager
def _trace_and_profile_off():
    """``sys.settrace`` and ``sys.setprofile`` hooks (and ``threading``'s, for new threads) off for a whole grade
    and put back after it. A hook that :func:`_readers_hook` takes for a debugger's or a profiler's may still be
    the reader's in disguise (round 21: a method-wrapper, a partial, a decorator's wrapper, callbacks put on a
    ``bdb.Bdb`` instance, copying the expected output over the reader's when the comparison starts): off, it
    cannot run inside the grader. A debugger does not stop in the grader's code meanwhile."""
    import threading

    saved = (sys.gettrace(), sys.getprofile(), getattr(threading, "gettrace", lambda: None)(),
             getattr(threading, "getprofile", lambda: None)())
    sys.settrace(None)
    sys.setprofile(None)
    threading.settrace(None)
    threading.setprofile(None)
    try:
        yield
    finally:
        sys.settrace(saved[0])
        sys.setprofile(saved[1])
        threading.settrace(saved[2])
        threading.setprofile(saved[3])


def _grade_report(key: str, fn: Callable, *, seed: int | None = None, device: str | None = None,
                  graded: str = "yours", only: Callable[[str], bool] | None = None,
                  stop_at_first_failure: bool = False) -> GradeReport:
    """What :func:`grade_report` returns, graded with whatever trace and profile functions are set."""
    ex = _exercise(key)
    if not callable(fn):
        raise ValueError(f"fn must be callable, got {fn!r}")
    allow_course_kernels = _is_solution(ex, fn)
    if seed is None:
        seed = _fresh_seed()
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    tampered = _tampering(fn) or _hooks_set()
    if tampered:
        return GradeReport(key, ex.title, seed, "-", (CaseResult("before any case", "-", False, tampered),),
                           graded)
    if not ex.needs_torch:
        return _grade_plain(ex, fn, seed, device, graded)
    import torch

    if device is None:
        device = _device()
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    gen = torch.Generator().manual_seed(seed)
    results: list[CaseResult] = []
    notes: list[str] = []
    import numpy as np

    # numpy warnings (overflow in a wrong kernel under the interpreter) would print on the lab's page; the
    # report says what went wrong
    from gpuperf.grading import algorithm as _algorithm

    passed_runs: list = []  # (case, the tile products' call sites it ran) of each case that passed on the CPU
    float32_cases: dict = {}  # of those whose outputs are all float32: label -> elements of the outputs
    with _this_grades_calls(), triton_hooks(), interpreter_dot_as_on_gpu(device == "cpu"), \
            np.errstate(all="ignore"):
        for case in ex.cases(gen, device):
            if only is not None and not only(case.label):
                continue
            if case.interpret and device != "cpu" and not INTERPRET_ON_GPU:
                continue
            if stop_at_first_failure and any(not r.passed for r in results):
                break
            runner = Runner(fn, case.label, ex.get_policy(), case.device or device, allow_course_kernels)
            runner.notes = notes
            runner.interpret = case.interpret and device != "cpu"
            _algorithm._PERTURB.update(site=None, seen={})
            try:
                case_results = case.run(runner)
            except CallFailed as failed:
                case_results = failed.results
            except Exception as exc:  # the reader's code: report, never raise
                case_results = [_result_of_exception(case.label, exc)]
            case_results = [_nan_cause(r, runner) for r in case_results]
            if all(r.passed for r in case_results):
                case_results = case_results + (_launched_check(runner, case.label)
                                               or _wide_offsets_check(runner, case.label)
                                               or _grid_limit_check(runner, case.label)
                                               or _shared_memory_check(runner, case.label, ex.key)
                                               or _stored_again_check(runner, case.label)
                                               or _address_outer_check(runner, case.label, ex.key))
            hooked = _hooks_set()  # set while the case ran, outside the reader's call (where the audit hook
            if hooked:             # refuses them): nothing of this grade can be trusted
                return GradeReport(key, ex.title, seed, "-", (CaseResult(case.label, "-", False, hooked),), graded)
            results.extend(r if r.case == case.label else _relabel(r, case.label) for r in case_results)
            if device == "cpu" and ex.key in _PRODUCT_EXERCISES and all(r.passed for r in case_results):
                passed_runs.append((case, dict(_algorithm._PERTURB["seen"])))
                outputs = [t for t in list(runner.returned) + [v for v, _ in getattr(runner, "_given", [])]
                           if isinstance(t, torch.Tensor)]
                if outputs and all(t.dtype == torch.float32 for t in outputs):
                    float32_cases[case.label] = sum(t.numel() for t in outputs)
        # a whole grade only (``only`` picks cases for tests: a one-key case alone cannot show the scores' product
        # mattering)
        if passed_runs and only is None and all(r.passed for r in results):
            results.extend(_products_matter(ex, fn, passed_runs, allow_course_kernels, gen,
                                            float32_cases=dict(float32_cases)))
    name = torch.cuda.get_device_name() if device == "cuda" else \
        "CPU (Triton interpreter)" if ex.get_policy().kernels else "CPU"
    return GradeReport(key, ex.title, seed, name, tuple(results), graded, tuple(notes))


#: The exercises whose tile products are graded as tl.dot's: each call site of tl.dot must change the output
#: when its products change (:func:`_products_matter`).
_PRODUCT_EXERCISES = frozenset(("L4.matmul", "L5.tiled", "L5.forward", "L5.causal", "L6.backward", "L6.autograd"))


def _products_matter(ex, fn, passed_runs, allow_course_kernels, gen, cases_tried: int = 3,
                     controls: int = 2, float32_cases: dict | None = None) -> list:
    """Round 28 (decoys): under the interpreter, each ``tl.dot`` call site of the reader's kernels must matter:
    with each product made there changed by noise of its own size, a case that passed must fail. A product
    multiplied by 0, or made of a tile of zeros, beside the real work (done element by element, by broadcasts in
    any disguise) changes nothing. Round 29: each site is tried on up to ``cases_tried`` of the passed cases that
    ran it (a one-key case cannot show a product of scores mattering; a later one can), in an order drawn from
    ``gen``, with ``controls`` reruns left unperturbed among them at places drawn from ``gen``: each must pass
    (a function that counts its calls and goes wrong once the cases are over fails them), and one rerun with every
    site perturbed at once, one pattern of noise per tile shape (two decoys whose products cancel each matter
    alone). Round 30, after those: a rerun with every product made 0 must fail on one of the first
    ``cases_tried`` cases (a cancelling pair of transposed dots), and a rerun with every product changed by 2^-22
    of itself must move, by a bit, an output of a case whose outputs are all float32 (``float32_cases``: their
    labels and output elements, the smallest case of 256 or more tried first; None: any), against an
    unperturbed rerun of the same case (a guard that uses its dot only where the dot disagrees with a lazy sum).
    Round 33, last: with every call of each site but the first in each program perturbed, a case whose programs
    call a site more than once must fail (a dot run every block but used for the first block only), and so with
    only the first calls perturbed (used for the last block only); cases where no program calls a site twice
    are passed over (up to ``cases_tried + 3`` cases are run, ``cases_tried`` of them read). Round 34, in L4 only:
    with every product doubled, the first ``cases_tried`` cases must pass against a reference of 2 A B.
    Returns one failing result, or none."""
    import torch

    from gpuperf.grading import algorithm as _algorithm

    def rerun(case, site, outputs: list | None = None) -> bool:
        runner = Runner(fn, case.label, ex.get_policy(), case.device or "cpu", allow_course_kernels)
        runner.notes = []
        _algorithm._PERTURB.update(site=site, seen={}, calls={})
        try:
            return all(r.passed for r in case.run(runner))
        except Exception:  # noqa: BLE001 - any failure shows the products reached the output
            return False
        finally:
            _algorithm._PERTURB.update(site=None, seen={})  # (its "calls": how often each site ran)
            if outputs is not None:  # what the calls returned or wrote into the grader's buffers, as bits
                outputs.extend(t.detach().cpu().clone() for t in
                               list(runner.returned) + [v for v, _ in getattr(runner, "_given", [])]
                               if isinstance(t, torch.Tensor))

    named: dict = {}
    places: dict = {}  # the place in the kernel: its sites (launched from several lines of the reader's)
    for _, sites in passed_runs:
        for site, (shown, inner) in sites.items():
            if site not in named:
                named[site] = shown
                places.setdefault(inner, []).append(site)
    if not named:
        return []
    # a place matters where one of its sites does (round 29's review: a tuner's launches of the same kernel,
    # whose outputs are thrown away, are sites of their own); and every site at once (round 29: two decoys whose
    # products cancel, d1 - d2, each matter alone), on the passed case that ran the most sites
    sites = list(places.values()) + (["every"] if len(named) >= 2 else [])
    order = [sites[i] for i in torch.randperm(len(sites), generator=gen).tolist()]
    at = sorted(torch.randint(0, len(order) + 1, (controls,), generator=gen).tolist())
    picks = torch.randint(0, min(len(passed_runs), cases_tried), (controls,), generator=gen).tolist()
    controls_left = list(zip(at, picks))
    known = ["double"] if ex.key == "L4.matmul" else []  # a rerun with a known answer (round 34)
    for k, site in enumerate(order + ["zero", "small", "late", "first"] + known + [None]):
        while controls_left and controls_left[0][0] == k:
            case = passed_runs[controls_left.pop(0)[1]][0]
            if not rerun(case, None):
                return [CaseResult(case.label, "-", False,
                                   "called again after the cases, on a case it had passed, your function failed it: "
                                   "it must give the right answer every time it is called")]
        if site is None:
            break
        if site == "every":
            case = max(passed_runs[:cases_tried], key=lambda run: len(run[1]))[0]
            if rerun(case, site):
                return [CaseResult(case.label, "-", False,
                                   "the tile products of your tl.dot calls cancel out: with the products of every "
                                   "tl.dot changed at once, in the same way where their tiles have the same shape, "
                                   "your function still gave the right answer, so the work was done some other "
                                   "way. Compute the tile products with tl.dot and use them")]
            continue
        if site == "zero":
            # round 30 (10, 12): two dots whose products cancel though their tiles differ in shape (a @ b and
            # (b^T @ a^T)^T) escape "every"; with every product 0 the output must be wrong on some case
            tried = sorted(passed_runs[:cases_tried], key=lambda run: -len(run[1]))
            if all(rerun(case, site) for case, _ in tried):
                return [CaseResult(tried[0][0].label, "-", False,
                                   "your output does not come from your tl.dot products: with every product of "
                                   "every tl.dot made 0, your function still gave the right answer, so the work "
                                   "was done some other way (two products that cancel, say). Compute the tile "
                                   "products with tl.dot and use them")]
            continue
        if site == "small":
            # round 30 (01-09, 11): a guard, where(|d - lazy| <= tol, lazy, d), uses its dot only where the dot
            # disagrees with a sum done some other way; changed by 2^-22 of themselves, honest products move an
            # output of float32 in its last bits, a guarded one not at all (no other dtype can show 2^-22). Review
            # 31: on a case of one output element, 2^-22 of a product can round away: read the smallest case with
            # at least 256 float32 output elements (each moves unless its noise rounds away), else the largest
            def size(run):
                n = (float32_cases or {}).get(run[0].label, 0)
                return (n < 256, n if n >= 256 else -n, -len(run[1]))

            candidates = [run for run in passed_runs if float32_cases is None or run[0].label in float32_cases]
            for case, _ in sorted(candidates, key=size)[:cases_tried]:
                before: list = []
                if not rerun(case, None, before) or not before or \
                        any(t.dtype != torch.float32 for t in before):
                    continue
                after: list = []
                rerun(case, site, after)
                if len(after) == len(before) and all(torch.equal(a, b) for a, b in zip(after, before)):
                    return [CaseResult(case.label, "-", False,
                                       "your output does not follow your tl.dot products: with every product "
                                       "changed by 2^-22 of itself, your float32 output stayed the same to the "
                                       "last bit, so it was computed some other way (a tl.dot used only where it "
                                       "disagrees with a sum done element by element, say). Compute the tile "
                                       "products with tl.dot and use them")]
                break
            continue
        if site == "double":
            # round 34 (01, 05): a decoy dot of real operands wrongly paired (A's rows reversed by B), added, and
            # made again element by element and subtracted, C = E + D - De, moves with every perturbation above;
            # with every product doubled an honest C doubles, C + D - De does not
            tried = passed_runs[:cases_tried]
            for case, _ in tried:
                if not rerun(case, site):
                    return [CaseResult(case.label, "-", False,
                                       "with every product of your tl.dot calls doubled, your C did not come out "
                                       "doubled (C = A B computed with tl.dot doubles exactly), so part of it was "
                                       "computed some other way, beside a dot of the wrong tiles. Compute C's tile "
                                       "products with tl.dot, each tile of A by the matching tile of B")]
            continue
        if site in ("late", "first"):
            # round 33 (r33's 01): a full tl.dot run every block whose product is used for the first block only
            # (the rest made some other way) matters on every rerun above; with every call of a site but its
            # first in each program perturbed ("late"), and with only the first calls perturbed ("first": a dot
            # used for the last block only), a case whose programs call a site twice or more must fail
            repeated, failed = 0, False
            for case, _ in passed_runs[:cases_tried + 3]:
                passed = rerun(case, site)
                if not any(n > 1 for n in _algorithm._PERTURB["calls"].values()):
                    continue  # no program called a site twice: first and later calls are not apart here
                repeated += 1
                if not passed:
                    failed = True
                    break
                if repeated >= cases_tried:
                    break
            if repeated and not failed:
                which = ("every later call of each tl.dot changed (the next blocks of a loop), your function still "
                         "gave the right answer, so only the first call of each program reaches your output"
                         if site == "late" else
                         "the first call of each tl.dot changed (the first block of a loop), your function still "
                         "gave the right answer, so the first call of each program does not reach your output")
                return [CaseResult(case.label, "-", False,
                                   f"with the products of {which}: the work of those blocks was done some other "
                                   "way. Compute every block's tile products with tl.dot and use them")]
            continue
        tried = [(case, one) for one in site for case in [c for c, ran in passed_runs if one in ran][:cases_tried]]
        if not any(rerun(case, one) is False for case, one in tried):
            file, line = named[site[0]]
            return [CaseResult(tried[0][0].label, "-", False,
                               f"the tile products of the tl.dot at line {line} of {os.path.basename(file)} do not "
                               "reach your output: with their values changed, your function still gave the right "
                               "answer, so the work was done some other way (a product multiplied by 0 beside an "
                               "element-by-element one, say). Compute the tile products with tl.dot and use them")]
    return []


def _address_outer_check(runner, label, key) -> list:
    """Review 31: under the interpreter, a float product of two tiles as loaded whose addresses do not change
    along different dimensions (``Launch.address_outer``): a column times a row broadcast in the addresses, a
    matrix product done element by element (L4.matmul, L5, L6)."""
    trace = getattr(runner, "trace", None)
    if key not in _PRODUCT_EXERCISES or trace is None:
        return []
    kernel = next((launch.kernel for launch in trace.launches if getattr(launch, "address_outer", 0)), None)
    if kernel is None:
        return []
    return [CaseResult(label, "-", False,
                       f"your kernel {kernel} multiplies two tiles loaded through addresses that do not change "
                       "along a dimension (a stride of 0, however it was computed), one a column repeated across "
                       "the tile and the other a row repeated down it: each is a broadcast, and their product a "
                       "column times a row, a matrix product done element by element, off the tensor cores. "
                       "Multiply tiles with tl.dot")]


def _stored_again_check(runner, label) -> list:
    """Round 23: an output element stored twice in a call of this case (``Runner.stored_again``, found under the
    interpreter), told once the case's own checks have passed."""
    again = getattr(runner, "stored_again", "")
    return [CaseResult(label, "-", False, again)] if again else []


@contextlib.contextmanager
def _this_grades_calls():
    """A workspace kept between calls is this grade's own (``Watch._carry_over``); forgotten when the grade
    ends, also when it is stopped midway (a KeyboardInterrupt must not leave the watch keeping buffers)."""
    forget_earlier_calls(grading=True)
    try:
        yield
    finally:
        forget_earlier_calls()


def _nan_cause(r: CaseResult, runner) -> CaseResult:
    """A failed case whose output holds NaN, told by its likeliest cause: an atomic that added onto memory
    from torch.empty, else a blank output, else a masked load without ``other=``."""
    return _unset_atomics(r, runner) or _poisoned_lanes(_definite_blank(r, runner), runner)


def _has_nan(r: CaseResult) -> bool:
    import math

    return r.blank or (r.yours is not None and math.isnan(r.yours)) or "NaN" in r.message


def _unset_atomics(r: CaseResult, runner) -> CaseResult | None:
    """An output with NaN after an atomic added onto memory nothing had written (torch.empty: NaN here): say
    so, instead of blaming the arithmetic or a load (see ``watch.unset_atomics_note``). Under the
    interpreter the atomic and the memory are known; on a GPU only that a kernel adds with atomics (its
    TTIR), told after the case's own message. None where it does not apply."""
    from dataclasses import replace

    from gpuperf.grading.watch import unset_atomics_note

    unset, kernels = getattr(runner, "unset_atomics", []), getattr(runner, "atomic_kernels", [])
    if r.passed or not _has_nan(r):
        return None
    if unset:
        return replace(r, blank=False, message=unset_atomics_note(unset))
    if kernels and getattr(runner, "trace", None) is None:
        return replace(r, message=(r.message + "\n" if r.message else "") + unset_atomics_note([], kernels))
    return None


def _definite_blank(r: CaseResult, runner) -> CaseResult:
    """An output NaN everywhere: under the interpreter the grader knows whether a kernel stored anything."""
    from dataclasses import replace

    from gpuperf.grading.core import ALL_NAN_BLANK

    trace = getattr(runner, "trace", None)
    if r.passed or ALL_NAN_BLANK not in r.message or trace is None:
        return r
    if trace.total("stored") == 0:
        return replace(r, message=f"your kernel wrote nothing to {r.output} yet: every element still holds the NaN "
                       "it started with (is the kernel's body still the stub, `pass`?)")
    return replace(r, blank=False,
                   message=f"every element of {r.output} is NaN, although your kernel stored values: it "
                   "computed NaN everywhere (inf - inf, inf / inf or 0 / 0: an exp that overflowed, or a sum of "
                   "exponentials that all underflowed to 0, as with a running max that starts at 0 instead of -inf)")


def _poisoned_lanes(r: CaseResult, runner) -> CaseResult:
    """A NaN output after a masked load without ``other=``: name the load (see ``watch._poison``)."""
    import math
    from dataclasses import replace

    from gpuperf.grading.watch import poisoned_note

    poisoned = getattr(runner, "poisoned", [])
    nan = (r.yours is not None and math.isnan(r.yours)) or "NaN" in r.message
    if r.passed or not poisoned or not nan or r.blank:  # stored nothing: not the lanes
        return r
    return replace(r, message=(r.message + "\n" if r.message else "") + poisoned_note(poisoned))


def _launched_check(runner, label: str) -> list[CaseResult]:
    """A Triton exercise's function must launch a kernel on every call (values written with torch fills or
    copies of numbers computed elsewhere are not a kernel's work)."""
    if not runner.policy.kernels or not getattr(runner, "calls_without_launch", 0):
        return []
    return [CaseResult(label, "-", False,
                       f"your function launched no Triton kernel: {runner.policy.exercise} {runner.policy.why} "
                       "(launch your own kernel on a grid and let it compute and write the output)")]


def _wide_offsets_check(runner, label: str) -> list[CaseResult]:
    """Under the interpreter, for exercises whose kernels index more than one dimension (L3 to L6): no address
    may come from a 32-bit product of the program id with a size or stride (see
    :mod:`gpuperf.grading.algorithm`); past 2^31 elements such a product wraps around."""
    trace, watch = getattr(runner, "trace", None), getattr(runner, "watch", None)
    if not runner.policy.wide_offsets:
        return []
    head = runner.policy.within_head
    count, kernel = trace.wrapping_offsets(within_head=head) if trace is not None else (0, "")
    if not count and watch is not None and watch.counters.wrapping_kernels:  # from the TTIR (a GPU too)
        count, kernel = 1, watch.counters.wrapping_kernels[0]
    if not count and watch is not None and watch.counters.wrapping_masks:
        return [CaseResult(label, "-", False,
                           f"your kernel {watch.counters.wrapping_masks[0]} computes a load's or a store's mask "
                           "from a 32-bit product of the program id (or of an index made from it, such as a row "
                           "or the rows of a block, however it is made: `pid % n_rows`, `pid // tiles_n`) and a "
                           "size it was given, or one made from it (`row * n_cols + cols < (row + 1) * "
                           "n_cols`, `rows * N + cols < M * N`; a size rounded up, `tl.cdiv(n_cols, 16) * 16` or "
                           "`tiles_n * BLOCK_N`, is a size too): past 2^31 elements (8.6 GB of fp32) that product "
                           "wraps around, and the mask drops lanes it should keep or keeps lanes past the end, "
                           "although the addresses are 64-bit. Compare positions within a row or a tile instead "
                           "(`cols < n_cols`, `rows < M`), or convert the program id to a 64-bit integer before "
                           "it is multiplied by a size" + (". " + _SPLIT_HINT if head else ""))]
    if not count:
        return []
    inside = ("Inside one head a block's rows may stay 32-bit, as a loop's keys may: their product with the "
              "row stride is not counted where the same address adds the head's offset computed in 64 bits (the "
              "head's program id converted before it multiplies N and the head dimension). ") if head else ""
    return [CaseResult(label, "-", False,
                       f"your kernel {kernel} computes addresses with a 32-bit product of the program id (or of "
                       "an index made from it, such as the rows of a block) and a size or stride it was given, "
                       "as an argument or as a tl.constexpr (a row times the row stride, a head times N times "
                       "the head dimension): past 2^31 "
                       "elements (8.6 GB of fp32) that product wraps around and the kernel reads and writes other "
                       "rows' memory. Convert the program id (or the index) to a 64-bit integer before it is "
                       "multiplied by a stride or a size; widening the product afterwards is too late. The same "
                       "product added up in 32 bits by a loop that runs as many times as the program id says "
                       "(`for i in range(row): offset += stride`) wraps as well: start such a sum as a 64-bit "
                       "integer. "
                       f"{inside}(The grader reads the kernel, not the grid it will run on at larger sizes: a "
                       "32-bit product of the program id that reaches an address is refused even where your grid "
                       "keeps it below 2^31. An index of rows or tiles widened to 64 bits before a stride "
                       "multiplies it is fine.)" + (" " + _SPLIT_HINT if head else ""))]


#: A split-KV kernel's slice of keys (round 20's h11): the one 32-bit product of a program id the rules let
#: through (:func:`gpuperf.grading.frontend.slice_starts`), and what they still refuse around it.
_SPLIT_HINT = ("A slice of keys may start at the program id times a size given at run time in 32 bits (split-KV: "
               "`lo = split * KEYS_PER_SPLIT` with `split = tl.program_id(2)`) where, in every launch, the last "
               "program's start stays below the longest dimension of the inputs (N_k): it is a position in one "
               "dimension, as a row is. A 32-bit product of such a start (or of a head's index) with a stride "
               "or a size is not: convert the program id before it is multiplied, "
               "`split = tl.program_id(2).to(tl.int64)`.")


#: CUDA's largest grid along its second and third axes (gridDim.y, gridDim.z); the first goes to 2^31 - 1.
GRID_YZ_LIMIT = 65_535


def _grid_limit_check(runner, label: str) -> list[CaseResult]:
    """No launch may ask for more than 65,535 programs along the grid's second or third axis: a GPU refuses
    to launch it (the interpreter runs any grid)."""
    watch = getattr(runner, "watch", None)
    for kernel, grid in (watch.counters.grids if watch is not None else ()):
        if max(grid[1:], default=1) > GRID_YZ_LIMIT:
            return [CaseResult(label, "-", False,
                               f"your kernel {kernel} was launched on a grid of {list(grid)} programs: CUDA allows "
                               f"at most {GRID_YZ_LIMIT:,} programs on axes 1 and 2 of a grid (2^31 - 1 on axis "
                               "0), so a GPU refuses this launch. Put the dimension that grows with the input "
                               "(the rows, the blocks) on the grid's first axis")]
    return []


def _shared_memory_per_block_bytes() -> int:
    """The most shared memory one program (a thread block) can have on an H100 or H200: the SM's 228 KiB
    (:mod:`gpuperf.hardware`) less the 1 KiB the CUDA C++ Programming Guide says is reserved for the system per
    block, 227 KiB = 232,448 B (``cudaDevAttrMaxSharedMemoryPerBlockOptin``). Triton refuses to launch a kernel
    that needs more."""
    from gpuperf.hardware import KiB, get_accelerator

    return int(get_accelerator("H100 SXM").shared_memory_per_sm_bytes) - KiB


SHARED_MEMORY_PER_BLOCK = _shared_memory_per_block_bytes()


#: The exercises whose programs multiply the tiles of one step together (a matmul's a and b; a forward's q, k and
#: v): a backward runs phases (dK and dV over blocks of queries, then dQ over blocks of keys, as Triton's fused
#: tutorial does) whose largest tiles are never held at once, so the sum of each tensor's largest tile is no
#: lower bound there
_SHARED_MEMORY_EXERCISES = ("L4.", "L5.")


def _shared_memory_check(runner, label: str, key: str) -> list[CaseResult]:
    """Under the interpreter, in L4 and L5: the tiles a program's ``tl.dot`` products take as loaded (one of each
    tensor: the q, k and v tiles of one step; a tile changed lane by lane before its product, ``q * scale`` or
    ``k.to(tl.float32)``, counts as the tile it was loaded as: :meth:`Trace.dot_tile_bytes`) must fit in the
    shared memory an H100 gives one program. Meant as a lower bound on what Triton's compiled kernel asks for on
    Hopper (it stages a product's loaded operands in shared memory, and pipelines a loop's loads in two stages
    or more); not measured on a GPU for every layout.
    The interpreter itself runs any block size; on a GPU the launch fails by itself."""
    trace = getattr(runner, "trace", None)
    if trace is None or not runner.policy.kernels or not key.startswith(_SHARED_MEMORY_EXERCISES):
        return []
    total, kernel, tiles = trace.dot_tile_bytes()
    if total <= SHARED_MEMORY_PER_BLOCK:
        return []
    parts = ", ".join(f"{name} {' x '.join(str(n) for n in shape)} x {size} B = {math.prod(shape) * size:,} B"
                      for name, (shape, size) in tiles.items())
    return [CaseResult(label, "-", False,
                       f"your kernel {kernel} multiplies (tl.dot) tiles loaded from {parts}: {total:,} bytes that "
                       "a GPU holds in shared memory together (Triton stages the loaded operands of a product "
                       f"there, each stage of a pipelined loop once more), more than the {SHARED_MEMORY_PER_BLOCK:,} "
                       "B (227 KiB) one program can have on an H100 or H200: the launch "
                       "fails there (OutOfResources), although the interpreter runs any block size. Choose "
                       "smaller blocks where the head size or the element size is large (the block sizes times "
                       "the head size times the bytes of an element, summed over the tiles of one step)")]


def _grade_plain(ex: Exercise, fn, seed: int, device, graded: str) -> GradeReport:
    """Plain-Python exercises (L1): no torch, nothing to watch but the values."""
    import random

    class _Gen:  # the cases read only the seed
        def initial_seed(self):
            return seed

    del random
    results: list[CaseResult] = []
    for case in ex.cases(_Gen(), "cpu"):
        runner = Runner(plain_guarded(fn, ex.key), case.label, ex.get_policy(), "cpu", False)
        try:
            case_results = case.run(runner)
        except Exception as exc:
            case_results = [_result_of_exception(case.label, exc)]
        hooked = _hooks_set()
        if hooked:
            return GradeReport(ex.key, ex.title, seed, "-", (CaseResult(case.label, "-", False, hooked),), graded)
        results.extend(r if r.case == case.label else _relabel(r, case.label) for r in case_results)
    return GradeReport(ex.key, ex.title, seed, "CPU (plain Python)", tuple(results), graded)


def _tampering(fn) -> str:
    """Why ``fn`` is not graded at all: the grader, torch or Triton changed since ``gpuperf.grading`` was
    imported (a patch in an earlier cell), or ``fn``'s code names the grader's state; "" when neither."""
    changed = _watch.changed_since_import()
    if changed:
        shown = ", ".join(changed[:4]) + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")
        return (f"the grader, torch or Triton was changed after gpuperf.grading was imported, or before with one "
                f"built-in put in another's place ({shown}): restart the kernel and run the lab's cells in order, "
                "without patching them")
    reached = _watch.reaches_grader(fn)
    if reached:
        return (f"your function's code names {reached!r}, part of the grader's own state or a way to reach it "
                "(frames, closures, the garbage collector's graph): grade a function that computes its result")
    return ""


def _hooks_set() -> str:
    """Why no grade can run now: a trace or profile function (``sys.settrace``, ``sys.setprofile``, the same
    for new threads through ``threading``) or a ``sys.monitoring`` callback (Python 3.12+) of the reader's own
    code is set. Such a hook runs at every call of the grader's own code and could change what it compares (an
    output rewritten when the comparison starts); "" when none is. A hook of an installed package or of Python's
    own library (a debugger the notebook's host runs, such as debugpy, a profiler, a coverage tool) is not the
    reader's and is left alone (:func:`_readers_hook`). Checked when a grade starts and after each case."""
    import threading

    found = []
    for label, hook in (("sys.settrace", sys.gettrace()), ("sys.setprofile", sys.getprofile()),
                        ("threading.settrace", getattr(threading, "gettrace", lambda: None)()),  # 3.10+
                        ("threading.setprofile", getattr(threading, "getprofile", lambda: None)())):
        if hook is not None and _readers_hook(hook):
            found.append(label)
    monitoring = getattr(sys, "monitoring", None)  # Python 3.12+
    if monitoring is not None:
        events = [value for name, value in vars(monitoring.events).items()
                  if name.isupper() and isinstance(value, int) and value and value & (value - 1) == 0]
        for tool in range(6):
            try:
                if monitoring.get_tool(tool) is None:
                    continue
            except ValueError:  # pragma: no cover
                continue
            for event in events:
                try:  # read a callback by swapping it out and back in (there is no getter)
                    callback = monitoring.register_callback(tool, event, None)
                    monitoring.register_callback(tool, event, callback)
                except (ValueError, TypeError):  # pragma: no cover - an event with no callback of its own
                    continue
                if callback is not None and _readers_hook(callback):
                    found.append(f"sys.monitoring tool {tool} ({monitoring.get_tool(tool)!r})")
                    break
    if not found:
        return _background_code()
    return (f"a trace or profile function is set ({', '.join(found)}) by your own code: it would run inside the "
            "grader at every call and could change what the grader compares, so nothing is graded while it is "
            "set: remove it (sys.settrace(None), sys.setprofile(None)) or restart the kernel and run the lab's "
            "cells in order")


def _background_code() -> str:
    """Why no grade can run now: code of the reader's that can run inside the grader without being called, "" if
    none: a Python signal handler of the reader's (``signal.signal(signal.SIGALRM, h)`` with
    ``signal.setitimer``: the handler runs between any two lines of the grader when the timer fires), or a live
    thread whose target, ``run`` or ``threading.Timer`` function is the reader's (started in an earlier cell:
    it runs beside the grader). Checked with :func:`_hooks_set`, when a grade starts and after each case. Not
    seen: a thread started with ``_thread.start_new_thread`` (``threading`` does not list it) and a task
    handed to a thread pool (its worker is the standard library's)."""
    import signal
    import threading

    handlers = []
    for number in sorted(signal.valid_signals()):
        try:
            handler = signal.getsignal(number)
        except (ValueError, OSError):  # pragma: no cover - a signal Python cannot read
            continue
        if callable(handler) and _readers_background(handler):
            handlers.append(signal.Signals(number).name if number in signal.Signals._value2member_map_
                            else str(number))
    if handlers:
        timers = [name for name, which in (("ITIMER_REAL", "ITIMER_REAL"), ("ITIMER_VIRTUAL", "ITIMER_VIRTUAL"),
                                           ("ITIMER_PROF", "ITIMER_PROF"))
                  if hasattr(signal, which) and signal.getitimer(getattr(signal, which))[0] > 0]
        running = f"; a timer is running ({', '.join(timers)})" if timers else ""
        return (f"a signal handler of your own code is installed ({', '.join(handlers)}){running}: it runs between "
                "any two lines of the grader when its signal arrives (a timer's, say) and could change what the "
                "grader compares, so nothing is graded while it is installed: restore the default "
                f"(signal.signal(signal.{handlers[0]}, signal.SIG_DFL), signal.setitimer(signal.ITIMER_REAL, 0)) "
                "or restart the kernel and run the lab's cells in order")
    current = threading.current_thread()
    for thread in threading.enumerate():
        if thread is current or not thread.is_alive():
            continue
        runs = [getattr(thread, "_target", None), getattr(thread, "function", None)]
        if type(thread).run is not threading.Thread.run:
            runs.append(type(thread).run)
        if any(callable(run) and _readers_background(run) for run in runs):
            return (f"a thread of your own code is running ({thread.name}, started before this grade): it runs "
                    "beside the grader and could change what the grader compares, so nothing is graded while it "
                    "is alive: stop it (join it) or restart the kernel and run the lab's cells in order")
    return ""


def _readers_background(code_holder) -> bool:
    """:func:`_readers_hook`, less code of Python's standard library and of this package (an asyncio handler,
    ``threading``'s own ``run``, a thread pool's worker): a signal handler or thread target of the reader's."""
    import os

    if not _readers_hook(code_holder):
        return False
    func = getattr(code_holder, "__func__", code_holder)
    code = getattr(func, "__code__", None) or getattr(getattr(type(code_holder), "__call__", None), "__code__", None)
    if code is None:
        return True  # (a bound method of a class of the reader's, as _readers_hook found)
    real = os.path.realpath(code.co_filename)
    roots = _stdlib_folders()
    roots.add(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # gpuperf itself
    return not any(real.startswith(root + os.sep) for root in roots)


def _readers_hook(hook, depth: int = 4) -> bool:
    """Whether a trace, profile or monitoring hook runs the reader's code: anything but code of an installed
    package (a debugger the notebook's host runs, such as debugpy's, a profiler, a coverage tool) or of Python's
    own debuggers and profilers (``bdb``, ``pdb``, ``profile``, ``cProfile``, ``trace``), and no class of the
    reader's behind it. Followed through bound methods (their object's class too), ``functools.partial`` and
    callable objects; a C type's instance or a built-in counts by its module (never the reader's)."""
    import functools
    import importlib.machinery

    if depth <= 0:
        return True
    if isinstance(hook, functools.partial):
        return any(callable(part) and _readers_hook(part, depth - 1)
                   for part in (hook.func, *hook.args, *hook.keywords.values()))
    wrapped = getattr(hook, "__wrapped__", None)  # a decorator's wrapper (functools.wraps, lru_cache,
    if callable(wrapped) and _readers_hook(wrapped, depth - 1):  # torch.no_grad()(f)): what it wraps too
        return True
    owner = getattr(hook, "__self__", None)
    if owner is not None and owner is not hook and not isinstance(owner, (type(sys), type)):
        # a method-wrapper or a C method (``f.__call__``) runs its object: the reader's function, say; an
        # object's own attributes (callbacks put on a ``bdb.Bdb`` or ``profile.Profile`` instance) run too
        if callable(owner) and _readers_hook(owner, depth - 1):
            return True
        try:
            own = list(vars(owner).values())
        except TypeError:  # no __dict__ (a C object)
            own = []
        own += [v for value in own if isinstance(value, dict) for v in value.values()]  # profile's dispatch
        if any(callable(value) and not isinstance(value, type) and getattr(value, "__self__", None) is not owner
               and _readers_hook(value, depth - 1) for value in own):
            return True
    if owner is not None and not isinstance(owner, type(sys)):  # a bound method: its object's classes too
        for cls in type(owner).__mro__:
            if cls.__module__ == "builtins" or cls.__module__ in sys.builtin_module_names:
                continue
            filename = getattr(sys.modules.get(cls.__module__), "__file__", None)
            if filename is None:  # a notebook's __main__, a module made at run time: the reader's
                return True
            if filename.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
                continue  # a C extension's class (cProfile's _lsprof.Profiler on Python 3.12) runs no Python
            if not _installed_file(filename):
                return True
    func = getattr(hook, "__func__", hook)
    code = getattr(func, "__code__", None)
    if code is None:
        call = getattr(type(hook), "__call__", None)
        code = getattr(call, "__code__", None)
    if code is None:  # a built-in or a C type's instance: no Python of the reader's runs in it
        return False
    return not _installed_file(code.co_filename)


#: Python's own debuggers and profilers, whose hooks a learner may have on (``%debug``, ``%prun``)
_STDLIB_HOOK_FILES = ("bdb.py", "pdb.py", "cmd.py", "profile.py", "cProfile.py", "trace.py")  # cmd: pdb's base


def _installed_file(filename: str) -> bool:
    """Whether ``filename`` is a file of an installed package (site-packages) or one of Python's debuggers."""
    import os
    import site
    import sysconfig

    paths = sysconfig.get_paths()
    real = os.path.realpath(filename)
    if os.path.basename(real) in _STDLIB_HOOK_FILES and os.path.dirname(real) in _stdlib_folders():
        return True
    packages = {os.path.realpath(p) for p in (paths.get("purelib"), paths.get("platlib")) if p}
    for extra in (*getattr(site, "getsitepackages", lambda: [])(), site.getusersitepackages()):
        packages.add(os.path.realpath(extra))
    packages |= _distribution_folders(tuple(sys.path), os.getcwd())
    return any(real.startswith(root + os.sep) for root in packages)


_distribution_folders = _watch._distribution_folders


def _stdlib_folders() -> set[str]:
    """The folders of Python's standard library (``stdlib`` and ``platstdlib``), their links resolved."""
    import os
    import sysconfig

    paths = sysconfig.get_paths()
    return {os.path.realpath(p) for p in (paths.get("stdlib"), paths.get("platstdlib")) if p}


def _relabel(r: CaseResult, label: str) -> CaseResult:
    from dataclasses import replace

    return replace(r, case=label)


_SOLUTION_MODULES = _watch.SOLUTION_MODULES

#: Reports printed on a lab's page are wrapped to the page's code column.
PAGE_WIDTH = 88


def solution(key: str) -> Callable:
    """The course's solution of exercise ``key`` (for the labs' later cells and for CI)."""
    return _solution_of(_exercise(key))


def grade(key: str, fn: Callable | None, *, seed: int | None = None) -> Callable:
    """Grade the reader's ``fn`` for exercise ``key``, print the report, and return the function the lab's
    later cells should use: ``fn`` once it passes, the course's solution until then (said in the report).

    With ``GPUPERF_LAB_SOLUTIONS=1`` in the environment when :mod:`gpuperf.grading` was imported (``make lab``,
    ``tools/run_lab.py``: read once, at import, so a cell that sets it later changes nothing), the course's
    solution is graded in place of ``fn``, its report starts with ``SOLUTION OK`` (never ``PASSED``: the
    reader's code did not run), and a failure raises ``AssertionError`` (CI runs every lab that way)."""
    ex = _exercise(key)
    if SOLUTIONS_MODE:
        return _grade_solution(key, seed)
    if fn is None:
        print(f"NOT YET {key} ({ex.title}): nothing to grade yet")
        return _solution_of(ex)
    if getattr(fn, "__module__", "").startswith(_SOLUTION_MODULES):
        print(f"NOT YET {key} ({ex.title}):\n  the function given is the course's solution, standing in\n"
              "  because an earlier exercise has not passed yet; finish that one, re-run its cell,\n"
              "  then this one")
        return fn
    report = grade_report(key, fn, seed=seed)
    print(report.text(PAGE_WIDTH))
    if report.passed:
        return fn
    print("  (until yours passes, the cells below use the course's solution, so the lab still\n"
          "  runs)")
    return _solution_of(ex)


#: The prefix of a passing report of the course's solution (solutions mode): not ``PASSED``, which only the
#: reader's own function earns.
SOLUTION_PASSED = "SOLUTION OK"


def _grade_solution(key: str, seed: int | None = None) -> Callable:
    """Solutions mode: grade the course's solution of ``key``, print its report marked as the course's code,
    and raise ``AssertionError`` if it fails."""
    sol = _solution_of(_exercise(key))
    report = grade_report(key, sol, seed=seed, graded="the course's solution, not yours: "
                          f"{SOLUTIONS_ENV_VAR}=1 was set when gpuperf.grading was imported")
    text = report.text(PAGE_WIDTH)
    if report.passed and text.startswith("PASSED "):
        text = SOLUTION_PASSED + " " + text[len("PASSED "):]
    print(text)
    if not report.passed:
        raise AssertionError(f"the course's solution of {key} fails its grader:\n{report.text()}")
    return sol


@contextlib.contextmanager
def forbid(names: Sequence[str], exercise: str, allow_course_kernels: bool = False,
           device: str = "cpu") -> Iterator[Watch]:
    """A watch (see :mod:`gpuperf.grading.watch`) that refuses the ATen operators and Python names in
    ``names`` (any other operator runs), data taken out of torch, and (unless ``allow_course_kernels``) the
    course's own kernels; raises :class:`ForbiddenCall` inside the block."""
    names = frozenset(names)
    policy = Policy(exercise, allowed=None, refused=names, refused_names=names, kernels=False)
    with triton_hooks(), Watch(policy, device, allow_course_kernels) as watch:
        yield watch


#: Solutions mode (``GPUPERF_LAB_SOLUTIONS=1``), read once when the grader is imported: see :func:`grade`.
SOLUTIONS_MODE = solutions_requested()

_watch.take_baseline()  # after every module of the grader is imported: what grade_report compares against

__all__ = [
    "EXERCISES", "SOLUTIONS_ENV_VAR", "TRITON_OPS", "UNIT_ROUNDOFF", "Case", "CaseResult", "Exercise",
    "ForbiddenCall", "GradeReport", "OutOfBounds", "Policy", "Tolerance", "Watch", "compare", "dtype_name",
    "elementwise_tolerance", "forbid", "grade", "grade_report", "guarded", "interpreter_dot_as_on_gpu",
    "matmul_tolerance", "normwise_tolerance", "poison_memory", "reduction_tolerance", "row_strided",
    "softmax_bound", "solution",
    "solutions_requested", "SOLUTIONS_MODE", "SOLUTION_PASSED",
]
