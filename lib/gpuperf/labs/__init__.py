"""Helpers of the labs (``labs/L*.ipynb``): the environment report of each lab's first cell, device-aware
timing, and the reader's own roofline. The graders are in :mod:`gpuperf.grading`; the solutions of the Triton
exercises in :mod:`gpuperf.kernels.labs`, those of the plain-Python ones in :mod:`gpuperf.labs.solutions`.

torch is imported inside the functions (``import gpuperf.labs`` stays light).
"""

from __future__ import annotations

import html
import platform
import statistics
from dataclasses import dataclass
from typing import Callable

#: The course's solution functions as their own modules defined them, by ``"module:name"``: each solution module
#: (``gpuperf.kernels.labs.l2`` ... ``l6``, ``gpuperf.labs.solutions``) calls :func:`pin_solutions` as the last
#: line it runs, so a cell that later rebinds a name there (``l5.attention_forward = mine``) changes nothing the
#: grader compares with (``gpuperf.grading._solution_of``). Importing this stays light: no torch.
_PINNED: dict = {}
#: ``"module:name"``: the functions a reload of the unchanged module defined again (``importlib.reload``, IPython's
#: ``%autoreload``): the same source, so they are the solution too (:func:`is_pinned`)
_PINNED_AGAIN: dict = {}
#: ``"module:name"``: the code object each pinned function had when it was pinned (``%autoreload`` swaps a
#: function's ``__code__`` in place: a changed one is reported, :func:`pinned_code_changed`)
_PINNED_CODE: dict = {}
#: module name: the SHA-256 of its source file when it first pinned its functions
_PINNED_SOURCES: dict = {}


def _source_digest(filename) -> str | None:
    import hashlib

    try:
        with open(filename, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except (OSError, TypeError):
        return None


def _code_of(value):
    return getattr(getattr(value, "fn", value), "__code__", None)  # (a @triton.jit kernel's function)


def pin_solutions(namespace: dict) -> None:
    """Record the functions a solution module defined (its ``globals()``, at the end of its import). A reload of
    the module with its source file unchanged (the same bytes as at its first import) adds the functions it
    defined again beside the pinned ones, where their code equals the pinned code; a reload of an edited file
    pins nothing: the pinned functions stay the solution, and the module's new functions are reported as
    rebound (``gpuperf.grading.watch._solutions_rebound``)."""
    module = namespace["__name__"]
    digest = _source_digest(namespace.get("__file__"))
    first = module not in _PINNED_SOURCES
    if first:
        _PINNED_SOURCES[module] = digest
    unchanged = digest is not None and _PINNED_SOURCES[module] == digest
    for name, value in list(namespace.items()):
        if not (callable(value) and not isinstance(value, type) and getattr(value, "__module__", None) == module):
            continue
        key = f"{module}:{name}"
        if key not in _PINNED:
            if first or unchanged:
                _PINNED[key] = value
                _PINNED_CODE[key] = _code_of(value)
        elif unchanged and value is not _PINNED[key] and _code_of(value) == _PINNED_CODE[key]:
            _PINNED_AGAIN.setdefault(key, []).append(value)


def is_pinned(key: str, value) -> bool:
    """``value`` is the function pinned as ``key`` ("module:name"), or one an unchanged reload defined again."""
    return value is _PINNED.get(key) or any(value is again for again in _PINNED_AGAIN.get(key, ()))


def pinned_code_changed(key: str) -> bool:
    """The pinned function's code is no longer what it was when it was pinned (``%autoreload`` of an edited
    module patches the old function's ``__code__``; an unchanged reload swaps in equal code)."""
    value = _PINNED.get(key)
    return value is not None and _code_of(value) != _PINNED_CODE.get(key)


#: The versions the labs were run with, by where. The H200 line is the environment of the course's recorded
#: runs; update it (and the others) whenever the labs are re-run somewhere (tools/run_lab.py on a GPU box).
TESTED = {
    "CPU (CI)": {"python": "3.11", "torch": "2.13.0", "triton": "3.9.0 (interpreter)", "numpy": "2.x",
                 "ipywidgets": "8.1"},
    "NVIDIA H200": {"python": "3.12", "torch": "2.11.0+cu130", "triton": "3.6.0", "numpy": "2.x",
                    "ipywidgets": "-"},
    "Colab (pins of make test-colab)": {"python": "3.13", "torch": "2.11.0", "triton": "3.6.0",
                                        "numpy": "2.1", "ipywidgets": "7.7.1"},
}

#: What a reader on a CPU runtime of Colab does to get a GPU.
COLAB_GPU_STEPS = ("Runtime → Change runtime type → Hardware accelerator: T4 GPU → Save, then "
                   "Runtime → Run all. The free T4 has no bf16 matrix units: the labs use fp16 and fp32 there.")


@dataclass(frozen=True)
class Environment:
    device: str
    on_gpu: bool
    interpreted: bool
    versions: dict


def _release(version: str) -> tuple[int, int]:
    """(major, minor) of a version string such as "2.4.6" or "3.6.0+git": (0, 0) when unreadable."""
    parts = version.split(".")
    try:
        return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or 0)
    except (IndexError, ValueError):
        return (0, 0)


