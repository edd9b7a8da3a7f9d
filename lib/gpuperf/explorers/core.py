"""The one explorer API: a pure view function and a small grid of controls, shown live in Jupyter and Colab
and as a self-contained, precomputed interactive figure on the static site.

A chapter writes ``view(**params) -> View`` (a figure and/or an HTML fragment of numbers, computed from a
model in ``gpuperf``) and lists its controls, each over a few discrete values::

    from gpuperf.explorers.core import View, dropdown, explorer, slider, toggle

    def tile_view(tile: int, dtype: str, fused: bool) -> View:
        result = tiles.model(tile=tile, dtype=dtype, fused=fused)       # pure, tested
        return View(figure=plot_tiles(result), html=describe(result))   # a bare matplotlib Figure

    explorer(tile_view, [slider("tile", [16, 32, 64, 128]),
                         dropdown("dtype", ["fp16", "fp32"]),
                         toggle("fused", default=True)])

Which world the call is in:

* **live** (the default: Jupyter, Colab, nbval): an ``ipywidgets`` box (7.7 and 8) whose controls call
  ``view`` on every change and show its figure (a PNG in an ``Image`` widget) and its HTML.
* **static** (the book build): ``view`` runs for *every* combination of control values once, at build
  time, and the cell's output is one HTML block (controls, the figures as PNG data URIs, the HTML fragments
  and a few lines of JavaScript) that switches between the precomputed states in the page, with no kernel,
  no network and no file outside the page. The book build is detected by the environment variable
  ``GPUPERF_EXPLORERS=static``, which the site's Sphinx extension (``tools/sphinxext/gpuperf_site.py``)
  sets before any notebook executes, so every ``jupyter-book build`` of this repository gets it (``make
  book`` sets it too). ``mode="live"`` or ``mode="static"`` overrides the variable.

Limits (checked when the static figure is built; a ``ValueError`` names them): at most
:data:`MAX_STATES` states (the product of the controls' value counts) and :data:`MAX_BYTES` bytes of HTML
per explorer. Identical figures and fragments are stored once.
"""

from __future__ import annotations

import base64
import hashlib
import html as _html
import io
import itertools
import json
import math
import numbers
import os
import sys
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

#: The environment variable that selects the world: ``static`` builds the precomputed figure.
MODE_ENV = "GPUPERF_EXPLORERS"
MODES = ("live", "static")
#: At most this many states (the product of the controls' value counts) per explorer.
MAX_STATES = 400
#: At most this many bytes of HTML (figures included) per explorer on the static site.
MAX_BYTES = 3_000_000
#: Resolution of the figures, in dots per inch (live and static).
FIGURE_DPI = 90


# --------------------------------------------------------------------------------------------------
# Controls
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Control:
    """One control: ``kind`` ("slider", "dropdown" or "toggle"), the keyword ``name`` it passes to the
    view, the ``values`` it offers, their ``labels`` as shown, the index of the ``default`` value, and
    the ``label`` shown next to it. Build with :func:`slider`, :func:`dropdown` or :func:`toggle`."""

    kind: str
    name: str
    values: tuple
    labels: tuple[str, ...]
    default: int
    label: str

    def __post_init__(self) -> None:
        if self.kind not in ("slider", "dropdown", "toggle"):
            raise ValueError(f"kind must be slider, dropdown or toggle, got {self.kind!r}")
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"name must be a Python identifier (the view's keyword), got {self.name!r}")
        if len(self.values) < 2:
            raise ValueError(f"values of control {self.name!r} must hold at least 2 values, got {self.values!r}")
        if len(self.labels) != len(self.values):
            raise ValueError(f"labels of control {self.name!r} must match its {len(self.values)} values")
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"labels of control {self.name!r} must be distinct, got {self.labels!r}")
        if not (isinstance(self.default, int) and 0 <= self.default < len(self.values)):
            raise ValueError(f"default of control {self.name!r} must index its values, got {self.default!r}")

    @property
    def default_value(self) -> Any:
        return self.values[self.default]


