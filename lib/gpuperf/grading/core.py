"""Results, tolerances and the comparison of the labs' graders (see :mod:`gpuperf.grading`)."""

from __future__ import annotations

import contextlib
import math
import os
import types
from dataclasses import dataclass
from typing import Iterator

SOLUTIONS_ENV_VAR = "GPUPERF_LAB_SOLUTIONS"

#: Unit roundoff u = 2^-p (p = significand bits including the implicit one) of each format. Read-only
#: (``MappingProxyType``, like the tables below): a graded function that could write ``UNIT_ROUNDOFF["fp32"] =
#: 1.0`` would loosen every tolerance computed after its call (round 12's file 10).
UNIT_ROUNDOFF = types.MappingProxyType(
    {"fp64": 2.0**-53, "fp32": 2.0**-24, "tf32": 2.0**-11, "fp16": 2.0**-11, "bf16": 2.0**-8})

#: Smallest positive subnormal of each output format: values below it cannot be told apart from 0.
_TINY = types.MappingProxyType({"fp64": 5e-324, "fp32": 1.4e-45, "fp16": 2.0**-24, "bf16": 9.2e-41})

#: Smallest positive normal number of each format. Below it a format keeps fewer significant bits, and a GPU's
#: fast exponential loses relative accuracy there too (measured on the H200: softmax outputs near 7e-40 in
#: fp32, 5e-45 apart from the float64 result, about 3.5 subnormal steps): a relative bound r is granted
#: there as the absolute r x smallest normal, far below anything a wrong kernel gets right by luck.
_MIN_NORMAL = types.MappingProxyType({"fp64": 2.0**-1022, "fp32": 2.0**-126, "fp16": 2.0**-14, "bf16": 2.0**-126})


def _atol(name: str, rtol: float) -> float:
    return _TINY[name] + rtol * _MIN_NORMAL[name]


#: The words of compare's report of an output that is NaN everywhere; the grader, which knows under the
#: interpreter whether any kernel stored anything, replaces the report with a definite one.
ALL_NAN_BLANK = "your kernel wrote nothing to "


def solutions_requested() -> bool:
    """True when ``GPUPERF_LAB_SOLUTIONS`` is set to 1/true/yes/on (any case)."""
    return os.environ.get(SOLUTIONS_ENV_VAR, "").strip().lower() in ("1", "true", "yes", "on")


# --------------------------------------------------------------------------------------------------------
# Results.
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tolerance:
    """An element passes when ``|yours - expected| <= atol + rtol * scale``; ``scale`` is ``|expected|``
    unless the exercise names another (e.g. ``|A| |B|`` for a matmul); ``reason`` says why these values."""

    atol: float
    rtol: float
    reason: str
    scale_name: str = "|expected|"

    def describe(self) -> str:
        if self.atol == 0 and self.rtol == 1:  # a bound computed whole, named by scale_name
            return f"|error| <= {self.scale_name} ({self.reason})"
        return f"|error| <= {self.atol:.3g} + {self.rtol:.3g} x {self.scale_name} ({self.reason})"


@dataclass(frozen=True)
class CaseResult:
    """One output of one case: passed or not, and if not, where and by how much."""

    case: str
    output: str
    passed: bool
    message: str = ""
    first_wrong_index: tuple[int, ...] | None = None
    yours: float | None = None
    expected: float | None = None
    max_abs_error: float | None = None
    n_wrong: int = 0
    n_elements: int = 0
    tolerance: Tolerance | None = None
    #: every element is still the NaN the output started with (nothing stored, or not known to have been)
    blank: bool = False


