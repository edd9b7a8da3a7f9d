"""The roofline explorer: pick a device and an operation, move its size, and watch the operation's point
move along the device's roofline (Williams, Waterman and Patterson, "Roofline", CACM 2009).

Built on :mod:`gpuperf.explorers.core`: :func:`roofline_view` is the pure view (one state: the figure
and the line of numbers), :func:`roofline_explorer` lists the controls. In Jupyter and Colab it is a live
widget; on the book's static site every state is precomputed (2 devices x 8 operations x 4 sizes = 64).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Callable, Sequence

from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from gpuperf import hardware
from gpuperf import roofline as rl
from gpuperf.explorers.core import View, dropdown, explorer, slider
from gpuperf.hardware import DTYPES, Accelerator
from gpuperf.plotting.roofline import plot_roofline, point_for
from gpuperf.plotting.style import use_book_style

#: The intensity axis every state is drawn on (FLOP/byte); widened only if an op falls outside it.
INTENSITY_RANGE = (1e-2, 1e5)
#: The devices offered by default (the device asked for is added when it is not among them).
DEFAULT_DEVICES = ("A100 80GB SXM", "H200 SXM")
#: The values of the size slider ``n`` (each op says what ``n`` is).
SIZES = (64, 512, 4096, 32768)
#: Row length of the row-wise ops (LayerNorm, softmax) and head size of attention.
ROW_LENGTH = 4096
HEAD_DIM = 128
#: Ops per element in the elementwise chain.
CHAIN_OPS = 4


@dataclass(frozen=True)
class OpChoice:
    """An operation as the explorer offers it: its label (saying what ``n`` is), how to price it at size
    ``n`` in a dtype, and the unit whose roof it meets."""

    label: str
    build: Callable[[int, str], rl.OpCost]
    unit: str


OPS: dict[str, OpChoice] = {
    "matmul": OpChoice("matmul n x n x n (matrix unit)", lambda n, d: rl.matmul(n, n, n, d), "matrix"),
    "gemv": OpChoice("gemv (n x n) @ n-vector (matrix unit)", lambda n, d: rl.gemv(n, n, d), "matrix"),
    "attention_scores": OpChoice(f"attention scores Q K^T, n tokens, head {HEAD_DIM} (matrix unit)",
                                 lambda n, d: rl.attention_scores(n, HEAD_DIM, d), "matrix"),
    "chain_fused": OpChoice(f"{CHAIN_OPS} elementwise ops on n x n values, fused (vector unit)",
                            lambda n, d: rl.elementwise_chain(n * n, CHAIN_OPS, d, fused=True), "vector"),
    "chain_eager": OpChoice(f"{CHAIN_OPS} elementwise ops on n x n values, eager (vector unit)",
                            lambda n, d: rl.elementwise_chain(n * n, CHAIN_OPS, d, fused=False), "vector"),
    "softmax_fused": OpChoice(f"softmax, n rows of {ROW_LENGTH}, fused (vector unit)",
                              lambda n, d: rl.softmax(n, ROW_LENGTH, d, fused=True), "vector"),
    "softmax_eager": OpChoice(f"softmax, n rows of {ROW_LENGTH}, eager (vector unit)",
                              lambda n, d: rl.softmax(n, ROW_LENGTH, d, fused=False), "vector"),
    "layernorm_fused": OpChoice(f"LayerNorm, n rows of {ROW_LENGTH}, fused (vector unit)",
                                lambda n, d: rl.layernorm(n, ROW_LENGTH, d, fused=True), "vector"),
}
#: The old op names (the live explorer's first version) and the choice each maps to.
OP_ALIASES = {"elementwise_chain": "chain_fused", "softmax": "softmax_fused", "layernorm": "layernorm_fused"}


def describe(analysis: rl.RooflineAnalysis) -> str:
    """The explorer's text line (HTML): FLOP, bytes, intensity, bound and time lower bound."""
    return (
        f"<b>{html.escape(analysis.op.name)}</b>, {analysis.op.dtype} on {html.escape(analysis.accelerator_name)}"
        f" ({analysis.unit} unit): "
        f"{analysis.op.flop:.3g} FLOP, {analysis.op.bytes_moved:.3g} bytes, "
        f"intensity {analysis.intensity_flop_per_byte:.3g} FLOP/byte "
        f"(ridge {analysis.ridge_flop_per_byte:.3g}) &rarr; <b>{analysis.bound}-bound</b>, "
        f"time &ge; {rl.format_duration(analysis.time_s)}, "
        f"at most {analysis.fraction_of_peak:.1%} of the {analysis.peak_flop_per_s / 1e12:.4g} TFLOP/s peak"
    )


def _device_dtypes(acc: Accelerator) -> list[str]:
    have = {*acc.matrix_flop_per_s, *acc.vector_flop_per_s}
    return [d for d in DTYPES if d in have]


def _find(device, accelerators: Sequence[Accelerator]) -> Accelerator:
    if isinstance(device, Accelerator):
        device = device.name
    if not isinstance(device, str):
        raise ValueError(f"device must be a device name, got {device!r}")
    wanted = device.strip().lower()
    for acc in accelerators:
        if wanted == acc.name.lower() or wanted in (a.lower() for a in acc.aliases):
            return acc
    raise ValueError(f"device must be one of {[a.name for a in accelerators]}, got {device!r}")


