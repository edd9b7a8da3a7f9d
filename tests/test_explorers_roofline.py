"""Tests for gpuperf.explorers.roofline: the view on every state, the live widget, the static figure."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402

import pytest  # noqa: E402

from gpuperf import hardware, roofline  # noqa: E402
from gpuperf.explorers import core  # noqa: E402
from gpuperf.explorers import roofline as explorer  # noqa: E402
from gpuperf.hardware import Accelerator  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def make_acc(name, matrix, vector, hbm, aliases=()):
    """A made-up device (round figures, not a real part)."""
    return Accelerator(
        name=name, vendor="test", kind="gpu", matrix_flop_per_s=matrix, vector_flop_per_s=vector,
        hbm_bytes_per_s=hbm, hbm_capacity_bytes=80e9, sm_count=100, registers_per_sm_bytes=None,
        shared_memory_per_sm_bytes=None, shared_memory_bytes_per_clock_per_sm=128, l2_bytes=None,
        boost_clock_hz=2e9, sources={}, aliases=aliases,
    )


BIG = make_acc("Big GPU", {"bf16": 800e12, "fp8": 1600e12}, {"fp32": 100e12, "bf16": 200e12}, 4e12, ("big",))
SMALL = make_acc("Small GPU", {"fp16": 60e12}, {"fp32": 8e12, "fp64": 0.25e12}, 0.3e12)
DEVICES = (BIG, SMALL)



@pytest.fixture
def ex():
    return explorer.roofline_explorer("Big GPU", "bf16", "matmul", accelerators=DEVICES, mode="live")


def test_builds_as_a_widget_with_a_first_state(ex):
    assert isinstance(ex, widgets.VBox) and isinstance(ex, widgets.Widget)
    assert ex.params() == {"device": "Big GPU", "op": "matmul", "n": 4096}
    analysis = explorer.roofline_analysis(BIG, "matmul", 4096)
    assert analysis == roofline.analyze(roofline.matmul(4096, 4096, 4096), BIG)
    assert analysis.bound == "compute"
    assert "compute-bound" in ex.text.value and "matmul 4096x4096x4096" in ex.text.value
    assert bytes(ex.image.value).startswith(PNG_MAGIC)
    assert list(ex.controls) == ["device", "op", "n"]


def test_the_size_slider_moves_the_point(ex):
    first_png = bytes(ex.image.value)
    ex.controls["n"].value = 0  # n = 64: a small matmul, memory-bound on Big GPU (ridge 200)
    assert ex.params()["n"] == 64
    assert "memory-bound" in ex.text.value and "matmul 64x64x64" in ex.text.value
    assert bytes(ex.image.value) != first_png


def test_the_op_dropdown_changes_the_op_and_unit(ex):
    ex.controls["op"].value = list(explorer.OPS).index("softmax_eager")
    assert ex.params()["op"] == "softmax_eager"
    expected = roofline.analyze(roofline.softmax(4096, explorer.ROW_LENGTH, fused=False), BIG, unit="vector")
    assert ex.view_result.html == explorer.describe(expected)
    assert "(vector unit)" in ex.text.value and "memory-bound" in ex.text.value


@pytest.mark.parametrize("op", list(explorer.OPS))
@pytest.mark.parametrize("n", explorer.SIZES)
def test_every_op_and_size_matches_the_model(op, n):
    choice = explorer.OPS[op]
    cost = choice.build(n, "bf16")
    analysis = explorer.roofline_analysis(BIG, op, n)
    assert analysis.op == cost and analysis.unit == choice.unit
    peak = BIG.matrix_flop_per_s["bf16"] if choice.unit == "matrix" else BIG.vector_flop_per_s["bf16"]
    assert analysis.time_s == roofline.time_lower_bound_s(cost.flop, cost.bytes_moved, peak, 4e12)


def test_op_sizes_mean_what_the_labels_say():
    assert explorer.OPS["matmul"].build(8, "bf16") == roofline.matmul(8, 8, 8)
    assert explorer.OPS["gemv"].build(8, "bf16") == roofline.gemv(8, 8)
    assert explorer.OPS["attention_scores"].build(8, "bf16") == roofline.attention_scores(8, explorer.HEAD_DIM)
    assert explorer.OPS["chain_eager"].build(8, "bf16") == roofline.elementwise_chain(64, 4, fused=False)
    assert explorer.OPS["layernorm_fused"].build(8, "bf16") == roofline.layernorm(8, explorer.ROW_LENGTH)
    for key, choice in explorer.OPS.items():
        assert ("matrix unit" in choice.label) == (choice.unit == "matrix"), key


def test_a_device_without_the_peak_gives_numbers_and_no_figure():
    view = explorer.roofline_view("Small GPU", "matmul", 64, dtype="bf16", accelerators=DEVICES)
    assert view.figure is None and "no matrix-unit peak for bf16" in view.html
    fp16 = explorer.roofline_view("Small GPU", "matmul", 64, dtype="fp16", accelerators=DEVICES)
    assert fp16.figure is not None and "Small GPU" in fp16.html


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(device="Nope"), "device"),
        (dict(dtype="fp4"), "dtype"),
        (dict(op="conv"), "op"),
        (dict(n=100), "n"),
        (dict(accelerators=()), "accelerators"),
    ],
)
def test_rejects_bad_arguments(kwargs, name):
    args = dict(device="Big GPU", dtype="bf16", op="matmul", accelerators=DEVICES, mode="live")
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        explorer.roofline_explorer(**args)


def test_old_op_names_still_work():
    box = explorer.roofline_explorer("big", "bf16", "softmax", accelerators=DEVICES, mode="live")
    assert box.params()["op"] == "softmax_fused"


def test_default_explorer_on_the_real_table():
    box = explorer.roofline_explorer(mode="live")
    assert box.params() == {"device": "H200 SXM", "op": "matmul", "n": 4096}
    assert "H200 SXM" in box.text.value and "bf16" in box.text.value
    other = explorer.roofline_explorer("T4", "fp16", mode="live")  # a device outside the defaults is added
    assert other.params()["device"] == "T4"
    assert [roofline.as_accelerator(d).name for d in explorer.DEFAULT_DEVICES] == list(explorer.DEFAULT_DEVICES)


@pytest.mark.redundant_on_gpu  # pure CPU (matplotlib, ipywidgets): make test covers it; make test-gpu skips it
def test_static_figure_precomputes_every_state():
    page = explorer.roofline_explorer("Big GPU", "bf16", accelerators=DEVICES, mode="static", sizes=(64, 4096),
                                      n=4096)
    assert isinstance(page, core.StaticExplorer)
    assert page.n_states == 2 * len(explorer.OPS) * 2
    data = json.loads(re.search(r'class="gx-data">(.*?)</script>', page.html, re.S).group(1))
    k = 0
    for device in ("Big GPU", "Small GPU"):
        for op in explorer.OPS:
            for n in (64, 4096):
                view = explorer.roofline_view(device, op, n, dtype="bf16", accelerators=DEVICES)
                assert data["htmls"][data["states"][k][1]] == view.html
                assert (data["states"][k][0] < 0) == (view.figure is None)
                k += 1


def test_text_gives_the_time_bound_in_its_unit():
    # 4096 x 4096 bf16 gemv on Big GPU: (4096^2 + 2 * 4096) * 2 B / 4e12 B/s
    analysis = explorer.roofline_analysis(BIG, "gemv", 4096)
    assert analysis.time_s == pytest.approx((4096**2 + 2 * 4096) * 2 / 4e12)
    assert "time &ge; 8.39 µs" in explorer.describe(analysis)
    assert roofline.format_duration(analysis.time_s) == "8.39 µs"  # one formatter for summary and explorer
    assert ">= 8.39 µs" in analysis.summary()
