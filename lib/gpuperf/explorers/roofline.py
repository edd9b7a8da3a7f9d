"""The roofline explorer: pick a device, a dtype, a unit and an operation, drag its sizes, and watch the
operation's point move along the device's roofline (Williams, Waterman and Patterson, "Roofline", CACM 2009).

The figure is rendered to a PNG held by an ``ipywidgets.Image``, not drawn into an ``Output``: the widget
therefore builds without a running kernel display, nothing leaks into the notebook's own output, and a
static page (whose widget state is saved at build time) shows the first state. Only widgets that exist in
both ipywidgets 7.7 (Colab) and 8 are used.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Callable, Sequence

import ipywidgets as widgets
from matplotlib.figure import Figure

from gpuperf import hardware
from gpuperf import roofline as rl
from gpuperf.hardware import DTYPES, UNITS, Accelerator
from gpuperf.plotting.roofline import plot_roofline, point_for
from gpuperf.plotting.style import use_book_style

#: The intensity axis every state is drawn on (FLOP/byte); widened only if an op falls outside it.
INTENSITY_RANGE = (1e-2, 1e5)


@dataclass(frozen=True)
class SizeSlider:
    """One shape argument of an op. With ``log2`` the slider holds the exponent and the size is ``2**value``."""

    name: str
    minimum: int
    maximum: int
    default: int
    log2: bool = True

    def size(self, value: int) -> int:
        return 2**value if self.log2 else value


@dataclass(frozen=True)
class OpSpec:
    """An op of the catalog as the explorer offers it."""

    label: str
    build: Callable[..., rl.OpCost]
    sizes: tuple[SizeSlider, ...]
    has_fused: bool = False


OPS: dict[str, OpSpec] = {
    "matmul": OpSpec("matmul (m x k) @ (k x n)", rl.matmul,
                     (SizeSlider("m", 0, 16, 12), SizeSlider("k", 0, 16, 12), SizeSlider("n", 0, 16, 12))),
    "gemv": OpSpec("gemv (m x k) @ k-vector", rl.gemv, (SizeSlider("m", 0, 16, 12), SizeSlider("k", 0, 16, 12))),
    "elementwise_chain": OpSpec("chain of k elementwise ops", rl.elementwise_chain,
                                (SizeSlider("n_elements", 10, 32, 24), SizeSlider("k_ops", 1, 16, 4, log2=False)),
                                has_fused=True),
    "relu": OpSpec("ReLU", rl.relu, (SizeSlider("n_elements", 10, 32, 24),)),
    "layernorm": OpSpec("LayerNorm over rows", rl.layernorm,
                        (SizeSlider("rows", 0, 17, 15), SizeSlider("cols", 4, 16, 12)), has_fused=True),
    "softmax": OpSpec("softmax over rows", rl.softmax,
                      (SizeSlider("rows", 0, 17, 15), SizeSlider("cols", 4, 16, 12)), has_fused=True),
    "attention_scores": OpSpec("attention scores Q K^T (one head)", rl.attention_scores,
                               (SizeSlider("seq_len", 6, 17, 12), SizeSlider("head_dim", 4, 8, 7))),
}


def describe(analysis: rl.RooflineAnalysis) -> str:
    """The explorer's text line (HTML): FLOP, bytes, intensity, bound and time lower bound."""
    return (
        f"<b>{analysis.op.name}</b>, {analysis.op.dtype} on {analysis.accelerator_name} ({analysis.unit} unit): "
        f"{analysis.op.flop:.3g} FLOP, {analysis.op.bytes_moved:.3g} bytes, "
        f"intensity {analysis.intensity_flop_per_byte:.3g} FLOP/byte "
        f"(ridge {analysis.ridge_flop_per_byte:.3g}) &rarr; <b>{analysis.bound}-bound</b>, "
        f"time &ge; {rl.format_duration(analysis.time_s)}, "
        f"at most {analysis.fraction_of_peak:.1%} of the {analysis.peak_flop_per_s / 1e12:.4g} TFLOP/s peak"
    )


def _device_dtypes(acc: Accelerator) -> list[str]:
    have = {*acc.matrix_flop_per_s, *acc.vector_flop_per_s}
    return [d for d in DTYPES if d in have]