def _default_index(name: str, values: Sequence, default) -> int:
    if default is None:
        return 0
    for i, v in enumerate(values):
        if v == default and isinstance(v, bool) == isinstance(default, bool):
            return i
    raise ValueError(f"default of control {name!r} must be one of {list(values)!r}, got {default!r}")


def _labels(values: Sequence, fmt) -> tuple[str, ...]:
    if fmt is None:
        return tuple(str(v) for v in values)
    if callable(fmt):
        return tuple(str(fmt(v)) for v in values)
    return tuple(format(v, fmt) for v in values)


def slider(name: str, values: Sequence, *, default=None, label: str | None = None, fmt=None) -> Control:
    """A slider over ``values`` (listed in order, e.g. ``[16, 32, 64, 128]``); ``default`` is one of
    them (the first if omitted); ``fmt`` (a format spec such as ``".3g"`` or a function) writes a value
    as shown."""
    values = tuple(values)
    return Control("slider", name, values, _labels(values, fmt), _default_index(name, values, default),
                   label if label is not None else name)


def dropdown(name: str, options: Sequence, *, default=None, label: str | None = None) -> Control:
    """A dropdown over ``options``: values, or ``(label, value)`` pairs; ``default`` is a value."""
    options = tuple(options)
    if options and all(isinstance(o, tuple) and len(o) == 2 for o in options):
        labels, values = tuple(str(o[0]) for o in options), tuple(o[1] for o in options)
    else:
        values, labels = options, _labels(options, None)
    return Control("dropdown", name, values, labels, _default_index(name, values, default),
                   label if label is not None else name)


def toggle(name: str, *, default: bool = False, label: str | None = None) -> Control:
    """A checkbox passing ``False`` or ``True``."""
    if not isinstance(default, bool):
        raise ValueError(f"default of toggle {name!r} must be a bool, got {default!r}")
    return Control("toggle", name, (False, True), ("off", "on"), int(default), label if label is not None else name)


# --------------------------------------------------------------------------------------------------
# What a view returns
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class View:
    """One state as the reader sees it: a matplotlib ``figure`` (build it with
    ``matplotlib.figure.Figure``, not ``pyplot``, so the notebook does not also show it) and/or an
    ``html`` fragment (the numbers; plain text is escaped by the caller's choice, this is inserted as is)."""

    figure: Any = None
    html: str = ""

    def __post_init__(self) -> None:
        if self.figure is None and not self.html:
            raise ValueError("a View needs a figure or html, got neither")
        if not isinstance(self.html, str):
            raise ValueError(f"html must be a str, got {type(self.html).__name__}")
        if self.figure is not None and not hasattr(self.figure, "savefig"):
            raise ValueError(f"figure must be a matplotlib Figure or None, got {type(self.figure).__name__}")


def figure_png(fig, dpi: int = FIGURE_DPI) -> bytes:
    """``fig`` as PNG bytes (palette-quantised when Pillow can do it losslessly enough, which shrinks
    line plots about threefold); a pyplot figure is closed afterwards."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None and getattr(fig, "number", None) is not None and plt.fignum_exists(fig.number):
        plt.close(fig)  # a pyplot figure would pile up (and show under the cell); a bare Figure is dropped
    data = buffer.getvalue()
    try:
        from PIL import Image

        image = Image.open(io.BytesIO(data)).convert("RGB")
        quantised = image.quantize(colors=128, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        out = io.BytesIO()
        quantised.save(out, format="PNG", optimize=True)
        if out.tell() < len(data):
            data = out.getvalue()
    except Exception:  # pragma: no cover - Pillow comes with matplotlib; keep the plain PNG otherwise
        pass
    return data


# --------------------------------------------------------------------------------------------------
# States
# --------------------------------------------------------------------------------------------------

def _check_controls(controls: Sequence[Control]) -> tuple[Control, ...]:
    controls = tuple(controls)
    if not controls or not all(isinstance(c, Control) for c in controls):
        raise ValueError(f"controls must be a non-empty sequence of Control (slider/dropdown/toggle), got {controls!r}")
    names = [c.name for c in controls]
    if len(set(names)) != len(names):
        raise ValueError(f"controls must have distinct names, got {names}")
    return controls


def state_count(controls: Sequence[Control]) -> int:
    """The number of states: the product of the controls' value counts."""
    return math.prod(len(c.values) for c in _check_controls(controls))


