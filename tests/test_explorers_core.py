"""The explorer API (gpuperf.explorers.core): controls, states, both worlds, limits."""

import json
import re
import subprocess
import sys

import pytest
from matplotlib.figure import Figure

from gpuperf.explorers import core
from gpuperf.explorers.core import View, dropdown, explorer, slider, toggle


def _view(n: int, kind: str, log: bool) -> View:
    fig = Figure(figsize=(3, 2))
    ax = fig.add_subplot()
    ax.plot(range(n), [i * (2 if kind == "double" else 1) for i in range(n)])
    if log:
        ax.set_yscale("symlog")
    return View(fig, f"<p>n = {n}, kind = {kind}, log = {log}</p>")


CONTROLS = [slider("n", [2, 4, 8]), dropdown("kind", [("one", "single"), ("two", "double")]), toggle("log")]


def _data(html: str) -> dict:
    m = re.search(r'<script type="application/json" class="gx-data">(.*?)</script>', html, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


def test_controls_validate():
    with pytest.raises(ValueError, match="values"):
        slider("n", [1])
    with pytest.raises(ValueError, match="default"):
        slider("n", [1, 2], default=3)
    with pytest.raises(ValueError, match="name"):
        dropdown("not a name", [1, 2])
    with pytest.raises(ValueError, match="default"):
        toggle("t", default=1)
    with pytest.raises(ValueError, match="distinct"):
        core.state_count([slider("n", [1, 2]), slider("n", [3, 4])])
    with pytest.raises(ValueError, match="controls"):
        core.state_count([])
    assert slider("n", [1, 2, 4], default=4).default == 2
    assert slider("x", [0.5, 1.0], fmt=".2f").labels == ("0.50", "1.00")
    assert dropdown("d", [("a", 1), ("b", 2)], default=2).default_value == 2
    assert toggle("t", default=True).default_value is True


def test_states_order_and_count():
    assert core.state_count(CONTROLS) == 12
    all_states = list(core.states(CONTROLS))
    assert len(all_states) == 12
    assert all_states[0] == {"n": 2, "kind": "single", "log": False}
    assert all_states[1] == {"n": 2, "kind": "single", "log": True}  # the last control varies fastest
    assert all_states[-1] == {"n": 8, "kind": "double", "log": True}


def test_view_validates():
    with pytest.raises(ValueError, match="figure or html"):
        View()
    with pytest.raises(ValueError, match="figure"):
        View(figure="not a figure", html="x")
    with pytest.raises(ValueError, match="must return a View"):
        explorer(lambda n: "text", [slider("n", [1, 2])], mode="live")


def test_mode_from_environment(monkeypatch):
    monkeypatch.delenv(core.MODE_ENV, raising=False)
    assert core.resolve_mode() == "live"
    monkeypatch.setenv(core.MODE_ENV, "static")
    assert core.resolve_mode() == "static"
    assert core.resolve_mode("live") == "live"
    monkeypatch.setenv(core.MODE_ENV, "bogus")
    with pytest.raises(ValueError, match="mode"):
        core.resolve_mode()


def test_static_table_matches_the_view():
    calls = []

    def view(**params):
        calls.append(params)
        return _view(**params)

    out = explorer(view, CONTROLS, mode="static", title="demo", workers=1)
    assert isinstance(out, core.StaticExplorer)
    assert len(calls) == 12 and out.n_states == 12
    data = _data(out._repr_html_())
    assert data["sizes"] == [3, 2, 2]
    assert data["labels"][1] == ["one", "two"]
    for k, params in enumerate(core.states(CONTROLS)):
        fig_i, html_i = data["states"][k]
        assert data["htmls"][html_i] == _view(**params).html
        assert data["figures"][fig_i].startswith("data:image/png;base64,")
    # distinct states have distinct numbers; the default state is shown before any script runs
    assert len(data["htmls"]) == 12
    assert "<p>n = 2, kind = single, log = False</p>" in out.html.split('class="gx-html">')[1][:60]
    assert not re.search(r'(src|href)="(https?:)?//', out.html)  # nothing outside the page


def test_static_dedups_identical_figures_and_escapes_script_end():
    def view(a: int, b: bool) -> View:
        fig = Figure(figsize=(2, 2))
        fig.add_subplot().plot([0, a])
        return View(fig, f"a={a} </script><b>{b}</b>")

    out = explorer(view, [slider("a", [1, 2]), toggle("b")], mode="static")
    data = _data(out.html)
    assert out.n_figures == 2 and len(data["figures"]) == 2  # the toggle does not change the figure
    # the fragment's </script> is escaped inside the JSON block (else the block would end there)
    assert data["htmls"][0] == "a=1 </script><b>False</b>"


def test_static_limits():
    controls = [slider("a", list(range(30))), slider("b", list(range(30)))]
    with pytest.raises(ValueError, match="max_states"):
        explorer(lambda a, b: View(html=str(a)), controls, mode="static")
    with pytest.raises(ValueError, match="max_bytes"):
        explorer(lambda a: View(html="x" * 1000 * a), [slider("a", [1, 2, 3])], mode="static", max_bytes=2000)


def test_html_only_view_has_no_image():
    out = explorer(lambda a: View(html=f"<i>{a}</i>"), [slider("a", [1, 2])], mode="static")
    assert "<img" not in out.html and _data(out.html)["states"] == [[-1, 0], [-1, 1]]


def test_live_widget_updates():
    import ipywidgets as widgets

    box = explorer(_view, CONTROLS, mode="live")
    assert isinstance(box, widgets.VBox)
    assert box.params() == {"n": 2, "kind": "single", "log": False}
    first_png, first_html = box.image.value, box.text.value
    assert first_png[:4] == b"\x89PNG" and "n = 2" in first_html
    box.controls["n"].value = 2  # an index into the slider's values
    assert box.params()["n"] == 8 and "n = 8" in box.text.value and box.image.value != first_png
    box.controls["log"].value = True
    assert box.view_result.html == _view(8, "single", True).html


def test_import_is_torch_free():
    code = ("import sys, gpuperf.explorers.core, gpuperf.explorers.roofline, gpuperf.explorers.bits; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.redundant_on_gpu  # pure CPU (matplotlib, ipywidgets): make test covers it; make test-gpu skips it
def test_forked_workers_give_the_same_page():
    def strip(h):
        return re.sub(r"gx-[0-9a-f]{10}", "", h)

    serial = explorer(_view, CONTROLS, mode="static", workers=1)
    forked = explorer(_view, CONTROLS, mode="static", workers=2)
    assert strip(serial.html) == strip(forked.html)
    with pytest.raises(ValueError, match="workers"):
        explorer(_view, CONTROLS, mode="static", workers=0)


def test_workers_from_environment(monkeypatch):
    monkeypatch.setenv(core.WORKERS_ENV, "3")
    assert core.default_workers() == 3
    monkeypatch.setenv(core.WORKERS_ENV, "zero")
    with pytest.raises(ValueError, match=core.WORKERS_ENV):
        core.default_workers()