class RooflineExplorer(widgets.VBox):
    """The explorer widget (a ``VBox``). ``update()`` recomputes ``analysis``, the text and the figure;
    every control calls it when its value changes."""

    def __init__(self, device: str = "H200 SXM", dtype: str = "bf16", op: str = "matmul", *,
                 accelerators: Sequence[Accelerator] | None = None):
        accs = tuple(hardware.ACCELERATORS if accelerators is None else accelerators)
        if not accs or not all(isinstance(a, Accelerator) for a in accs):
            raise ValueError(f"accelerators must be a non-empty sequence of Accelerator, got {accelerators!r}")
        self.accelerators = {a.name: a for a in accs}
        acc = self._find(device)
        if dtype not in _device_dtypes(acc):
            raise ValueError(f"dtype must be one of {_device_dtypes(acc)} on {acc.name}, got {dtype!r}")
        if op not in OPS:
            raise ValueError(f"op must be one of {tuple(OPS)}, got {op!r}")

        self.analysis: rl.RooflineAnalysis | None = None
        self._quiet = False  # set while several controls change at once, so update() runs once
        style = {"description_width": "initial"}
        self.device_dropdown = widgets.Dropdown(options=list(self.accelerators), value=acc.name,
                                                description="device", style=style)
        self.dtype_dropdown = widgets.Dropdown(options=_device_dtypes(acc), value=dtype, description="dtype",
                                               style=style)
        self.unit_dropdown = widgets.Dropdown(options=list(UNITS), value="matrix", description="unit", style=style)
        self.op_dropdown = widgets.Dropdown(options=[(spec.label, key) for key, spec in OPS.items()], value=op,
                                            description="op", style=style)
        self.fused_dropdown = widgets.Dropdown(options=[("fused", True), ("unfused (eager)", False)], value=True,
                                               description="kernels", style=style)
        self.sliders = {
            key: {s.name: widgets.IntSlider(value=s.default, min=s.minimum, max=s.maximum,
                                            description=f"log2 {s.name}" if s.log2 else s.name,
                                            continuous_update=False, style=style)
                  for s in spec.sizes}
            for key, spec in OPS.items()
        }
        self.shape_box = widgets.HBox()
        self.text = widgets.HTML()
        self.image = widgets.Image(format="png")
        super().__init__(children=[
            widgets.HBox([self.device_dropdown, self.dtype_dropdown, self.unit_dropdown]),
            widgets.HBox([self.op_dropdown, self.fused_dropdown]),
            self.shape_box,
            self.text,
            self.image,
        ])
        self.device_dropdown.observe(self._on_device, names="value")
        self.op_dropdown.observe(self._on_op, names="value")
        for control in (self.dtype_dropdown, self.unit_dropdown, self.fused_dropdown):
            control.observe(self._on_change, names="value")
        for group in self.sliders.values():
            for slider in group.values():
                slider.observe(self._on_change, names="value")
        self._show_op_controls()
        self.update()

    # -- lookups -------------------------------------------------------------------------------------

    def _find(self, device) -> Accelerator:
        if isinstance(device, Accelerator):
            device = device.name
        if not isinstance(device, str):
            raise ValueError(f"device must be a device name, got {device!r}")
        wanted = device.strip().lower()
        for acc in self.accelerators.values():
            if wanted == acc.name.lower() or wanted in (a.lower() for a in acc.aliases):
                return acc
        raise ValueError(f"device must be one of {list(self.accelerators)}, got {device!r}")

    @property
    def accelerator(self) -> Accelerator:
        return self.accelerators[self.device_dropdown.value]

    def sizes(self) -> dict[str, int]:
        """The current op's shape arguments, as sizes (not slider exponents)."""
        spec = OPS[self.op_dropdown.value]
        group = self.sliders[self.op_dropdown.value]
        return {s.name: s.size(group[s.name].value) for s in spec.sizes}

    def op_cost(self) -> rl.OpCost:
        """The current op, priced in the current dtype."""
        spec = OPS[self.op_dropdown.value]
        kwargs = dict(self.sizes(), dtype=self.dtype_dropdown.value)
        if spec.has_fused:
            kwargs["fused"] = self.fused_dropdown.value
        return spec.build(**kwargs)

    # -- events --------------------------------------------------------------------------------------

    def _on_change(self, _change=None) -> None:
        if not self._quiet:
            self.update()

    def _on_device(self, _change=None) -> None:
        dtypes = _device_dtypes(self.accelerator)
        current = self.dtype_dropdown.value
        self._quiet = True
        try:
            self.dtype_dropdown.options = dtypes
            if current in dtypes:
                self.dtype_dropdown.value = current
            else:
                self.dtype_dropdown.value = "bf16" if "bf16" in dtypes else dtypes[0]
        finally:
            self._quiet = False
        self.update()

    def _on_op(self, _change=None) -> None:
        self._show_op_controls()
        self.update()

    def _show_op_controls(self) -> None:
        key = self.op_dropdown.value
        self.shape_box.children = tuple(self.sliders[key].values())
        self.fused_dropdown.disabled = not OPS[key].has_fused

    # -- the state -----------------------------------------------------------------------------------

    def update(self) -> rl.RooflineAnalysis | None:
        """Recompute the analysis, the text line and the figure from the controls; return the analysis
        (``None`` when the device has no peak for this dtype on this unit)."""
        acc = self.accelerator
        op = self.op_cost()
        try:
            analysis = rl.analyze(op, acc, unit=self.unit_dropdown.value)
        except ValueError:
            self.analysis = None
            self.text.value = (
                f"{acc.name} has no {self.unit_dropdown.value}-unit peak for {op.dtype}; "
                f"try the other unit or another dtype."
            )
            self.image.layout.display = "none"  # the last figure belongs to another state: hide it
            return None
        self.analysis = analysis
        self.text.value = describe(analysis)
        self.image.value = self._render(analysis)
        self.image.layout.display = None
        return analysis

    def _render(self, analysis: rl.RooflineAnalysis) -> bytes:
        use_book_style()
        # A bare Figure (not pyplot) so that the notebook's inline backend does not also show it.
        fig = Figure(figsize=(7.0, 4.0), layout="constrained")
        ax = fig.add_subplot()
        lo, hi = INTENSITY_RANGE
        intensity = analysis.intensity_flop_per_byte
        if intensity > 0:
            lo, hi = min(lo, intensity / 3), max(hi, intensity * 3)
        points = [point_for(analysis, f"{analysis.op.name}")] if intensity > 0 else []
        plot_roofline(ax, self.accelerator, analysis.op.dtype, analysis.unit, points=points,
                      intensity_range=(lo, hi))
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        return buffer.getvalue()


def roofline_explorer(device: str = "H200 SXM", dtype: str = "bf16", op: str = "matmul", *,
                      accelerators: Sequence[Accelerator] | None = None) -> RooflineExplorer:
    """A widget to move an operation along a device's roofline (see :class:`RooflineExplorer`).

    ``device`` is a name or alias from :mod:`gpuperf.hardware`; ``op`` a key of :data:`OPS`;
    ``accelerators`` (default: every device in the table) are the devices offered.
    """
    return RooflineExplorer(device, dtype, op, accelerators=accelerators)
