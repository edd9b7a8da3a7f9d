"""Tests of gpuperf.results.elementwise: on a synthetic run whose answers follow from closed forms, and on
the recorded H200 run in book/data (the claims chapter 06 makes about it)."""

from __future__ import annotations

import pytest

from gpuperf.results import elementwise as er
from gpuperf import hardware
from gpuperf import records as recorded
from gpuperf import roofline as rl

# --- a synthetic run ----------------------------------------------------------------------------------------
# Bandwidths are chosen, times follow from them: time = bytes / bandwidth. Sizes are awkward on purpose.

N = 1_000_003  # elements per tensor, the large case
B = {"fp32": 4, "fp16": 2}
COPY_BW = 2.0e12
BW = {"torch_add": 2.1e12, "triton_add": 2.06e12, "torch_chain_unfused": 1.9e12, "triton_chain_fused": 1.8e12}
KS = (1, 3, 5)


def row(kernel, dtype, n, k, bandwidth):
    """A row counted here from first principles (not with the benchmark's make_row, whose package imports
    torch): FLOP = operations per element x n; bytes = passes over memory x n x b."""
    b = B[dtype]
    passes = {"copy": 2, "torch_add": 3, "triton_add": 3, "triton_chain_fused": 2, "torch_chain_unfused": 2 * k}
    ops = {"copy": 0, "torch_add": 1, "triton_add": 1, "triton_chain_fused": k, "torch_chain_unfused": k}
    moved = float(passes[kernel] * n * b)
    flop = float(ops[kernel] * n)
    time_s = moved / bandwidth
    return {"kernel": kernel, "dtype": dtype, "n_elements": n, "k_ops": k, "flop": flop, "bytes_moved": moved,
            "time_s": time_s, "bytes_per_s": moved / time_s, "flop_per_s": flop / time_s}


def case(dtype, n):
    rows = [row("copy", dtype, n, 1, COPY_BW), row("torch_add", dtype, n, 1, BW["torch_add"]),
            row("triton_add", dtype, n, 1, BW["triton_add"])]
    for k in KS:
        rows += [row("torch_chain_unfused", dtype, n, k, BW["torch_chain_unfused"]),
                 row("triton_chain_fused", dtype, n, k, BW["triton_chain_fused"])]
    return rows


@pytest.fixture
def run():
    # Two dtypes, and a small size (in cache, say) in each that must not be picked.
    return {"name": "synthetic", "provenance": {},
            "results": case("fp32", 4099) + case("fp32", N) + case("fp16", N) + case("fp16", 4099)}


@pytest.fixture
def rows(run):
    return er.rows_for_dtype(run, "fp16")


def test_rows_for_dtype_picks_the_dtype_at_its_largest_size(run):
    rows = er.rows_for_dtype(run, "fp16")
    assert len(rows) == 3 + 2 * len(KS)
    assert {(r["dtype"], r["n_elements"]) for r in rows} == {("fp16", N)}
    assert [r["kernel"] for r in rows[:3]] == ["copy", "torch_add", "triton_add"]  # the run's order
    # a plain list of rows works too, and a returned row is a copy
    assert er.rows_for_dtype(run["results"], "fp32") == [r for r in run["results"] if r["n_elements"] == N
                                                         and r["dtype"] == "fp32"]
    rows[0]["time_s"] = -1.0
    assert run["results"][len(case("fp32", 4099)) * 2]["time_s"] > 0


def test_find_row(rows):
    r = er.find_row(rows, "triton_chain_fused", 5)
    assert r["kernel"] == "triton_chain_fused" and r["k_ops"] == 5 and r["flop"] == 5 * N
    assert er.find_row(rows, "copy")["bytes_moved"] == 2 * N * 2


def test_chain_k_values(rows):
    assert er.chain_k_values(rows) == KS
    assert er.chain_k_values(rows, "torch_chain_unfused") == KS