@dataclass(frozen=True)
class GradeReport:
    """All cases of one exercise, with the seed that drew their inputs."""

    exercise: str
    title: str
    seed: int
    device: str
    results: tuple[CaseResult, ...]
    graded: str = "yours"  # or "the course's solution"
    notes: tuple[str, ...] = ()  # information that is not graded (e.g. a GPU timing)

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    @property
    def failures(self) -> tuple[CaseResult, ...]:
        return tuple(r for r in self.results if not r.passed)

    def text(self, width: int | None = None) -> str:
        """The report; with ``width``, every line wrapped to that many characters (a lab's page)."""
        text = self._text()
        if width is None:
            return text
        import textwrap

        out = []
        for line in text.splitlines():
            indent = " " * (len(line) - len(line.lstrip()))
            out.extend(textwrap.wrap(line, width, subsequent_indent=indent + "  ", break_long_words=True,
                                     break_on_hyphens=False) or [""])
        return "\n".join(out)

    def _text(self) -> str:
        cases = list(dict.fromkeys(r.case for r in self.results))
        bad_cases = list(dict.fromkeys(r.case for r in self.failures))
        head = (f"{self.exercise} ({self.graded}): {len(cases) - len(bad_cases)} of {len(cases)} cases pass "
                f"(seed {self.seed})")
        about = f"  {self.title}, on {self.device}"
        if self.passed:
            return "\n".join(["PASSED " + head, about] + ["  " + n for n in self.notes])
        lines = ["NOT YET " + head, about]
        if not self.failures:  # no case ran (an ``only=`` that selected none on this machine)
            return "\n".join(lines + ["  no case ran: nothing was checked"])
        first = self.failures[0]
        output = f", output {first.output}" if first.output not in ("-", "") else ""
        lines.append(f"  first failing case: {first.case}{output}")
        lines.extend("    " + line for line in _describe_failure(first).splitlines())
        others = [c for c in bad_cases if c != first.case]
        if others:
            shown = "; ".join(others[:4]) + (f"; and {len(others) - 4} more" if len(others) > 4 else "")
            lines.append(f"  also failing: {shown}")
        passing = [c for c in cases if c not in bad_cases]
        if passing:
            shown = "; ".join(passing[:4]) + (f"; and {len(passing) - 4} more" if len(passing) > 4 else "")
            lines.append(f"  passing: {shown}")
        lines.append(f"  (the same inputs again: grading.grade_report({self.exercise!r}, your_function, "
                     f"seed={self.seed}))")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()


def _describe_failure(r: CaseResult) -> str:
    lines = []
    if r.message:
        lines.append(r.message)
    if r.first_wrong_index is not None:
        lines.append(f"first wrong element at index {list(r.first_wrong_index)}: "
                     f"yours {_fmt(r.yours)} vs expected {_fmt(r.expected)}")
        lines.append(f"{r.n_wrong} of {r.n_elements} elements wrong; largest error {_fmt(r.max_abs_error)}")
    if r.tolerance is not None:
        lines.append("tolerance: " + r.tolerance.describe())
    return "\n".join(lines)


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return str(value)
    return f"{value:.6g}"


# --------------------------------------------------------------------------------------------------------
# Tolerances.
# --------------------------------------------------------------------------------------------------------


def dtype_name(dtype) -> str:
    """Short name (fp32, fp16, bf16, fp64) of a torch dtype or a short name."""
    name = str(dtype).replace("torch.", "")
    names = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64"}
    name = names.get(name, name)
    if name not in UNIT_ROUNDOFF:
        raise ValueError(f"dtype must be one of fp64, fp32, fp16, bf16, got {dtype!r}")
    return name


def elementwise_tolerance(dtype, n_ops: int = 1) -> Tolerance:
    """``n_ops`` fp32 operations per element, then one rounding to ``dtype`` for the store."""
    name = dtype_name(dtype)
    if isinstance(n_ops, bool) or not isinstance(n_ops, int) or n_ops < 1:
        raise ValueError(f"n_ops must be an int >= 1, got {n_ops!r}")
    u_out, u32 = UNIT_ROUNDOFF[name], UNIT_ROUNDOFF["fp32"]
    rtol = 2 * u_out + 2 * n_ops * u32
    reason = (f"{name} output: its unit roundoff 2^{int(math.log2(u_out))} = {u_out:.2g}, doubled, plus "
              f"{n_ops} fp32 operation(s) at 2^-24 each, doubled")
    return Tolerance(atol=_atol(name, rtol), rtol=rtol, reason=reason)