def interpreter_numpy_conflict(triton_version: str, numpy_version: str) -> str | None:
    """Why Triton's interpreter will fail with these versions, or None. Triton 3.6's interpreter converts
    one-element arrays to Python numbers, which NumPy 2.4 made an error ("only 0-dimensional arrays can be
    converted to Python scalars"; a deprecation since NumPy 1.25). Checked on 2026-12-04: Triton 3.6 fails
    with NumPy 2.4.6 and passes every lab with 2.2.6; Triton 3.9 passes with 2.4.6; the Tritons between were
    not checked, so they are warned about too. Importing ``gpuperf.kernels`` fixes Triton 3.6's conversion
    (every lab passes with NumPy 2.4.6 since 2026-12-05), so the labs warn only where that fix did not take."""
    if _release(triton_version) == (0, 0) or _release(numpy_version) == (0, 0):
        return None
    if _release(triton_version) < (3, 9) and _release(numpy_version) >= (2, 4):
        return (f"Triton {triton_version}'s interpreter fails with NumPy {numpy_version} (NumPy 2.4 turned a "
                "conversion it makes into an error: \"only 0-dimensional arrays can be converted to Python "
                "scalars\"). Install NumPy below 2.4 (pip install \"numpy<2.4\") or Triton 3.9 or later, "
                "then restart the runtime.")
    return None


def _version(module: str) -> str:
    try:
        mod = __import__(module)
    except ImportError:
        return "not installed"
    return str(getattr(mod, "__version__", "?"))


def environment() -> Environment:
    """The device the labs' kernels will run on and the versions found."""
    import torch

    import gpuperf.kernels
    from gpuperf.kernels import interpreter_enabled

    interpreted = interpreter_enabled()
    on_gpu = torch.cuda.is_available() and not interpreted
    device = torch.cuda.get_device_name() if on_gpu else "CPU (Triton interpreter)"
    versions = {"python": platform.python_version(), "torch": torch.__version__,
                "triton": _version("triton"), "numpy": _version("numpy"), "ipywidgets": _version("ipywidgets")}
    del gpuperf
    return Environment(device, on_gpu, interpreted, versions)