def test_ratios_to_copy_are_the_chosen_bandwidth_ratios(rows):
    ratios = er.ratios_to_copy(rows)
    assert set(ratios) == {("torch_add", 1), ("triton_add", 1)} | {
        (kn, k) for kn in ("torch_chain_unfused", "triton_chain_fused") for k in KS}
    for (kernel, _k), ratio in ratios.items():
        assert ratio == pytest.approx(BW[kernel] / COPY_BW, rel=1e-12)


def test_roofline_points_against_the_op_catalog(rows):
    points = er.roofline_points(rows)
    labels = [p[0] for p in points]
    assert labels == ["add (torch and Triton)", "chain, unfused (k = 1 to 5)", "chain, fused, k = 3",
                      "chain, fused, k = 5"]
    # Intensities from an independent count: gpuperf.roofline's op catalog.
    assert points[0][1] == pytest.approx(1 / (3 * 2))
    assert points[1][1] == pytest.approx(rl.elementwise_chain(N, 5, "fp16", fused=False).intensity_flop_per_byte)
    for (_, intensity, _), k in zip(points[2:], (3, 5)):
        assert intensity == pytest.approx(rl.elementwise_chain(N, k, "fp16", fused=True).intensity_flop_per_byte)
        assert intensity == pytest.approx(k / 4)
    # Rates: on the slope, FLOP/s = intensity x bandwidth.
    assert points[0][2] == pytest.approx(points[0][1] * BW["torch_add"])
    assert points[1][2] == pytest.approx(0.25 * BW["torch_chain_unfused"])
    assert points[3][2] == pytest.approx(5 / 4 * BW["triton_chain_fused"])


def test_summarize_closed_forms(rows):
    s = er.summarize(rows, hbm_bytes_per_s=2.5e12)
    assert isinstance(s, er.ElementwiseSummary)
    assert s.dtype == "fp16" and s.n_elements == N and s.k_max == 5
    assert s.copy_bytes_per_s == pytest.approx(COPY_BW)
    assert s.min_ratio_to_copy == pytest.approx(min(BW.values()) / COPY_BW)
    assert s.max_ratio_to_copy == pytest.approx(max(BW.values()) / COPY_BW)
    assert s.copy_fraction_of_datasheet == pytest.approx(COPY_BW / 2.5e12)
    # Unfused moves 2 k n b at its bandwidth, fused 2 n b at its own: speed-up k x bw_fused / bw_unfused.
    assert s.fusion_speedup == pytest.approx(5 * BW["triton_chain_fused"] / BW["torch_chain_unfused"])
    assert s.unfused_time_s / s.fused_time_s == pytest.approx(s.fusion_speedup)


def test_report_rows_prints_every_row(rows, capsys):
    er.report_rows(rows)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"n = {N} fp16 elements") and "2.00 TB/s" in out[0]
    assert len(out) == 2 + len(rows)
    assert any(line.split()[:2] == ["copy", "1"] and "100.0%" in line for line in out)
    assert any(line.split()[:2] == ["torch_add", "1"] and "105.0%" in line for line in out)


def test_vector_roof_dtype_is_the_arithmetic_not_the_storage():
    # The kernels load 16-bit data and compute in fp32 (Triton: .to(tl.float32); torch: opmath float), so
    # the fp32 roof binds them, not the bf16 one (which needs paired bf16 arithmetic the kernels never do).
    h200 = hardware.get_accelerator("H200 SXM")
    assert "bf16" in h200.vector_flop_per_s and h200.vector_flop_per_s["bf16"] == 2 * h200.vector_flop_per_s["fp32"]
    for dtype in ("bf16", "fp16", "fp32"):
        assert er.vector_roof_dtype(h200, dtype) == "fp32"
    assert er.vector_roof_dtype("H200 SXM", "fp64") == "fp64"
    for bad in ("fp8", "int8", "float32", None, ["bf16"]):
        with pytest.raises(ValueError, match="dtype must be one of"):
            er.vector_roof_dtype(h200, bad)


# --- errors that name the argument ---------------------------------------------------------------------------

def test_missing_dtype_names_it(run):
    with pytest.raises(ValueError, match=r"dtype 'bf16'.*\['fp16', 'fp32'\]"):
        er.rows_for_dtype(run, "bf16")