def states(controls: Sequence[Control]) -> Iterator[dict[str, Any]]:
    """Every combination of control values as keyword dicts, the last control varying fastest (the order
    of the static figure's table)."""
    controls = _check_controls(controls)
    for combo in itertools.product(*(c.values for c in controls)):
        yield {c.name: v for c, v in zip(controls, combo)}


def default_params(controls: Sequence[Control]) -> dict[str, Any]:
    return {c.name: c.default_value for c in _check_controls(controls)}


def resolve_mode(mode: str | None = None) -> str:
    """``mode`` if given, else ``static`` when ``GPUPERF_EXPLORERS=static``, else ``live``."""
    if mode is None:
        mode = os.environ.get(MODE_ENV, "").strip().lower() or "live"
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES} (or set {MODE_ENV}), got {mode!r}")
    return mode


def _call(view: Callable[..., View], params: Mapping[str, Any]) -> View:
    out = view(**params)
    if not isinstance(out, View):
        raise ValueError(f"view must return a View, got {type(out).__name__} for {dict(params)!r}")
    return out


# --------------------------------------------------------------------------------------------------
# The static figure
# --------------------------------------------------------------------------------------------------

_CSS = """
.gpuperf-explorer{border:1px solid rgba(128,128,128,.35);border-radius:6px;padding:.6em .8em;margin:.5em 0}
.gpuperf-explorer .gx-controls{display:flex;flex-wrap:wrap;gap:.4em 1.4em;align-items:center;margin-bottom:.4em}
.gpuperf-explorer .gx-controls label{display:inline-flex;gap:.4em;align-items:center;font-size:.9em}
.gpuperf-explorer .gx-controls output{min-width:3.5em;font-family:var(--pst-font-family-monospace,monospace)}
.gpuperf-explorer img.gx-figure{max-width:100%;height:auto;display:block}
.gpuperf-explorer .gx-html{font-size:.9em;margin-top:.3em}
"""

# The front end: finds its own block, reads the precomputed table, wires the controls. No globals.
_JS = """
(function (root) {
  var data = JSON.parse(root.querySelector('script.gx-data').textContent);
  var inputs = root.querySelectorAll('[data-gx-control]');
  var img = root.querySelector('img.gx-figure'), out = root.querySelector('.gx-html');
  function index() {
    var k = 0;
    inputs.forEach(function (el, i) {
      var v = el.type === 'checkbox' ? (el.checked ? 1 : 0) : parseInt(el.value, 10);
      k = k * data.sizes[i] + v;
      var shown = root.querySelector('output[data-gx-for="' + i + '"]');
      if (shown) { shown.textContent = data.labels[i][v]; }
    });
    return k;
  }
  function show() {
    var s = data.states[index()];
    if (img) {
      if (s[0] < 0) { img.style.display = 'none'; }
      else { img.src = data.figures[s[0]]; img.style.display = ''; }
    }
    if (out) { out.innerHTML = data.htmls[s[1]]; }
    root.setAttribute('data-gx-state', String(index()));
  }
  inputs.forEach(function (el) { el.addEventListener('input', show); el.addEventListener('change', show); });
  show();
})(document.currentScript.parentElement);
"""


#: Overrides the number of processes that render a static explorer's states (1: no subprocesses).
WORKERS_ENV = "GPUPERF_EXPLORER_WORKERS"
_JOB: tuple | None = None  # (view, controls, dpi) for the forked workers


def default_workers() -> int:
    """Processes for rendering states: ``GPUPERF_EXPLORER_WORKERS`` if set, else up to 4 of the CPUs
    this process may use (1 where ``fork`` is unavailable)."""
    value = os.environ.get(WORKERS_ENV, "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"{WORKERS_ENV} must be a positive integer, got {value!r}")
        return int(value)
    try:
        import multiprocessing

        multiprocessing.get_context("fork")
    except (ImportError, ValueError):  # pragma: no cover - no fork (Windows)
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(4, cpus))


