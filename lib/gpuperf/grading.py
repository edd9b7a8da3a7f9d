"""Graders of the labs: run the reader's function on fresh random inputs and say precisely what is wrong.

Each exercise of a lab has a key (``"L2.add"``) in :data:`EXERCISES`. :func:`grade_report` runs the reader's
function on a list of cases drawn from a fresh random seed (awkward sizes included: one element, sizes that
are not multiples of any block, masked tails, rows longer than a block, N_q != N_k, inputs whose rows are
strided), compares every output with a float64 reference and returns a :class:`GradeReport`: for the first
failing case, the first wrong index, the reader's value and the expected one, the largest error, the
tolerance used and why that tolerance (fp32 vs TF32 vs fp16/bf16 rounding). It never shows the solution.

It also catches four kinds of mistakes that comparing values alone can miss:

* **writing out of bounds**: the output the grader passes in (where an exercise takes one) is a view into a
  larger buffer whose guard band is checked afterwards; inputs are views whose neighbouring memory holds NaN,
  so an unmasked load that reads past the end poisons the result instead of reading a lucky zero;
* **a stale correct answer**: memory is filled with NaN and freed before each call, so a kernel that skips
  a block cannot pass by finding the previous case's result in the recycled buffer;
* **a cheat**: the exercise's reference operations (``torch.softmax``, ``@``, ``scaled_dot_product_attention``
  ...) are forbidden while the reader's function runs (a :class:`torch.overrides.TorchFunctionMode`), and so
  are the course's own Triton kernels (``gpuperf.kernels``);
* **an exception** (a stub not yet written, a compile error) is reported as such, never raised, so a lab as
  shipped runs top to bottom.

:func:`grade` is what a lab calls: it prints the report and returns the function later cells should use (the
reader's once it passes, the course's solution until then). With the environment variable
``GPUPERF_LAB_SOLUTIONS=1`` it grades the course's solution (``gpuperf.kernels.labs``) instead of the reader's
cell and raises ``AssertionError`` if that fails: that is how CI runs every lab with the solutions in place.

torch is imported inside the functions (``import gpuperf.grading`` stays light).
"""

from __future__ import annotations

import contextlib
import importlib
import math
import os
import secrets
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

#: Set to 1 to grade (and use) the course's solutions instead of the reader's cells.
SOLUTIONS_ENV_VAR = "GPUPERF_LAB_SOLUTIONS"

#: Unit roundoff u = 2^-p (p = significand bits including the implicit one) of each format.
UNIT_ROUNDOFF = {"fp64": 2.0**-53, "fp32": 2.0**-24, "tf32": 2.0**-11, "fp16": 2.0**-11, "bf16": 2.0**-8}

#: Smallest positive subnormal of each output format: values below it cannot be told apart from 0.
_TINY = {"fp64": 5e-324, "fp32": 1.4e-45, "fp16": 2.0**-24, "bf16": 9.2e-41}


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


@dataclass(frozen=True)
class GradeReport:
    """All cases of one exercise, with the seed that drew their inputs."""

    exercise: str
    title: str
    seed: int
    device: str
    results: tuple[CaseResult, ...]
    graded: str = "yours"  # or "the course's solution"

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    @property
    def failures(self) -> tuple[CaseResult, ...]:
        return tuple(r for r in self.results if not r.passed)

    def text(self) -> str:
        cases = list(dict.fromkeys(r.case for r in self.results))
        bad_cases = list(dict.fromkeys(r.case for r in self.failures))
        head = (f"{self.exercise} ({self.title}), {self.graded}, on {self.device}: "
                f"{len(cases) - len(bad_cases)} of {len(cases)} cases pass (seed {self.seed})")
        if self.passed:
            return "PASSED " + head
        lines = ["NOT YET " + head]
        first = self.failures[0]
        lines.append(f"  first failing case: {first.case}, output {first.output}")
        lines.extend("    " + line for line in _describe_failure(first).splitlines())
        others = [c for c in bad_cases if c != first.case]
        if others:
            shown = "; ".join(others[:4]) + (f"; and {len(others) - 4} more" if len(others) > 4 else "")
            lines.append(f"  also failing: {shown}")
        passing = [c for c in cases if c not in bad_cases]
        if passing:
            shown = "; ".join(passing[:4]) + (f"; and {len(passing) - 4} more" if len(passing) > 4 else "")
            lines.append(f"  passing: {shown}")
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
    return Tolerance(atol=_TINY[name], rtol=rtol, reason=reason)


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
    return Tolerance(atol=_TINY[name], rtol=rtol, reason=reason)


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