def reduction_tolerance(dtype, n_terms: int, what: str = "sum") -> Tolerance:
    """A result of ``n_terms`` fp32 terms summed (the worst-case bound n u of a sum in any order), then
    rounded to ``dtype``."""
    name = dtype_name(dtype)
    if isinstance(n_terms, bool) or not isinstance(n_terms, int) or n_terms < 1:
        raise ValueError(f"n_terms must be an int >= 1, got {n_terms!r}")
    u_out, u32 = UNIT_ROUNDOFF[name], UNIT_ROUNDOFF["fp32"]
    rtol = 4 * u_out + (n_terms + 8) * u32
    reason = (f"{name} output (unit roundoff {u_out:.2g}, x4 for exp and the division) plus a {what} of "
              f"{n_terms} terms in fp32: at most (n + 8) x 2^-24; TF32 or fp16 accumulation would exceed it")
    return Tolerance(atol=_atol(name, rtol), rtol=rtol, reason=reason)


def softmax_bound(x, dtype, n_terms: int):
    """The error bound of a softmax over the last axis of ``x``, whole: ``(Tolerance, scale)`` for
    :func:`compare`, where ``scale`` is the bound itself, element by element (float64, on the CPU).

    The reduction bound of :func:`reduction_tolerance` (a row sum of ``n_terms`` fp32 terms, the output's
    rounding), plus what the exponent's own rounding does: exp(x - m) computed from x - m rounded to fp32
    errs relatively by |x - m| 2^-24, and exp2(x log2 e - m log2 e) by (|x| + |m| + |x - m|) 2^-24 (the
    two products are rounded too). Each probability carries that error of its own term and, through the
    row's sum, the largest of any term's in its row. Without it, rows far from zero (offsets of hundreds)
    refuse honest kernels by a few ulps on their smallest probabilities."""
    import torch

    tol = reduction_tolerance(dtype, n_terms, "row sum")
    u32 = UNIT_ROUNDOFF["fp32"]
    xs = x.detach().to(device="cpu", dtype=torch.float64)
    y = torch.softmax(xs, dim=-1)
    # Over the finite inputs only: an element of -inf has no exponent to round (its probability is exactly 0,
    # and the bound of that element stays atol), and it must not widen its row's bound either.
    finite = torch.isfinite(xs)
    m = torch.where(finite, xs, torch.full_like(xs, -math.inf)).amax(dim=-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    per_term = torch.where(finite, (xs.abs() + m.abs() + (xs - m).abs()) * u32, torch.zeros_like(xs))
    rel = tol.rtol + per_term + per_term.amax(dim=-1, keepdim=True)
    # A GPU's fast exponential flushes results below fp32's smallest normal to 0 (an honest exp2 softmax
    # on an H100 gave 0 for 2.3e-42, 2026-12-05): each element may be off by that much, whatever its dtype.
    scale = tol.atol + _MIN_NORMAL["fp32"] + rel * y.abs()
    reason = (tol.reason + "; plus the exponent's rounding, (|x| + |m| + |x - m|) x 2^-24 relative, of the "
              "element's own term and of the largest in its row (m: the row's max); plus 2^-126 (fp32's "
              "smallest normal: a GPU's exponential may flush smaller results to 0)")
    return Tolerance(atol=0.0, rtol=1.0, reason=reason, scale_name="the bound of each element"), scale


def matmul_tolerance(dtype, k: int) -> Tolerance:
    """C = A B with fp32 accumulation over ``k`` products: |error| <= (k + 2) u_fp32 (|A||B|)_ij plus the
    rounding of C to ``dtype``; products of fp16/bf16 inputs are exact in fp32. TF32 (10-bit significands,
    u = 2^-11) does not meet it for fp32 inputs unless k is in the tens of thousands."""
    name = dtype_name(dtype)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    u_out, u32 = UNIT_ROUNDOFF[name], UNIT_ROUNDOFF["fp32"]
    rtol = 2 * u_out + 2 * (k + 2) * u32
    reason = (f"fp32 accumulation of {k} products, 2 (k + 2) x 2^-24, plus the rounding of C to {name} "
              f"(2 x {u_out:.2g}); fp32 products at TF32 precision (2^-11 each, the default of an fp32 dot in Triton) fail it")
    return Tolerance(atol=_TINY[name], rtol=rtol, reason=reason, scale_name="(|A| |B|)_ij")


def normwise_tolerance(dtype, n_terms: int, factor: float = 4.0, what: str = "") -> Tolerance:
    """An error bound relative to the largest expected magnitude of the output (``max|expected|``): for
    results built from several products and sums (attention and its gradients)."""
    name = dtype_name(dtype)
    u32 = UNIT_ROUNDOFF["fp32"]
    if name == "fp32":
        rtol = factor * (n_terms + 8) * u32
        reason = (f"fp32 inputs, fp32 products and sums over about {n_terms} terms: {factor:g} (n + 8) x "
                  "2^-24 of the largest value; TF32 products (2^-11) would exceed it")
    else:
        u_in = UNIT_ROUNDOFF[name]
        rtol = factor * 4 * u_in
        reason = (f"{name} inputs: probabilities and intermediate tiles rounded to {name} "
                  f"(unit roundoff {u_in:.2g}) before the products, {4 * factor:g} x that of the largest value")
    if what:
        reason = f"{what}: {reason}"
    return Tolerance(atol=0.0, rtol=rtol, reason=reason, scale_name="max|expected|")


# --------------------------------------------------------------------------------------------------------
# Comparison.
# --------------------------------------------------------------------------------------------------------


def compare(case: str, output: str, yours, expected, tol: Tolerance, scale=None, dtype=None,
            device=None) -> CaseResult:
    """Compare one output tensor (any float dtype, any device) with its float64 ``expected`` (CPU).

    ``scale`` (a float64 tensor like ``expected``, or a float) replaces ``|expected|`` in the bound. NaN or
    infinity where the expected value is finite is always wrong (an infinity in the expected value must be
    matched exactly). ``dtype``/``device``, when given, must be the output's. Returns a :class:`CaseResult` naming the first wrong index in row-major order."""
    import torch

    if not issubclass(type(yours), torch.Tensor):  # (isinstance would read a __class__ of the reader's)
        return CaseResult(case, output, False, f"expected a torch.Tensor for {output}, got "
                          f"{type(yours).__name__}", tolerance=tol)
    # through torch's methods of the class: an instance attribute `detach` set on the reader's tensor would run
    # the reader's code here, after the call (round 22; Runner.call refuses such attributes first)
    detach, to = torch._C.TensorBase.detach, torch._C.TensorBase.to
    exp = to(detach(expected), device="cpu", dtype=torch.float64)
    if dtype is not None and yours.dtype != dtype:
        return CaseResult(case, output, False, f"{output} has dtype {str(yours.dtype).replace('torch.', '')}, "
                          f"expected {str(dtype).replace('torch.', '')} (the exercise's output type)",
                          tolerance=tol)
    if device is not None and yours.device.type != torch.device(device).type:
        return CaseResult(case, output, False, f"{output} is on {yours.device}, expected it on {device} "
                          "(where the inputs are)", tolerance=tol)
    if tuple(yours.shape) != tuple(exp.shape):
        return CaseResult(case, output, False, f"{output} has shape {tuple(yours.shape)}, expected "
                          f"{tuple(exp.shape)}", tolerance=tol)
    got = to(detach(yours), device="cpu", dtype=torch.float64)
    if got.numel() and bool(torch.isnan(got).all()) and not bool(torch.isnan(exp).any()):
        if "second call" in output:
            message = (f"nothing was written to {output}: your function kept what it computed for the first "
                       "call (per input object?) instead of reading the new values")
        else:
            message = (f"every element of {output} is NaN: {ALL_NAN_BLANK}{output} yet (is the kernel's body "
                       "still the stub, `pass`?), or it computed NaN everywhere (inf - inf, inf / inf, 0 / 0)")
        return CaseResult(case, output, False, message, n_wrong=got.numel(), n_elements=got.numel(),
                          blank=True)
    if scale is None:
        bound_scale = exp.abs()
    elif isinstance(scale, torch.Tensor):
        bound_scale = to(detach(scale), device="cpu", dtype=torch.float64)
    else:
        bound_scale = torch.full_like(exp, float(scale))
    finite_exp = torch.isfinite(exp)
    diff = torch.where(finite_exp, (got - exp).abs(), torch.zeros_like(exp))
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    bound = tol.atol + tol.rtol * torch.where(finite_exp, bound_scale, torch.zeros_like(exp))
    wrong = (diff > bound) | (finite_exp & ~torch.isfinite(got)) | (~finite_exp & (got != exp))
    n_wrong = int(wrong.sum())
    max_err = float(diff.max()) if diff.numel() else 0.0
    if n_wrong == 0:
        return CaseResult(case, output, True, max_abs_error=max_err, n_elements=exp.numel(), tolerance=tol)
    flat = int(wrong.reshape(-1).nonzero()[0])
    index = tuple(int(i) for i in _unravel(flat, tuple(exp.shape)))
    message = _diagnose(got, exp, wrong)
    return CaseResult(case, output, False, message, index, float(got[index]), float(exp[index]), max_err,
                      n_wrong, exp.numel(), tol)


def _unravel(flat: int, shape: tuple[int, ...]) -> list[int]:
    index = []
    for size in reversed(shape):
        index.append(flat % size)
        flat //= size
    return list(reversed(index))


def _diagnose(got, exp, wrong) -> str:
    """A symptom, never a fix: what the wrong elements have in common."""
    import torch

    notes = []
    n_nan = int((torch.isnan(got) & wrong).sum())
    if n_nan:
        notes.append(f"{n_nan} wrong element(s) are NaN: NaN comes from memory the kernel was not meant to "
                     "read (the grader fills it with NaN), from an element never written, or from inf - inf")
    flat_wrong = wrong.reshape(-1)
    if got.dim() >= 1 and n_nan < int(flat_wrong.sum()):
        last = wrong.reshape(-1, got.shape[-1]) if got.dim() >= 1 else wrong
        cols = last.any(dim=0).nonzero().reshape(-1)
        if cols.numel() and int(cols[0]) > 0 and int(cols[-1]) == got.shape[-1] - 1:
            notes.append(f"along the last dimension (length {got.shape[-1]}) only positions from "
                         f"{int(cols[0])} on are wrong: look at how the kernel treats the end of a row")
    finite = torch.isfinite(got) & torch.isfinite(exp) & wrong
    if int(finite.sum()) >= 4:
        ratio = (got[finite] / exp[finite]).abs()
        r_med = float(ratio.median())
        if abs(r_med - 1.0) > 1e-3 and float((ratio - r_med).abs().max()) < 1e-3 * max(r_med, 1e-30):
            notes.append(f"every wrong element is off by the same factor, yours / expected = {r_med:.6g}")
    return "\n".join(notes)


def _result_of_exception(case: str, exc: BaseException) -> CaseResult:
    from gpuperf.grading.watch import ForbiddenCall, OutOfBounds

    seen, cause = set(), exc
    while cause is not None and id(cause) not in seen:  # the interpreter wraps what a kernel raised
        seen.add(id(cause))
        if isinstance(cause, OutOfBounds):
            return CaseResult(case, "-", False, _out_of_bounds_message(str(cause)))
        if isinstance(cause, ForbiddenCall):
            return CaseResult(case, "-", False, str(cause))
        cause = cause.__cause__ or cause.__context__
    if isinstance(exc, NotImplementedError):
        return CaseResult(case, "-", False, "not written yet: your function raised NotImplementedError")
    text = str(exc).strip().splitlines()
    first = text[-1] if text else ""
    if _graders_own(exc):
        return CaseResult(case, "-", False,
                          f"the grader itself failed while it ran your code ({type(exc).__name__}: {first[:300]}): "
                          "an error in gpuperf.grading, not a fault found in your function. Please report it to "
                          "the course with this message; meanwhile check your function against a PyTorch "
                          "reference outside the grader")
    hint = ""
    if "active drivers" in first and _raised_in(exc, "autotuner.py"):
        # round 25's h27: Triton's autotuner times each configuration with the GPU's driver, which the
        # interpreter does not have
        hint = (" (raised by @triton.autotune, which times its configurations on a GPU: under the interpreter "
                "there is none. Grade on the CPU with one configuration, as plain constexpr arguments, and keep "
                "the autotuner for a GPU)")
    return CaseResult(case, "-", False, f"your function raised {type(exc).__name__}: {first[:300]}{hint}")


def _raised_in(exc: BaseException, filename: str) -> bool:
    """Whether a frame of ``exc``'s traceback runs in a file named ``filename``."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.endswith(filename):
            return True
        tb = tb.tb_next
    return False


#: Names of the grader's own wrappers around Triton's interpreter, as Python prints them in an error about a
#: call (``_install.<locals>.make_load.<locals>.load() got an unexpected keyword argument``).
_GRADER_HOOKS = ("_install.<locals>", "_interpreter_hooks.<locals>")


def _graders_own(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it wraps) was raised inside one of the grader's hooks on Triton's
    interpreter (its innermost frame there) or by a call of one (a call its signature refused): the grader's
    crash, never the learner's error (round 8's ah01: a tensor descriptor's load, called with keywords the hook
    did not take, was reported as the kernel's). The hooks' deliberate refusals (out of bounds, forbidden
    calls) are told apart before this is asked; an error of torch or Triton raised below a hook is not the
    hook's."""
    seen, cause = set(), exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if any(hook in str(cause) for hook in _GRADER_HOOKS):
            return True
        tb = cause.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        code = tb.tb_frame.f_code if tb is not None else None
        if code is not None and getattr(code, "co_qualname", "").startswith(_GRADER_HOOKS):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def _out_of_bounds_message(text: str) -> str:
    """The watch's report of a load or store outside the tensors, said as what to fix: the lane one past the
    end (a mask ``<=`` where ``<`` is meant), or lanes past the end with no mask that stops them."""
    import re

    m = re.search(r"your kernel (loaded from|stored to|updated \(atomically\)) memory outside the tensors it was "
                  r"given: (\d+) active lane\(s\) of a block of shape (\[[^\]]*\]), the first at block index "
                  r"(\[[^\]]*\]), address 0x[0-9a-f]+: (.*?)\. On a GPU", text)
    if not m:
        return text
    kind, lanes, shape, index, where = m.groups()
    verb = {"loaded from": "read", "stored to": "wrote"}.get(kind, "updated")
    past = re.match(r"element (\d+) of (\S+), which has (\d+) elements", where)
    if past:
        element, name, n = int(past.group(1)), past.group(2), int(past.group(3))
        head = f"your kernel {verb} past the end of {name} ({n} elements): {lanes} active lane(s) of a block of " \
               f"shape {shape}, the first at element {element}"
        if element == n and lanes == "1":
            return head + (f", one past the last. The mask lets offset == {n} through: compare with `<`, not "
                           "`<=`")
        return head + (". These lanes need a mask that is false from the end of the tensor on (offsets < the "
                       f"length); is the mask given to this {'load' if verb == 'read' else 'store'}, and does it "
                       "compare the right offsets with the right length?")
    return (f"your kernel {verb} memory outside the tensors it was given: {lanes} active lane(s) of a block of "
            f"shape {shape}, the first at block index {index}: {where}. On a GPU this is memory that is not "
            "yours; check the offsets and the mask of this access")


def _round_fp32_to_tf32(data):
    """fp32 values (a numpy array) rounded to TF32's 10 explicit significand bits, to nearest (ties away
    from zero, as ``cvt.rna.tf32.f32``); infinities and NaN unchanged."""
    import numpy as np

    bits = np.ascontiguousarray(data, dtype=np.float32).view(np.uint32)
    special = (bits & np.uint32(0x7F800000)) == np.uint32(0x7F800000)
    rounded = (bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)
    return np.where(special, bits, rounded).view(np.float32)


@contextlib.contextmanager
def interpreter_dot_as_on_gpu(active: bool = True) -> Iterator[None]:
    """Make the Triton interpreter's ``tl.dot`` round fp32 operands to TF32 when the dot asks for TF32 (as
    ``tl.dot`` does by default), the way a GPU with TF32 matrix units computes it.

    The interpreter multiplies in full fp32 whatever ``input_precision`` says, so without this a kernel that
    forgets ``input_precision="ieee"`` would pass its grader on a CPU and fail it on an A100 or an H200.
    Does nothing when ``active`` is false or when this Triton's interpreter is not laid out as expected."""
    if not active:
        yield
        return
    try:
        import triton.language as tl
        from triton._C.libtriton import ir
        from triton.runtime.interpreter import InterpreterBuilder, TensorHandle

        tf32 = ir.INPUT_PRECISION.TF32
        original = InterpreterBuilder.create_dot
    except (ImportError, AttributeError):  # pragma: no cover - another Triton layout: leave it alone
        yield
        return

    def create_dot(self, a, b, d, input_precision, *args, **kwargs):
        fp32 = all(getattr(t.dtype, "scalar", t.dtype) == tl.float32 for t in (a, b))
        if input_precision == tf32 and fp32:
            a = TensorHandle(_round_fp32_to_tf32(a.data), a.dtype)
            b = TensorHandle(_round_fp32_to_tf32(b.data), b.dtype)
        return original(self, a, b, d, input_precision, *args, **kwargs)

    InterpreterBuilder.create_dot = create_dot
    try:
        yield
    finally:
        InterpreterBuilder.create_dot = original



def poison_memory(device: str, n_bytes: int) -> None:
    """Allocate ``n_bytes`` on ``device``, fill them with NaN and free them: a buffer the reader allocates
    next is likely to reuse this memory, so an element the kernel never writes reads NaN, not a stale answer."""
    import torch

    n = max(1, n_bytes // 4 + 1024)
    junk = torch.full((n,), float("nan"), dtype=torch.float32, device=device)
    if device != "cpu":
        torch.cuda.synchronize()
    del junk


def guarded(values, pad: int = 64, fill: float = float("nan")):
    """``values`` copied into a contiguous view at the start of a larger buffer whose last ``pad`` elements
    hold ``fill``: an unmasked load past the end reads ``fill``. Returns ``(view, buffer)``."""
    import torch

    buf = torch.full((values.numel() + pad,), fill, dtype=values.dtype, device=values.device)
    view = buf[: values.numel()].view(values.shape)
    view.copy_(values)
    return view, buf


def row_strided(values, pad_cols: int = 13, fill: float = float("nan")):
    """A 2-D ``values`` copied into the left columns of a wider buffer filled with ``fill``: the rows of the
    view are ``values.shape[1] + pad_cols`` elements apart (a kernel that assumes they are adjacent reads the
    padding), and a load past a row's end reads ``fill``."""
    import torch

    rows, cols = values.shape
    buf = torch.full((rows, cols + pad_cols), fill, dtype=values.dtype, device=values.device)
    view = buf[:, :cols]
    view.copy_(values)
    return view