def roofline_analysis(acc: Accelerator, op: str, n: int, dtype: str = "bf16") -> rl.RooflineAnalysis | None:
    """The analysis of ``op`` (a key of :data:`OPS`) at size ``n`` on ``acc``; ``None`` when the device
    has no peak for ``dtype`` on the op's unit."""
    if op not in OPS:
        raise ValueError(f"op must be one of {tuple(OPS)}, got {op!r}")
    choice = OPS[op]
    try:
        return rl.analyze(choice.build(n, dtype), acc, unit=choice.unit)
    except ValueError:
        if dtype not in (acc.matrix_flop_per_s if choice.unit == "matrix" else acc.vector_flop_per_s):
            return None
        raise


def roofline_figure(analysis: rl.RooflineAnalysis, acc: Accelerator) -> Figure:
    """The roofline of ``acc`` in the analysis's dtype and unit, with the op's point (a bare Figure)."""
    use_book_style()
    fig = Figure(figsize=(7.0, 3.8))
    fig.subplots_adjust(left=0.13, right=0.97, bottom=0.14, top=0.95)
    ax = fig.add_subplot()
    lo, hi = INTENSITY_RANGE
    intensity = analysis.intensity_flop_per_byte
    if intensity > 0:
        lo, hi = min(lo, intensity / 3), max(hi, intensity * 3)
    points = [point_for(analysis, analysis.op.name)] if intensity > 0 else []
    plot_roofline(ax, acc, analysis.op.dtype, analysis.unit, points=points, intensity_range=(lo, hi))
    # Decades only: the minor ticks of two log axes were 40% of the render time of the ~100 static frames.
    ax.xaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_minor_locator(NullLocator())
    return fig


def roofline_view(device: str, op: str, n: int, *, dtype: str = "bf16",
                  accelerators: Sequence[Accelerator] | None = None) -> View:
    """One state of the explorer: the figure and the line of numbers (see :func:`describe`)."""
    accs = tuple(hardware.ACCELERATORS if accelerators is None else accelerators)
    acc = _find(device, accs)
    analysis = roofline_analysis(acc, op, n, dtype)
    if analysis is None:
        return View(html=f"{html.escape(acc.name)} has no {OPS[op].unit}-unit peak for {dtype}; "
                         f"pick another device or operation.")
    return View(roofline_figure(analysis, acc), describe(analysis))


def roofline_controls(device: str = "H200 SXM", op: str = "matmul", *, n: int = 4096,
                      accelerators: Sequence[Accelerator] | None = None,
                      devices: Sequence[str] | None = None, sizes: Sequence[int] = SIZES):
    """The explorer's controls: a device dropdown, an operation dropdown and the size slider ``n``."""
    accs = tuple(hardware.ACCELERATORS if accelerators is None else accelerators)
    if not accs or not all(isinstance(a, Accelerator) for a in accs):
        raise ValueError(f"accelerators must be a non-empty sequence of Accelerator, got {accelerators!r}")
    acc = _find(device, accs)
    if devices is None:
        devices = DEFAULT_DEVICES if accelerators is None else [a.name for a in accs]
    names = [_find(d, accs).name for d in devices]
    if acc.name not in names:
        names.append(acc.name)
    op = OP_ALIASES.get(op, op)
    if op not in OPS:
        raise ValueError(f"op must be one of {tuple(OPS)}, got {op!r}")
    sizes = tuple(sizes)
    if n not in sizes:
        raise ValueError(f"n must be one of {sizes}, got {n!r}")
    return [dropdown("device", names, default=acc.name),
            dropdown("op", [(c.label, key) for key, c in OPS.items()], default=op),
            slider("n", sizes, default=n)]


def roofline_explorer(device: str = "H200 SXM", dtype: str = "bf16", op: str = "matmul", *,
                      accelerators: Sequence[Accelerator] | None = None, devices: Sequence[str] | None = None,
                      sizes: Sequence[int] = SIZES, n: int = 4096, mode: str | None = None):
    """The roofline explorer (see :mod:`gpuperf.explorers.core`): live widget or static figure.

    ``device`` is a name or alias from :mod:`gpuperf.hardware` (the first state's device), ``dtype`` the
    number format of every state, ``op`` a key of :data:`OPS` (the first state's operation), ``devices``
    the devices offered (default :data:`DEFAULT_DEVICES`, or every one of ``accelerators`` when given).
    """
    accs = tuple(hardware.ACCELERATORS if accelerators is None else accelerators)
    controls = roofline_controls(device, op, n=n, accelerators=accelerators, devices=devices, sizes=sizes)
    if not any(dtype in _device_dtypes(_find(d, accs)) for d in controls[0].values):
        raise ValueError(f"dtype must be one of {sorted({t for a in accs for t in _device_dtypes(a)})}, got {dtype!r}")

    def view(device: str, op: str, n: int) -> View:
        return roofline_view(device, op, n, dtype=dtype, accelerators=accs)

    return explorer(view, controls, title=f"Roofline explorer ({dtype})", mode=mode,
                    alt="the device's roofline with the operation's point")