def compare(case: str, output: str, yours, expected, tol: Tolerance, scale=None) -> CaseResult:
    """Compare one output tensor (any float dtype, any device) with its float64 ``expected`` (CPU).

    ``scale`` (a float64 tensor like ``expected``, or a float) replaces ``|expected|`` in the bound. NaN or
    infinity where the expected value is finite is always wrong (an infinity in the expected value must be
    matched exactly). Returns a :class:`CaseResult` naming the first wrong index in row-major order."""
    import torch

    if not isinstance(yours, torch.Tensor):
        return CaseResult(case, output, False, f"expected a torch.Tensor for {output}, got "
                          f"{type(yours).__name__}", tolerance=tol)
    exp = expected.detach().to(device="cpu", dtype=torch.float64)
    if tuple(yours.shape) != tuple(exp.shape):
        return CaseResult(case, output, False, f"{output} has shape {tuple(yours.shape)}, expected "
                          f"{tuple(exp.shape)}", tolerance=tol)
    got = yours.detach().to(device="cpu", dtype=torch.float64)
    if scale is None:
        bound_scale = exp.abs()
    elif isinstance(scale, torch.Tensor):
        bound_scale = scale.detach().to(device="cpu", dtype=torch.float64)
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
    if isinstance(exc, ForbiddenCall):
        return CaseResult(case, "-", False, str(exc))
    if isinstance(exc, NotImplementedError):
        return CaseResult(case, "-", False, "not written yet: your function raised NotImplementedError")
    text = str(exc).strip().splitlines()
    first = text[-1] if text else ""
    return CaseResult(case, "-", False, f"your function raised {type(exc).__name__}: {first[:300]}")


# --------------------------------------------------------------------------------------------------------
# Guards: forbidden calls, poisoned memory, guard bands.
# --------------------------------------------------------------------------------------------------------


class ForbiddenCall(RuntimeError):
    """The reader's function called an operation the exercise asks them to write themselves."""


@contextlib.contextmanager
def forbid(names: Sequence[str], exercise: str, allow_course_kernels: bool = False) -> Iterator[None]:
    """Raise :class:`ForbiddenCall` if a torch function or Tensor method whose ``__name__`` is in ``names``
    runs inside the block, or (unless ``allow_course_kernels``) any Triton kernel of ``gpuperf.kernels``."""
    from torch.overrides import TorchFunctionMode

    banned = frozenset(names)
    leaves_torch = frozenset(("numpy", "tolist", "__array__")) if names else frozenset()

    class _Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "")
            if (name in leaves_torch or name in banned) and _called_from_triton():
                return func(*args, **(kwargs or {}))  # e.g. the autotuner's timing statistics
            if name in leaves_torch:
                raise ForbiddenCall(
                    f"your function took the data out of torch ({name!r}) to compute outside a kernel: "
                    f"{exercise} asks for a Triton kernel that does the work itself")
            if name in banned:
                raise ForbiddenCall(
                    f"your function called torch's {name!r}, which computes the answer for you: {exercise} "
                    "asks for a Triton kernel that does the work itself")
            return func(*args, **(kwargs or {}))

    patched = [] if allow_course_kernels else _block_course_kernels(exercise)
    try:
        with _Mode():
            yield
    finally:
        for obj, had, old in patched:
            if had:
                obj.run = old
            else:
                with contextlib.suppress(AttributeError):
                    del obj.run


def _called_from_triton(depth: int = 40) -> bool:
    """True when the code that called the torch function (torch's own frames skipped) is Triton's, e.g. its
    autotuner's timing statistics (``torch.quantile(...).tolist()`` in some versions); the reader's code,
    a kernel body run by the interpreter included, is not."""
    import sys

    frame = sys._getframe(2)
    for _ in range(depth):
        if frame is None:
            return False
        module = frame.f_globals.get("__name__", "")
        if module == "torch" or module.startswith("torch."):
            frame = frame.f_back
            continue
        return module == "triton" or module.startswith("triton.")
    return False


