"""Tests for gpuperf.explorers.roofline: builds without a kernel, and every control updates the state."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import pytest  # noqa: E402

from gpuperf import hardware, roofline  # noqa: E402
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
    return explorer.roofline_explorer("Big GPU", "bf16", "matmul", accelerators=DEVICES)


def test_builds_as_a_widget_with_a_first_state(ex):
    assert isinstance(ex, widgets.VBox) and isinstance(ex, widgets.Widget)
    assert ex.analysis == roofline.analyze(roofline.matmul(4096, 4096, 4096), BIG)
    assert ex.analysis.bound == "compute"
    assert "compute-bound" in ex.text.value and "matmul 4096x4096x4096" in ex.text.value
    assert bytes(ex.image.value).startswith(PNG_MAGIC)
    assert [s.description for s in ex.shape_box.children] == ["log2 m", "log2 k", "log2 n"]
    assert ex.fused_dropdown.disabled


def test_a_slider_moves_the_point(ex):
    first_png = bytes(ex.image.value)
    ex.sliders["matmul"]["m"].value = 0  # m = 1: a vector-matrix product, memory-bound
    assert ex.sizes() == {"m": 1, "k": 4096, "n": 4096}
    assert ex.analysis.op == roofline.matmul(1, 4096, 4096)
    assert ex.analysis.bound == "memory" and "memory-bound" in ex.text.value
    assert bytes(ex.image.value) != first_png
    # calling update directly gives the same state
    assert ex.update() == ex.analysis


def test_dtype_and_unit_change_the_roof(ex):
    ex.unit_dropdown.value = "vector"
    assert ex.analysis.peak_flop_per_s == 200e12 and ex.analysis.ridge_flop_per_byte == 50.0
    ex.dtype_dropdown.value = "fp8"  # no vector fp8 on this device
    assert ex.analysis is None and "no vector-unit peak for fp8" in ex.text.value
    ex.unit_dropdown.value = "matrix"
    assert ex.analysis.peak_flop_per_s == 1600e12 and ex.analysis.op.dtype == "fp8"
    assert ex.analysis.op.bytes_moved == roofline.matmul(4096, 4096, 4096, "fp8").bytes_moved


def test_changing_op_swaps_the_sliders(ex):
    ex.op_dropdown.value = "softmax"
    assert [s.description for s in ex.shape_box.children] == ["log2 rows", "log2 cols"]
    assert not ex.fused_dropdown.disabled
    assert ex.analysis.op == roofline.softmax(2**15, 2**12)
    ex.fused_dropdown.value = False
    assert ex.analysis.op == roofline.softmax(2**15, 2**12, fused=False)
    assert ex.analysis.bound == "memory"
    ex.op_dropdown.value = "elementwise_chain"
    assert [s.description for s in ex.shape_box.children] == ["log2 n_elements", "k_ops"]
    ex.sliders["elementwise_chain"]["k_ops"].value = 7
    assert ex.analysis.op == roofline.elementwise_chain(2**24, 7, fused=False)


@pytest.mark.parametrize("op", list(explorer.OPS))
def test_every_op_has_a_first_state(op):
    ex = explorer.roofline_explorer("big", "bf16", op, accelerators=DEVICES)
    assert ex.analysis is not None and ex.analysis.op.dtype == "bf16"
    spec = explorer.OPS[op]
    expected = spec.build(**{s.name: s.size(s.default) for s in spec.sizes}, dtype="bf16")
    assert ex.analysis.op == expected
    assert ex.analysis.time_s == roofline.time_lower_bound_s(expected.flop, expected.bytes_moved, 800e12, 4e12)


def test_changing_device_keeps_or_replaces_the_dtype(ex):
    ex.device_dropdown.value = "Small GPU"
    assert list(ex.dtype_dropdown.options) == ["fp64", "fp32", "fp16"]
    assert ex.dtype_dropdown.value == "fp64"  # bf16 is gone: the first dtype it has
    assert ex.analysis is None  # no matrix fp64 on it
    ex.unit_dropdown.value = "vector"
    assert ex.analysis.accelerator_name == "Small GPU" and ex.analysis.peak_flop_per_s == 0.25e12
    ex.dtype_dropdown.value = "fp32"
    ex.device_dropdown.value = "Big GPU"
    assert ex.dtype_dropdown.value == "fp32" and ex.analysis.peak_flop_per_s == 100e12


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(device="Nope"), "device"),
        (dict(device="Small GPU", dtype="bf16"), "dtype"),
        (dict(op="conv"), "op"),
        (dict(accelerators=()), "accelerators"),
    ],
)
def test_rejects_bad_arguments(kwargs, name):
    args = dict(device="Big GPU", dtype="bf16", op="matmul", accelerators=DEVICES)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        explorer.roofline_explorer(**args)


def test_widget_state_is_serializable(ex):
    # what a static page embeds: the state of every widget, including the first figure
    from ipywidgets.embed import embed_data

    data = embed_data(views=[ex])
    models = data["manager_state"]["state"]
    assert data["view_specs"][0]["model_id"] == ex.model_id
    assert ex.image.model_id in models and ex.text.model_id in models
    assert "compute-bound" in models[ex.text.model_id]["state"]["value"]


@pytest.mark.skipif(not hasattr(hardware, "ACCELERATORS"), reason="no device table yet")
def test_default_explorer_on_the_real_table():
    ex = explorer.roofline_explorer()
    assert ex.analysis.accelerator_name == "H200 SXM" and ex.analysis.op.dtype == "bf16"
    assert len(ex.device_dropdown.options) == len(hardware.ACCELERATORS)


def test_a_state_without_a_peak_hides_the_stale_figure(ex):
    assert ex.image.layout.display in (None, "")
    ex.unit_dropdown.value = "vector"
    ex.dtype_dropdown.value = "fp8"  # no vector fp8 on Big GPU: no analysis, and the bf16 figure must go
    assert ex.analysis is None and ex.image.layout.display == "none"
    ex.unit_dropdown.value = "matrix"
    assert ex.analysis is not None and ex.image.layout.display in (None, "")
    assert bytes(ex.image.value).startswith(PNG_MAGIC)


def test_text_gives_the_time_bound_in_its_unit(ex):
    ex.op_dropdown.value = "gemv"  # 4096 x 4096 bf16 on Big GPU: (4096^2 + 2 * 4096) * 2 B / 4e12 B/s
    assert ex.analysis.time_s == pytest.approx((4096**2 + 2 * 4096) * 2 / 4e12)
    assert "time &ge; 8.39 µs" in ex.text.value
    assert roofline.format_duration(ex.analysis.time_s) == "8.39 µs"  # one formatter for summary and explorer
    assert ">= 8.39 µs" in ex.analysis.summary()