def _render_one(k: int) -> tuple[bytes | None, str]:
    view, all_params, dpi = _JOB
    v = _call(view, all_params[k])
    return (figure_png(v.figure, dpi) if v.figure is not None else None), v.html


def _render_all(view, controls, dpi: int, workers: int | None) -> list[tuple[bytes | None, str]]:
    """``(png or None, html)`` for every state, in :func:`states` order; forked workers share the view
    (closures included) without pickling it."""
    global _JOB
    n = state_count(controls)
    workers = default_workers() if workers is None else workers
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    _JOB = (view, list(states(controls)), dpi)
    try:
        if workers == 1 or n < 8:
            return [_render_one(k) for k in range(n)]
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(min(workers, n)) as pool:
            return pool.map(_render_one, range(n), chunksize=max(1, n // (4 * workers)))
    finally:
        _JOB = None


def _json_for_script(obj) -> str:
    return json.dumps(obj, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\!--")


@dataclass
class StaticExplorer:
    """The static figure: ``html`` is the whole self-contained block; displayed through ``_repr_html_``."""

    html: str
    n_states: int
    n_figures: int
    n_fragments: int
    title: str = ""
    controls: tuple = field(default_factory=tuple)

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return (f"<static explorer {self.title!r}: {self.n_states} states, {self.n_figures} figures, "
                f"{len(self.html) / 1e3:.0f} kB>")


def static_explorer(view: Callable[..., View], controls: Sequence[Control], *, title: str = "",
                    max_states: int = MAX_STATES, max_bytes: int = MAX_BYTES, dpi: int = FIGURE_DPI,
                    alt: str = "", workers: int | None = None) -> StaticExplorer:
    """Run ``view`` on every state of ``controls`` and return the self-contained HTML block.

    ``workers`` processes render the states (default: :func:`default_workers`)."""
    controls = _check_controls(controls)
    n = state_count(controls)
    if n > max_states:
        raise ValueError(f"the controls give {n} states, more than max_states={max_states}: use fewer values")
    figures: list[str] = []
    figure_index: dict[str, int] = {}
    htmls: list[str] = []
    html_index: dict[str, int] = {}
    table = []
    for png, fragment in _render_all(view, controls, dpi, workers):  # noqa: B007
        fi = -1
        if png is not None:
            uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
            key = hashlib.sha1(uri.encode()).hexdigest()
            fi = figure_index.setdefault(key, len(figures))
            if fi == len(figures):
                figures.append(uri)
        hi = html_index.setdefault(fragment, len(htmls))
        if hi == len(htmls):
            htmls.append(fragment)
        table.append([fi, hi])
    data = {"sizes": [len(c.values) for c in controls], "labels": [list(c.labels) for c in controls],
            "names": [c.name for c in controls], "states": table, "figures": figures, "htmls": htmls}
    uid = "gx-" + uuid.uuid4().hex[:10]
    parts = [f'<div class="gpuperf-explorer" id="{uid}" data-gx-states="{n}">',
             f"<style>{_CSS}</style>"]
    if title:
        parts.append(f'<div class="gx-title"><b>{_html.escape(title)}</b></div>')
    parts.append('<div class="gx-controls">')
    for i, c in enumerate(controls):
        text = _html.escape(c.label)
        if c.kind == "slider":
            parts.append(f'<label>{text} <input type="range" min="0" max="{len(c.values) - 1}" step="1" '
                         f'value="{c.default}" data-gx-control="{_html.escape(c.name)}" '
                         f'aria-label="{text}"><output data-gx-for="{i}">{_html.escape(c.labels[c.default])}'
                         f"</output></label>")
        elif c.kind == "dropdown":
            options = "".join(f'<option value="{j}"{" selected" if j == c.default else ""}>'
                              f"{_html.escape(lab)}</option>" for j, lab in enumerate(c.labels))
            parts.append(f'<label>{text} <select data-gx-control="{_html.escape(c.name)}" '
                         f'aria-label="{text}">{options}</select></label>')
        else:
            checked = " checked" if c.default else ""
            parts.append(f'<label><input type="checkbox"{checked} data-gx-control="{_html.escape(c.name)}" '
                         f'aria-label="{text}"> {text}</label>')
    parts.append("</div>")
    first = table[sum(c.default * math.prod(len(d.values) for d in controls[i + 1:])
                      for i, c in enumerate(controls))]
    if figures:
        src = figures[first[0]] if first[0] >= 0 else ""
        parts.append(f'<img class="gx-figure gpuperf-figure" alt="{_html.escape(alt or title or "explorer figure")}" '
                     f'src="{src}">')
    parts.append(f'<div class="gx-html">{htmls[first[1]]}</div>')
    parts.append(f'<script type="application/json" class="gx-data">{_json_for_script(data)}</script>')
    parts.append(f"<script>{_JS}</script>")
    parts.append("</div>")
    out = "\n".join(parts)
    if len(out) > max_bytes:
        raise ValueError(f"the static explorer weighs {len(out)} bytes, more than max_bytes={max_bytes}: "
                         f"use fewer states, a smaller figure or a lower dpi")
    return StaticExplorer(out, n, len(figures), len(htmls), title, controls)


# --------------------------------------------------------------------------------------------------
# The live widget
# --------------------------------------------------------------------------------------------------

def live_explorer(view: Callable[..., View], controls: Sequence[Control], *, title: str = "",
                  dpi: int = FIGURE_DPI):
    """An ``ipywidgets.VBox`` (7.7 and 8): the controls, the figure (``Image``) and the HTML; every change
    calls ``view``. The box has ``params()`` (the current keywords), ``view_result`` (the last View) and
    ``update()``."""
    import ipywidgets as widgets

    controls = _check_controls(controls)
    style = {"description_width": "initial"}
    made = []
    for c in controls:
        options = list(zip(c.labels, range(len(c.values))))
        if c.kind == "slider":
            w = widgets.SelectionSlider(options=options, value=c.default, description=c.label,
                                        continuous_update=False, style=style)
        elif c.kind == "dropdown":
            w = widgets.Dropdown(options=options, value=c.default, description=c.label, style=style)
        else:
            w = widgets.Checkbox(value=bool(c.default), description=c.label, indent=False)
        made.append(w)
    image = widgets.Image(format="png")
    text = widgets.HTML()
    children = ([widgets.HTML(f"<b>{_html.escape(title)}</b>")] if title else [])
    children += [widgets.HBox(made, layout=widgets.Layout(flex_flow="row wrap")), image, text]
    box = widgets.VBox(children)
    box.add_class("gpuperf-explorer-live")

    def params() -> dict[str, Any]:
        return {c.name: c.values[int(w.value)] for c, w in zip(controls, made)}

    def update(_change=None) -> View:
        v = _call(view, params())
        if v.figure is not None:
            image.value = figure_png(v.figure, dpi)
            image.layout.display = None
        else:
            image.layout.display = "none"
        text.value = v.html
        box.view_result = v
        return v

    for w in made:
        w.observe(update, names="value")
    box.controls = dict(zip((c.name for c in controls), made))
    box.image, box.text, box.params, box.update = image, text, params, update
    update()
    return box


def explorer(view: Callable[..., View], controls: Sequence[Control], *, title: str = "",
             mode: str | None = None, max_states: int = MAX_STATES, max_bytes: int = MAX_BYTES,
             dpi: int = FIGURE_DPI, alt: str = "", workers: int | None = None):
    """The explorer of ``view`` over ``controls``: the live widget, or in the book build (``mode`` or
    ``GPUPERF_EXPLORERS=static``) the precomputed static figure. See the module docstring."""
    controls = _check_controls(controls)
    if resolve_mode(mode) == "static":
        return static_explorer(view, controls, title=title, max_states=max_states, max_bytes=max_bytes,
                               dpi=dpi, alt=alt, workers=workers)
    return live_explorer(view, controls, title=title, dpi=dpi)