def _block_course_kernels(exercise: str) -> list:
    import sys

    try:
        from triton.runtime.jit import KernelInterface
    except ImportError:  # pragma: no cover - triton is always there with the kernels
        return []
    patched = []
    for name, module in list(sys.modules.items()):
        if not name.startswith("gpuperf.kernels") or module is None:
            continue
        for attr, obj in list(vars(module).items()):
            if not isinstance(obj, KernelInterface) or any(p[0] is obj for p in patched):
                continue

            def refuse(*args, _name=f"{name}.{attr}", **kwargs):
                raise ForbiddenCall(f"your function launched the course's own kernel {_name}: {exercise} "
                                    "asks you to write the kernel yourself")

            had = "run" in vars(obj)
            patched.append((obj, had, vars(obj).get("run")))
            obj.run = refuse
    return patched


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


# --------------------------------------------------------------------------------------------------------
# Exercises.
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One run of the reader's function: ``label`` names it in the report; ``run(fn)`` calls ``fn`` and
    returns its :class:`CaseResult` list (it draws its inputs when called)."""

    label: str
    run: Callable[[Callable], list[CaseResult]]
    poison_bytes: int = 0


@dataclass(frozen=True)
class Exercise:
    key: str
    title: str
    solution: str  # "module:function" in gpuperf.kernels.labs (or a pure module)
    cases: Callable[[Any, str], list[Case]]  # (torch.Generator, device) -> cases
    forbidden: tuple[str, ...] = ()
    needs_torch: bool = True

    def load_solution(self) -> Callable:
        module, _, name = self.solution.partition(":")
        return getattr(importlib.import_module(module), name)


def _device() -> str:
    import torch

    if torch.cuda.is_available():
        import gpuperf.kernels  # noqa: F401 (the interpreter switch)
        from gpuperf.kernels import interpreter_enabled

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


# ---- L1: roofline arithmetic (plain Python) ----------------------------------------------------------


def _l1_time_cases(gen, device) -> list[Case]:
    import random

    rng = random.Random(int(gen.initial_seed()))
    cases = []
    specs = [("a memory-bound op (intensity 0.25)", 0.25), ("a compute-bound op (intensity 900)", 900.0),
             ("an op exactly at the ridge point", None), ("no arithmetic at all (a copy)", 0.0)]
    for label, intensity in specs:
        peak = rng.uniform(0.5, 2.0) * 10 ** rng.randint(11, 15)
        bw = rng.uniform(0.5, 5.0) * 10 ** rng.randint(10, 12)
        bytes_moved = rng.uniform(1, 9) * 10 ** rng.randint(6, 10)
        ridge = peak / bw
        flop = bytes_moved * (ridge if intensity is None else intensity)
        expected = max(flop / peak, bytes_moved / bw)

        def run(fn, flop=flop, bytes_moved=bytes_moved, peak=peak, bw=bw, expected=expected, label=label):
            got = fn(flop, bytes_moved, peak, bw)
            return [_scalar_result(label, "time_s", got, expected, 1e-9)]

        cases.append(Case(f"{label}: flop={flop:.3g}, bytes={bytes_moved:.3g}, peak={peak:.3g} FLOP/s, "
                          f"bandwidth={bw:.3g} B/s", run))
    return cases


def _l1_bytes_cases(gen, device) -> list[Case]:
    import random

    rng = random.Random(int(gen.initial_seed()) + 1)
    cases = []
    shapes = [(1, rng.randint(2, 9000), rng.randint(2, 9000)), (rng.randint(2, 4096), rng.randint(2, 4096), 1),
              (rng.randint(100, 9000), rng.randint(100, 9000), rng.randint(100, 9000)), (97, 1, 1025)]
    for (m, n, k), b in zip(shapes, (2, 4, 1, 2)):
        expected = float((m * k + k * n + m * n) * b)

        def run(fn, m=m, n=n, k=k, b=b, expected=expected):
            got = fn(m, n, k, b)
            return [_scalar_result(f"m={m}, n={n}, k={k}, {b} bytes per element", "bytes_moved", got,
                                   expected, 0.0)]

        cases.append(Case(f"m={m}, n={n}, k={k}, {b} bytes per element", run))
    return cases


def _scalar_result(case: str, output: str, got, expected: float, rtol: float) -> CaseResult:
    tol = Tolerance(0.0, rtol, "exact arithmetic up to double rounding" if rtol else "an exact count")
    try:
        value = float(got)
    except (TypeError, ValueError):
        return CaseResult(case, output, False, f"expected a number, got {type(got).__name__}", tolerance=tol)
    err = abs(value - expected)
    ok = err <= rtol * abs(expected) and math.isfinite(value)
    return CaseResult(case, output, ok, "" if ok else _scalar_hint(value, expected), () if not ok else None,
                      value, expected, err, 0 if ok else 1, 1, tol)


def _scalar_hint(value: float, expected: float) -> str:
    if expected and value:
        return f"yours / expected = {value / expected:.6g}"
    return ""


# ---- L2: vector add and the fused chain ---------------------------------------------------------------


_ARITH = ("add", "add_", "__add__", "__radd__", "__iadd__", "sub", "__sub__", "mul", "mul_", "__mul__",
          "__rmul__", "__imul__", "addcmul", "lerp", "fma", "sum", "copy_", "clone", "__setitem__", "where",
          "__matmul__", "matmul", "addmm", "baddbmm", "addmv")


def _l2_add_cases(gen, device) -> list[Case]:
    sizes = [1, 97, 1024, 1025, 4096 + int(torch_randint(gen, 1, 999))]
    if device != "cpu":
        sizes += [1 << 20, (1 << 20) + 3]
    cases = []
    for dtype in _dtypes(device):
        for n in sizes:
            cases.append(Case(f"n={n} {dtype_name(dtype)}", _add_case(gen, device, dtype, n),
                              poison_bytes=8 * n))
    return cases


def torch_randint(gen, lo: int, hi: int) -> int:
    import torch

    return int(torch.randint(lo, hi, (1,), generator=gen))


def _add_case(gen, device, dtype, n):
    def run(fn):
        import torch

        label = f"n={n} {dtype_name(dtype)}"
        x, _bx = guarded(_randn(gen, (n,), dtype, device))
        y, _by = guarded(_randn(gen, (n,), dtype, device))
        # out starts as NaN (an element never written stays NaN); the guard band behind it holds 4096
        out_buf = torch.full((n + 256,), 4096.0, dtype=dtype, device=device)
        out = out_buf[:n]
        out.fill_(float("nan"))
        expected = x.double().cpu() + y.double().cpu()
        got = fn(x, y, out)
        _sync(device)
        results = []
        if got is not None and isinstance(got, torch.Tensor) and got.data_ptr() != out.data_ptr():
            results.append(CaseResult(label, "out", False, "the function must write into `out` and return it; "
                                      "it returned another tensor"))
        guard = out_buf[n:].cpu()
        if not bool((guard == 4096.0).all()):
            first = int((guard != 4096.0).nonzero()[0])
            results.append(CaseResult(label, "out", False,
                                      f"your kernel wrote past the end of out: element n + {first} (index "
                                      f"{n + first}) of the buffer behind out changed; out has only {n} elements"))
        results.append(compare(label, "out", out, expected, elementwise_tolerance(dtype, 1)))
        return results

    return run


def _l2_chain_cases(gen, device) -> list[Case]:
    cases = []
    sizes = [1, 97, 1025, 3000 + torch_randint(gen, 1, 999)]
    if device != "cpu":
        sizes += [(1 << 20) + 7]
    for dtype in _dtypes(device):
        for n in sizes:
            for k_ops in (1, 2, 5, 8):
                if n > 2000 and k_ops not in (5,):
                    continue
                scale = 0.5 + float(_torch().rand(1, generator=gen))
                shift = float(_torch().randn(1, generator=gen)) * 0.25
                label = f"n={n} {dtype_name(dtype)} k_ops={k_ops} scale={scale:.4f} shift={shift:.4f}"
                cases.append(Case(label, _chain_case(gen, device, dtype, n, k_ops, scale, shift, label),
                                  poison_bytes=4 * n))
    return cases


def _torch():
    import torch

    return torch


def _chain_case(gen, device, dtype, n, k_ops, scale, shift, label):
    def run(fn):
        x, _bx = guarded(_randn(gen, (n,), dtype, device, scale=2.0))
        y = x.double().cpu()
        largest = y.abs()  # the bound follows the largest intermediate value (y + shift may cancel)
        for j in range(k_ops):
            y = y * scale if j % 2 == 0 else y + shift
            largest = largest.maximum(y.abs())
        got = fn(x, k_ops, scale, shift)
        _sync(device)
        tol = elementwise_tolerance(dtype, 2 * k_ops + 1)
        tol = Tolerance(tol.atol, tol.rtol, tol.reason, scale_name="max |intermediate value|")
        return [compare(label, "out", got, y, tol, scale=largest)]

    return run


# ---- L3: softmax ------------------------------------------------------------------------------------


_SOFTMAX_BANNED = ("softmax", "log_softmax", "_softmax", "exp", "exp_", "exp2", "logsumexp", "sigmoid",
                   "div", "__truediv__", "__rtruediv__", "sum", "amax", "max", "pow", "__rpow__", "_log_softmax")


def _softmax_shapes(device: str, online: bool, gen) -> list[tuple[int, int]]:
    if device == "cpu":
        shapes = [(1, 1), (3, 97), (4, 1024), (2, 1025), (5, 1000 + torch_randint(gen, 1, 999))]
        if online:
            shapes += [(2, 4096 + torch_randint(gen, 1, 2000))]
    else:
        shapes = [(1, 1), (3, 97), (64, 1024), (33, 1025), (128, 4000 + torch_randint(gen, 1, 999))]
        if online:
            shapes += [(8, 65536 + 17), (3, 200_003)]
    return shapes


def _softmax_cases_for(online: bool):
    def cases(gen, device) -> list[Case]:
        out = []
        for dtype in _dtypes(device):
            for rows, cols in _softmax_shapes(device, online, gen):
                label = f"x {rows}x{cols} {dtype_name(dtype)}, rows {cols + 13} apart, row offsets 0 to 100"
                out.append(Case(label, _softmax_case(gen, device, dtype, rows, cols, label),
                                poison_bytes=4 * rows * (cols + 13)))
        return out

    return cases


def _softmax_case(gen, device, dtype, rows, cols, label):
    def run(fn):
        import torch

        # rows shifted by up to 100: exp overflows fp32 from 88.7 unless the row's max is subtracted
        base = _randn(gen, (rows, cols), torch.float32, "cpu", scale=3.0)
        base += torch.linspace(0, 100, rows).reshape(rows, 1)
        x = row_strided(base.to(dtype).to(device))
        expected = torch.softmax(x.double().cpu(), dim=-1)
        got = fn(x)
        _sync(device)
        return [compare(label, "y", got, expected, reduction_tolerance(dtype, cols, "row sum"))]

    return run


# ---- L4: matmul --------------------------------------------------------------------------------------


_MATMUL_BANNED = ("matmul", "mm", "bmm", "__matmul__", "__rmatmul__", "einsum", "addmm", "dot", "linear",
                  "tensordot", "baddbmm", "addbmm", "mv", "inner", "outer", "chain_matmul", "bilinear",
                  # a product by broadcasting, (a[:, :, None] * b[None]).sum(1)
                  "mul", "__mul__", "__rmul__", "sum", "nansum", "mean", "prod", "cumsum")


def _matmul_cases(gen, device) -> list[Case]:
    if device == "cpu":
        shapes = [(1, 1, 1), (97, 33, 65), (64, 64, 64), (33, 129, 70 + torch_randint(gen, 1, 50)),
                  (1, 96, 200)]
    else:
        shapes = [(1, 1, 1), (97, 33, 65), (64, 64, 64), (1000 + torch_randint(gen, 1, 99), 1025, 777),
                  (1, 4096, 512), (2048, 2048, 2048)]
    cases = []
    for dtype in _dtypes(device):
        for m, n, k in shapes:
            label = f"A {m}x{k} @ B {k}x{n} {dtype_name(dtype)}, A rows {k + 13} apart"
            cases.append(Case(label, _matmul_case(gen, device, dtype, m, n, k, label),
                              poison_bytes=4 * m * n))
    return cases


def _matmul_case(gen, device, dtype, m, n, k, label):
    def run(fn):
        a = row_strided(_randn(gen, (m, k), dtype, device))
        b, _bb = guarded(_randn(gen, (k, n), dtype, device))
        a64, b64 = a.double().cpu(), b.double().cpu()
        expected = a64 @ b64
        scale = a64.abs() @ b64.abs()
        got = fn(a, b)
        _sync(device)
        return [compare(label, "c", got, expected, matmul_tolerance(dtype, k), scale=scale)]

    return run


# ---- L5 and L6: attention -----------------------------------------------------------------------------


_ATTENTION_BANNED = _MATMUL_BANNED + _SOFTMAX_BANNED + (
    "scaled_dot_product_attention", "_scaled_dot_product_attention_math", "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention", "multi_head_attention_forward", "backward", "grad",
    "_scaled_dot_product_cudnn_attention", "masked_fill", "triu", "tril")


def _attention_shapes(device: str, gen) -> list[tuple[int, int, int, int, int, bool]]:
    """(batch, heads, n_q, n_k, head_dim, causal)."""
    if device == "cpu":
        return [(1, 1, 1, 1, 16, False), (1, 2, 97, 97, 32, True), (2, 1, 40, 130, 16, False),
                (1, 1, 130, 64, 32, True), (1, 1, 33 + torch_randint(gen, 0, 30), 70, 64, False)]
    return [(1, 1, 1, 1, 16, False), (1, 2, 97, 97, 32, True), (2, 3, 40, 1030, 64, False),
            (1, 2, 1030, 300, 64, True), (2, 4, 1024, 1024, 128, True), (2, 2, 777, 2049, 64, False)]


def _attention_inputs(gen, device, dtype, b, h, n_q, n_k, d):
    q, _ = guarded(_randn(gen, (b, h, n_q, d), dtype, device))
    k, _ = guarded(_randn(gen, (b, h, n_k, d), dtype, device))
    v, _ = guarded(_randn(gen, (b, h, n_k, d), dtype, device))
    return q, k, v


def _attention_reference(q, k, v, causal):
    """float64 on the CPU through ``scaled_dot_product_attention`` (math backend; top-left causal mask),
    and the log-sum-exp of the scaled, masked scores."""
    import torch
    import torch.nn.functional as F

    q64, k64, v64 = (t.detach().double().cpu() for t in (q, k, v))
    scale = 1.0 / math.sqrt(q.shape[-1])
    s = (q64 @ k64.transpose(-1, -2)) * scale
    if causal:
        hidden = torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool).triu(1)
        s = s.masked_fill(hidden, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    o = F.scaled_dot_product_attention(q64, k64, v64, is_causal=causal)
    return o, lse


def _l5_cases_for(want_causal: bool):
    """The forward's cases without (``L5.forward``) or with (``L5.causal``) the causal mask; the causal
    grader also checks a few full cases, so adding the mask cannot break the full path unnoticed."""

    def cases(gen, device) -> list[Case]:
        return _l5_cases(gen, device, want_causal)

    return cases


def _l5_cases(gen, device, want_causal: bool) -> list[Case]:
    cases = []
    for dtype in _dtypes(device):
        shapes = _attention_shapes(device, gen)
        if want_causal:
            shapes = [s for s in shapes if s[-1]] + [s for s in shapes if not s[-1]][:1]
            shapes += [(1, 1, 50, 50, 16, True), (1, 1, 64, 33, 32, True)]
        else:
            shapes = [s[:-1] + (False,) for s in shapes]
        if device == "cpu" and dtype != _dtypes(device)[0]:
            shapes = shapes[:3]
        for b, h, n_q, n_k, d, causal in shapes:
            label = (f"B={b} H={h} N_q={n_q} N_k={n_k} d={d} {dtype_name(dtype)} "
                     f"{'causal' if causal else 'full'}")
            cases.append(Case(label, _l5_case(gen, device, dtype, b, h, n_q, n_k, d, causal, label),
                              poison_bytes=4 * b * h * n_q * (d + 1)))
    return cases


def _l5_case(gen, device, dtype, b, h, n_q, n_k, d, causal, label):
    def run(fn):
        q, k, v = _attention_inputs(gen, device, dtype, b, h, n_q, n_k, d)
        o_ref, lse_ref = _attention_reference(q, k, v, causal)
        got = fn(q, k, v, causal)
        _sync(device)
        if not isinstance(got, tuple) or len(got) != 2:
            return [CaseResult(label, "-", False, "return a tuple (o, lse)")]
        o, lse = got
        tol_o = normwise_tolerance(dtype, n_k + d, what="o")
        lse_reason = "lse is kept in fp32: 8 (d + N_k + 8) x 2^-24 x (1 + max|lse|)"
        if dtype_name(dtype) == "fp32":
            lse_reason += "; scores from TF32 products (2^-11 each) would exceed it"
        lse_tol = Tolerance(atol=8 * (d + n_k + 8) * UNIT_ROUNDOFF["fp32"] * (1 + float(lse_ref.abs().max())),
                            rtol=0.0, reason=lse_reason, scale_name="1")
        return [compare(label, "o", o, o_ref, tol_o, scale=float(o_ref.abs().max())),
                compare(label, "lse", lse, lse_ref, lse_tol)]

    return run


def _l6_cases(gen, device) -> list[Case]:
    cases = []
    for dtype in _dtypes(device):
        shapes = _attention_shapes(device, gen)
        if device == "cpu":
            shapes = shapes[:4] if dtype == _dtypes(device)[0] else shapes[:2]
        for b, h, n_q, n_k, d, causal in shapes:
            label = (f"B={b} H={h} N_q={n_q} N_k={n_k} d={d} {dtype_name(dtype)} "
                     f"{'causal' if causal else 'full'}")
            cases.append(Case(label, _l6_case(gen, device, dtype, b, h, n_q, n_k, d, causal, label),
                              poison_bytes=4 * b * h * (n_q + n_k) * d))
    return cases


def _l6_case(gen, device, dtype, b, h, n_q, n_k, d, causal, label):
    def run(fn):
        q, k, v = _attention_inputs(gen, device, dtype, b, h, n_q, n_k, d)
        do, _ = guarded(_randn(gen, (b, h, n_q, d), dtype, device))
        import torch.nn.functional as F

        _, lse64 = _attention_reference(q, k, v, causal)
        q64, k64, v64 = (t.detach().double().cpu().requires_grad_(True) for t in (q, k, v))
        o64 = F.scaled_dot_product_attention(q64, k64, v64, is_causal=causal)
        o64.backward(do.double().cpu())
        # the forward values handed to the backward: o rounded to the input dtype, lse in fp32
        o_in, _ = guarded(o64.detach().to(dtype).to(device))
        lse_in, _ = guarded(lse64.detach().float().to(device))
        got = fn(q, k, v, o_in, lse_in, do, causal)
        _sync(device)
        if not isinstance(got, tuple) or len(got) != 3:
            return [CaseResult(label, "-", False, "return a tuple (dq, dk, dv)")]
        results = []
        refs = (q64.grad, k64.grad, v64.grad)
        # one scale for the three gradients (dq and dk are exactly 0 with a single key, dv is not)
        largest = max(float(r.abs().max()) for r in refs)
        for name, mine, ref in zip(("dq", "dk", "dv"), got, refs):
            tol = normwise_tolerance(dtype, max(n_q, n_k) + d, factor=8.0, what=name)
            tol = Tolerance(tol.atol, tol.rtol, tol.reason, "max|expected| of dq, dk, dv")
            results.append(compare(label, name, mine, ref, tol, scale=largest))
        return results

    return run


EXERCISES: dict[str, Exercise] = {
    e.key: e
    for e in (
        Exercise("L1.time", "roofline lower bound on the time of an operation",
                 "gpuperf.labs.solutions:time_lower_bound_s", _l1_time_cases, needs_torch=False),
        Exercise("L1.matmul_bytes", "bytes a matmul must move", "gpuperf.labs.solutions:matmul_bytes_moved",
                 _l1_bytes_cases, needs_torch=False),
        Exercise("L2.add", "vector add in Triton", "gpuperf.kernels.labs.l2:add", _l2_add_cases, _ARITH),
        Exercise("L2.chain", "fused elementwise chain in Triton", "gpuperf.kernels.labs.l2:chain",
                 _l2_chain_cases, _ARITH),
        Exercise("L3.softmax", "fused softmax, one row per program", "gpuperf.kernels.labs.l3:softmax_rows",
                 _softmax_cases_for(False), _SOFTMAX_BANNED),
        Exercise("L3.online", "online softmax for long rows", "gpuperf.kernels.labs.l3:online_softmax",
                 _softmax_cases_for(True), _SOFTMAX_BANNED),
        Exercise("L4.matmul", "tiled matmul", "gpuperf.kernels.labs.l4:matmul", _matmul_cases, _MATMUL_BANNED),
        Exercise("L5.forward", "FlashAttention forward (o, lse)", "gpuperf.kernels.labs.l5:attention_forward",
                 _l5_cases_for(False), _ATTENTION_BANNED),
        Exercise("L5.causal", "FlashAttention forward with the causal mask",
                 "gpuperf.kernels.labs.l5:attention_forward", _l5_cases_for(True), _ATTENTION_BANNED),
        Exercise("L6.backward", "FlashAttention backward (dq, dk, dv)",
                 "gpuperf.kernels.labs.l6:attention_backward", _l6_cases, _ATTENTION_BANNED),
    )
}


def _exercise(key: str) -> Exercise:
    if key not in EXERCISES:
        raise ValueError(f"exercise must be one of {sorted(EXERCISES)}, got {key!r}")
    return EXERCISES[key]


def grade_report(key: str, fn: Callable, *, seed: int | None = None, device: str | None = None,
                 graded: str = "yours", allow_course_kernels: bool = False) -> GradeReport:
    """Grade ``fn`` on the cases of exercise ``key``; never raises for a wrong or crashing ``fn``.

    ``seed`` (default: fresh, from the OS) draws the inputs; ``device`` defaults to ``"cuda"`` when kernels
    run compiled on a GPU, else ``"cpu"`` (the Triton interpreter)."""
    ex = _exercise(key)
    if not callable(fn):
        raise ValueError(f"fn must be callable, got {fn!r}")
    if seed is None:
        seed = secrets.randbits(31)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    import torch

    if device is None:
        device = _device() if ex.needs_torch else "cpu"
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    gen = torch.Generator().manual_seed(seed)
    results: list[CaseResult] = []
    for case in ex.cases(gen, device):
        if case.poison_bytes and ex.needs_torch:
            poison_memory(device, case.poison_bytes)
        def watched(*args, **kwargs):
            with forbid(ex.forbidden, key, allow_course_kernels=allow_course_kernels), \
                    interpreter_dot_as_on_gpu(device == "cpu" and ex.needs_torch):
                return fn(*args, **kwargs)

        try:
            case_results = case.run(watched)
        except Exception as exc:  # the reader's code: report, never raise
            case_results = [_result_of_exception(case.label, exc)]
        results.extend(r if r.case == case.label else _relabel(r, case.label) for r in case_results)
    name = torch.cuda.get_device_name() if device == "cuda" else "CPU (Triton interpreter)"
    return GradeReport(key, ex.title, seed, name, tuple(results), graded)


def _relabel(r: CaseResult, label: str) -> CaseResult:
    from dataclasses import replace

    return replace(r, case=label)


_SOLUTION_MODULES = ("gpuperf.kernels.labs", "gpuperf.labs.solutions")


def solution(key: str) -> Callable:
    """The course's solution of exercise ``key`` (for the labs' later cells and for CI)."""
    return _exercise(key).load_solution()


def grade(key: str, fn: Callable | None, *, seed: int | None = None) -> Callable:
    """Grade the reader's ``fn`` for exercise ``key``, print the report, and return the function the lab's
    later cells should use: ``fn`` once it passes, the course's solution until then (said in the report).

    With ``GPUPERF_LAB_SOLUTIONS=1`` the course's solution is graded in place of ``fn``, and a failure raises
    ``AssertionError`` (CI runs every lab that way)."""
    ex = _exercise(key)
    if solutions_requested():
        sol = ex.load_solution()
        report = grade_report(key, sol, seed=seed, graded="the course's solution", allow_course_kernels=True)
        print(report.text())
        if not report.passed:
            raise AssertionError(f"the course's solution of {key} fails its grader:\n{report.text()}")
        return sol
    if fn is None:
        print(f"NOT YET {key} ({ex.title}): nothing to grade yet")
        return ex.load_solution()
    if getattr(fn, "__module__", "").startswith(_SOLUTION_MODULES):
        print(f"NOT YET {key} ({ex.title}): the function given is the course's solution, standing in "
              "because an earlier exercise has not passed yet; finish that one, re-run its cell, then this")
        return fn
    report = grade_report(key, fn, seed=seed)
    print(report.text())
    if report.passed:
        return fn
    print("  (until yours passes, the cells below use the course's solution, so the lab still runs)")
    return ex.load_solution()


__all__ = [
    "EXERCISES", "SOLUTIONS_ENV_VAR", "UNIT_ROUNDOFF", "Case", "CaseResult", "Exercise", "ForbiddenCall",
    "GradeReport", "Tolerance", "compare", "dtype_name", "elementwise_tolerance", "forbid", "grade",
    "grade_report", "guarded", "interpreter_dot_as_on_gpu", "matmul_tolerance", "normwise_tolerance",
    "poison_memory",
    "reduction_tolerance", "row_strided", "solution", "solutions_requested",
]