def test_missing_kernel_or_k_names_them(rows):
    with pytest.raises(ValueError, match="kernel 'triton_chain_fused' with k_ops 16"):
        er.find_row(rows, "triton_chain_fused", 16)
    with pytest.raises(ValueError, match="kernel must be one of"):
        er.find_row(rows, "memcpy")
    with pytest.raises(ValueError, match="k_ops must be"):
        er.find_row(rows, "copy", 0)
    no_copy = [r for r in rows if r["kernel"] != "copy"]
    with pytest.raises(ValueError, match="kernel 'copy'"):
        er.summarize(no_copy, 1e12)
    with pytest.raises(ValueError, match="kernel 'copy'"):
        er.ratios_to_copy(no_copy)
    no_add = [r for r in rows if r["kernel"] != "torch_add"]
    with pytest.raises(ValueError, match="kernel 'torch_add'"):
        er.roofline_points(no_add)
    no_fused = [r for r in rows if r["kernel"] != "triton_chain_fused"]
    with pytest.raises(ValueError, match="kernel 'triton_chain_fused'"):
        er.summarize(no_fused, 1e12)
    # the fused chain's longest k needs its unfused partner
    short_unfused = [r for r in rows if not (r["kernel"] == "torch_chain_unfused" and r["k_ops"] == 5)]
    with pytest.raises(ValueError, match="kernel 'torch_chain_unfused' with k_ops 5"):
        er.summarize(short_unfused, 1e12)


def test_bad_rows_and_run_name_the_argument(run, rows):
    with pytest.raises(ValueError, match="rows must all share one dtype"):
        er.summarize(run["results"], 1e12)
    with pytest.raises(ValueError, match="rows must hold at least one"):
        er.roofline_points([])
    with pytest.raises(ValueError, match="rows must be a list"):
        er.find_row(rows[0], "copy")
    with pytest.raises(ValueError, match="rows holds a row without the keys"):
        er.find_row([{k: v for k, v in rows[0].items() if k != "time_s"}], "copy")
    with pytest.raises(ValueError, match="rows holds 2 rows"):
        er.find_row(rows + rows[:1], "copy")
    with pytest.raises(ValueError, match="time_s"):
        er.find_row([{**rows[0], "time_s": 0.0}], "copy")
    with pytest.raises(ValueError, match="unknown kernel"):
        er.find_row([{**rows[0], "kernel": "memset"}], "copy")
    with pytest.raises(ValueError, match="run must be"):
        er.rows_for_dtype({"provenance": {}}, "fp16")
    with pytest.raises(ValueError, match="run must be"):
        er.rows_for_dtype("elementwise_h200", "fp16")
    with pytest.raises(ValueError, match="run holds a row"):
        er.rows_for_dtype({"results": [{"kernel": "copy"}]}, "fp16")
    with pytest.raises(ValueError, match="rows hold only the copy"):
        er.summarize([r for r in rows if r["kernel"] == "copy"], 1e12)
    with pytest.raises(ValueError, match="kernel must be 'torch_chain_unfused' or"):
        er.chain_k_values(rows, "copy")


@pytest.mark.parametrize("bad", [0, -1e12, float("nan"), float("inf"), "4.8e12", True])
def test_summarize_rejects_bad_bandwidth(rows, bad):
    with pytest.raises(ValueError, match="hbm_bytes_per_s") as err:
        er.summarize(rows, bad)
    assert repr(bad) in str(err.value)


def test_vector_roof_dtype_without_fp32_raises():
    h200 = hardware.get_accelerator("H200 SXM")
    from dataclasses import replace

    bare = replace(h200, name="no vector peaks", vector_flop_per_s={})
    with pytest.raises(ValueError, match="no vector peak for fp32, the arithmetic of dtype 'bf16'"):
        er.vector_roof_dtype(bare, "bf16")


# --- the recorded H200 run (what chapter 06 says about it) ---------------------------------------------------