def environment_html(lab: str, env: Environment | None = None) -> str:
    """An HTML table: the versions found beside those the labs were tested with, and, without a GPU, how
    to get one."""
    env = environment() if env is None else env
    names = ("python", "torch", "triton", "numpy", "ipywidgets")
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ("", *names))
    rows = [f"<tr><td><b>found here: {html.escape(env.device)}</b></td>"
            + "".join(f"<td><b>{html.escape(env.versions[n])}</b></td>" for n in names) + "</tr>"]
    for where, versions in TESTED.items():
        rows.append(f"<tr><td>tested: {html.escape(where)}</td>"
                    + "".join(f"<td>{html.escape(versions[n])}</td>" for n in names) + "</tr>")
    if env.on_gpu:
        note = (f"Kernels run compiled on the {html.escape(env.device)}: the lab uses its larger sizes and "
                "times them.")
    elif env.interpreted and _cuda_available():
        note = ("<b>A GPU is present, but TRITON_INTERPRET is set</b>: the kernels run through Triton's "
                "CPU interpreter at small sizes and the timings are of the interpreter. Unset it and "
                "restart the runtime to compile them for the GPU.")
    else:
        note = ("<b>No GPU here</b>: the kernels run through Triton's interpreter on the CPU at small sizes "
                "(fp32 and fp16; the interpreter cannot do bf16), which is enough for every exercise and "
                "grader; the timings are of the interpreter, not of a GPU. In Colab, for a GPU: "
                + html.escape(COLAB_GPU_STEPS))
    conflict = interpreter_numpy_conflict(env.versions["triton"], env.versions["numpy"])
    if env.interpreted and conflict and not _interpreter_fixed():
        note += f"</p><p><b>Warning</b>: {html.escape(conflict)}"
    # The class "dataframe" lets the site's theme colour the table in its dark mode; "gpuperf-env" lets
    # book/_static/custom.css drop the light card the theme puts behind HTML outputs there.
    return (f'<div class="gpuperf-env"><p><b>Lab {html.escape(lab)}</b></p><table class="dataframe"><thead>'
            f"<tr>{head}</tr></thead><tbody>" + "".join(rows) + f"</tbody></table><p>{note}</p></div>")


def _interpreter_fixed() -> bool:
    """Whether importing gpuperf.kernels fixed the interpreter's conversion (gpuperf/kernels/_interpreter_compat.py)."""
    from gpuperf.kernels import _interpreter_compat

    return _interpreter_compat.is_fixed()


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def show_environment(lab: str) -> Environment:
    """Display :func:`environment_html` (in a notebook) and return the :class:`Environment`."""
    env = environment()
    try:
        from IPython.display import HTML, display
    except ImportError:  # a plain Python run (tools/run_lab.py on a machine without IPython)
        v = env.versions
        print(f"Lab {lab} on {env.device}: " + ", ".join(f"{k} {v[k]}" for k in v))
        return env
    display(HTML(environment_html(lab, env)))
    return env


def median_time_s(fn: Callable[[], object], on_gpu: bool, repeats: int = 5) -> float:
    """Median seconds of one call of ``fn``: on a GPU through :func:`gpuperf.benchmark.time_callable` (CUDA
    events, warm-up, L2 flushed between calls); on the CPU the median of ``repeats`` ``time.perf_counter``
    timings after one warm-up call."""
    if not callable(fn):
        raise ValueError(f"fn must be callable, got {fn!r}")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an int >= 1, got {repeats!r}")
    if on_gpu:
        from gpuperf.benchmark import time_callable

        return time_callable(fn)
    from gpuperf.benchmark.timing import time_calls_s

    return statistics.median(time_calls_s(fn, repeats=repeats, warmup=1))


def device_label(env: Environment) -> str:
    """"NVIDIA T4, torch 2.11.0, triton 3.6.0": the label of the reader's results in figures."""
    v = env.versions
    return f"{env.device}, torch {v['torch']}, triton {v['triton']}"


def your_accelerator(env: Environment, dtype: str = "fp32", unit: str = "matrix"):
    """The roofline of the reader's device as ``(accelerator, dtype, unit)``: the datasheet figures of a
    known GPU (``gpuperf.hardware``) when it has a ``dtype`` peak on ``unit``, else two quick measurements
    (an fp32 matmul and a copy) on this device, whose peak is an fp32 "matrix" one."""
    from gpuperf import hardware
    from gpuperf.benchmark import timing as measure

    if env.on_gpu:
        try:
            acc = hardware.get_accelerator(env.device)
            acc.peak_flop_per_s(dtype, unit)
            return acc, dtype, unit
        except ValueError:
            pass
    device = "cuda" if env.on_gpu else "cpu"
    n = 1024 if env.on_gpu else 256
    mm = measure.measure_matmul_flop_per_s(n=n, dtype="float32", repeats=3, device=device)
    copy = measure.measure_copy_bytes_per_s(n_bytes=2**24, repeats=3, device=device)
    name = f"{env.device} (measured)" if env.on_gpu else "this CPU (measured)"
    return measure.measured_accelerator(mm, copy, name=name), "fp32", "matrix"


__all__ = ["COLAB_GPU_STEPS", "TESTED", "Environment", "device_label", "environment", "environment_html",
           "median_time_s", "show_environment", "your_accelerator"]