@pytest.fixture(scope="module")
def h200_run():
    return recorded.load_run("elementwise_h200")


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_recorded_run_every_streaming_kernel_runs_at_the_copy_bandwidth(h200_run, dtype):
    rows = er.rows_for_dtype(h200_run, dtype)
    assert {r["n_elements"] for r in rows} == {2**28}
    ratios = er.ratios_to_copy(rows)
    assert len(ratios) == 2 + 2 * 5
    assert all(0.9 <= ratio <= 1.1 for ratio in ratios.values()), ratios


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_recorded_run_fusion_pays_nearly_k(h200_run, dtype):
    rows = er.rows_for_dtype(h200_run, dtype)
    s = er.summarize(rows, hardware.get_accelerator("H200 SXM").hbm_bytes_per_s)
    assert s.k_max == 16
    assert 10 < s.fusion_speedup <= 16 * 1.1  # at most k (same FLOP, k times the bytes), within noise
    assert 0.8 < s.copy_fraction_of_datasheet < 1.0  # a measured stream stays under the datasheet rate
    points = er.roofline_points(rows)
    b = 4 if dtype == "fp32" else 2
    assert [round(p[1], 6) for p in points] == [round(v, 6) for v in (1 / (3 * b), 1 / (2 * b), *(k / (2 * b) for k in (2, 4, 8, 16)))]


def test_recorded_run_bf16_figures_of_the_chapter(h200_run):
    # The figures chapter 06 states (its hidden cells assert the same).
    rows = er.rows_for_dtype(h200_run, "bf16")
    s = er.summarize(rows, hardware.get_accelerator("H200 SXM").hbm_bytes_per_s)
    assert round(s.min_ratio_to_copy * 100) == 101 and round(s.max_ratio_to_copy * 100) == 104
    # "the adds beat it by a few percent"
    ratios = er.ratios_to_copy(rows)
    assert all(1.0 < ratios[(kernel, 1)] < 1.05 for kernel in ("torch_add", "triton_add"))
    assert round(s.copy_fraction_of_datasheet * 100) == 87
    assert round(s.fusion_speedup, 1) == 15.9


def test_recorded_run_missing_dtype_raises(h200_run):
    with pytest.raises(ValueError, match="dtype 'fp8'"):
        er.rows_for_dtype(h200_run, "fp8")



# ---- second edition: series, chain table, the run's accelerator ------------------------------------------
def test_series_table_and_accelerator_on_the_recorded_long_run():
    from gpuperf.results import elementwise as er
    from gpuperf import hardware
    from gpuperf import records as recorded
    from gpuperf.plotting.tables import CHAIN_COLUMNS, format_table_html

    run = recorded.load_run("elementwise_long_h200")
    rows = er.rows_for_dtype(run, "bf16")
    series = er.roofline_series(rows)
    fused_name = [name for name in series if name.startswith("chain, fused")][0]
    xs, ys = series[fused_name]
    assert xs == [k / 4 for k in er.chain_k_values(rows)]  # k FLOP per 4 bytes
    assert ys == sorted(ys)  # more arithmetic per element, more FLOP/s
    table = er.chain_table_rows(rows, 66.9e12)
    assert [r["k"] for r in table] == list(er.chain_k_values(rows))
    assert all(abs(r["fused_over_copy"] - 1) < 0.05 for r in table if r["k"] <= 16)
    assert "k (FLOP per element)" in format_table_html(table, CHAIN_COLUMNS)
    acc, known = er.accelerator_of_run(run, "H200 SXM")
    assert known and acc is hardware.get_accelerator("H200 SXM")
    other, known = er.accelerator_of_run({"provenance": {"device": "Tesla K80"}}, "H200 SXM")
    assert not known and other.name == "H200 SXM"
    with pytest.raises(ValueError, match="provenance"):
        er.accelerator_of_run({}, "H200 SXM")
    with pytest.raises(ValueError, match="vector_peak"):
        er.chain_table_rows(rows, 0)


def test_load_or_run_reads_the_recorded_run_without_a_gpu():
    from gpuperf.results import elementwise as er

    run, dtype = er.load_or_run(False)
    assert dtype == "bf16" and run["provenance"]["device"] == "NVIDIA H200"
    assert er.rows_for_dtype(run, dtype)
