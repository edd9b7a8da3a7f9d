"""gpuperf.results.matmul and the matmul_roof benchmark family's cases (no GPU needed for either)."""

from __future__ import annotations

import pytest

from gpuperf.results import matmul as mr
from gpuperf import roofline as rl
from gpuperf.benchmark.family import matmul_roof


def _row(kind, m, k, n, time_s, label=None):
    flop = 2.0 * m * k * n if kind != "copy" else 0.0
    moved = 2.0 * (m * k + k * n + m * n) if kind != "copy" else 4.0 * n
    return {"kind": kind, "m": m, "k": k, "n": n, "flop": flop, "bytes_moved": moved, "time_s": time_s,
            "flop_per_s": flop / time_s, "bytes_per_s": moved / time_s, "label": label or f"{kind} {m}x{k}x{n}"}


def _rows():
    rows = [_row("copy", 0, 0, 2**29, 2**31 / 4e12)]
    # squares at a made-up 10 us fixed cost plus 700 TFLOP/s
    for n in (128, 512, 1024, 2048, 4096):
        rows.append(_row("square", n, n, n, 10e-6 + 2 * n**3 / 700e12))
    rows.append(_row("decode", 1, 4096, 4096, 2 * (4096 * 4096) / 3e12))
    return rows


def test_analyze_rows_against_the_roofline():
    results = mr.analyze_rows(_rows(), "H200 SXM")
    assert [r.kind for r in results] == ["square"] * 5 + ["decode"]
    for r in results:
        op = rl.analyze(rl.matmul(r.m, r.k, r.n), "H200 SXM")
        assert r.intensity_flop_per_byte == pytest.approx(op.intensity_flop_per_byte)
        assert r.fraction_of_bound == pytest.approx(r.flop_per_s / op.attainable_flop_per_s)
        assert r.fraction_of_peak == pytest.approx(r.flop_per_s / 989.4e12)
        assert r.bound == op.bound
        assert r.fraction_of_bound <= 1.0  # the made-up rates stay under the roof
    best = mr.best_square(results)
    assert best.n == 4096
    # 10 us + t: half the best rate is reached where the fixed cost is about equal to the arithmetic time
    assert mr.measured_knee(results) == 2048
    assert mr.measured_knee(results, fraction=0.0005) == 128
    assert mr.copy_bytes_per_s(_rows()) == pytest.approx(4e12)
    table = mr.report_table_rows(results)
    assert table[0]["shape"] == "128 x 128 x 128" and table[-1]["bound"] == "memory"


def test_bad_rows_raise():
    with pytest.raises(ValueError, match="rows"):
        mr.analyze_rows("nope", "H200 SXM")
    with pytest.raises(ValueError, match="lacks"):
        mr.analyze_rows([{"kind": "square"}], "H200 SXM")
    with pytest.raises(ValueError, match="kind"):
        mr.rows_of_kind(_rows(), "cube")
    with pytest.raises(ValueError, match="fraction"):
        mr.measured_knee(mr.analyze_rows(_rows(), "H200 SXM"), fraction=0)
    with pytest.raises(ValueError, match="square"):
        mr.best_square([])


def test_matmul_roof_shapes_and_references():
    shapes = matmul_roof.shapes()
    labels = [label for _, label, *_ in shapes]
    assert len(labels) == len(set(labels))
    assert matmul_roof.REFERENCE_LABEL in labels
    squares = [m for kind, _, m, k, n in shapes if kind == "square"]
    assert squares[0] == 128 and squares[-1] == 8192
    assert [m for kind, _, m, k, n in shapes if kind == "decode"] == list(matmul_roof.DECODE_BATCHES)
    quick = matmul_roof.shapes(quick=True)
    assert matmul_roof.REFERENCE_LABEL in [label for _, label, *_ in quick] and len(quick) < len(shapes)
    assert matmul_roof.matmul_bytes(2, 3, 4) == 2 * (6 + 12 + 8) and matmul_roof.matmul_flop(2, 3, 4) == 48


# --------------------------------------------------------------------------------------------------
# Interleaved timing rounds (the harness option the matmul family opts into) and the GPU-state sampler
# --------------------------------------------------------------------------------------------------

from gpuperf import benchmark as bm  # noqa: E402
from gpuperf.benchmark import _gpustate  # noqa: E402


def test_interleaved_order_alternates_direction():
    assert bm.interleaved_order(2, 4) == [0, 1, 1, 0, 0, 1, 1, 0]
    assert bm.interleaved_order(3, 2) == [0, 1, 2, 2, 1, 0]
    assert bm.interleaved_order(1, 3) == [0, 0, 0]
    order = bm.interleaved_order(5, 5)
    assert all(order.count(i) == 5 for i in range(5))
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="n_cases"):
            bm.interleaved_order(bad, 2)
    with pytest.raises(ValueError, match="rounds"):
        bm.interleaved_order(2, 0)


@pytest.mark.parametrize("kwargs, message", [({"rounds": 0}, "rounds"), ({"rounds": 2.0}, "rounds"),
                                             ({"rounds": True}, "rounds"),
                                             ({"rounds": 3, "retime": True}, "exclude")])
def test_case_refuses_bad_rounds(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bm.Case("x", lambda: None, **kwargs)
    with pytest.raises(ValueError, match="column names"):
        bm.Case("x", lambda: None, params={"time_s_rounds": 1})


def test_parse_nvidia_smi_and_summaries():
    s = _gpustate.parse_nvidia_smi("1755, 61, 652.31\n")
    assert s == _gpustate.GpuSample(1755.0, 61.0, 652.31)
    assert _gpustate.parse_nvidia_smi("1980, 40, [N/A]").power_w is None
    for bad in ("", "1, 2", 3):
        with pytest.raises(ValueError, match="text"):
            _gpustate.parse_nvidia_smi(bad)
    samples = [_gpustate.GpuSample(1500.0, 60.0, 600.0), _gpustate.GpuSample(1700.0, 64.0, None),
               _gpustate.GpuSample(1600.0, 62.0, 640.0)]
    assert _gpustate.summarize(samples) == {"sm_clock_mhz": 1600.0, "temperature_c": 64.0, "power_w": 620.0}
    assert _gpustate.summarize([]) == {"sm_clock_mhz": None, "temperature_c": None, "power_w": None}


def test_sampler_reads_on_entry_and_exit_and_survives_a_failing_reader():
    calls = []

    def reader():
        calls.append(1)
        return _gpustate.GpuSample(1000.0 + len(calls), 50.0, 500.0)

    with _gpustate.GpuSampler(reader, interval_s=10.0) as s:
        pass
    assert len(s.samples) == 2 and s.summary()["sm_clock_mhz"] == 1001.5

    def broken():
        raise OSError("no driver")

    with _gpustate.GpuSampler(broken, interval_s=10.0) as s:
        pass
    assert s.samples == [] and s.summary()["sm_clock_mhz"] is None
    with _gpustate.GpuSampler(None) as s:
        pass
    assert s.summary()["temperature_c"] is None
    with pytest.raises(ValueError, match="interval_s"):
        _gpustate.GpuSampler(reader, interval_s=0)


def test_run_cases_interleaves_a_group_and_leaves_plain_cases_alone(monkeypatch, capsys):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(_gpustate, "make_reader",
                        lambda index: ("fake", lambda: _gpustate.GpuSample(1700.0, 55.0, 650.0)))
    calls = []
    # The "GPU" slows down as it warms: the n-th timing of the run lasts n ms, whatever is timed.
    monkeypatch.setattr(bm, "time_callable", lambda fn, w, r: (fn(), len(calls) * 1e-3)[1])

    def cases():
        for g in ("a", "b"):
            yield bm.Case(f"ref {g}", lambda g=g: calls.append(f"ref {g}"), flop=1.0, metric="flop_per_s",
                          rounds=4, params={"kernel": "ref"})
            yield bm.Case(f"new {g}", lambda g=g: calls.append(f"new {g}"), flop=1.0, metric="flop_per_s",
                          reference=f"ref {g}", params={"kernel": "new"})
        yield bm.Case("plain", lambda: calls.append("plain"), flop=1.0, metric="flop_per_s", retime=True)

    rows = bm.run_cases("demo", cases(), progress=False, soak_s=0.0)
    # each member runs once on arrival (the warm-up run), then the group round-robin, reversed every round
    assert calls[:10] == ["ref a", "new a", "ref a", "new a", "new a", "ref a", "ref a", "new a", "new a",
                          "ref a"]
    assert calls[-3:] == ["plain", "plain", "plain"]
    by = {r["label"]: r for r in rows}
    assert [r["label"] for r in rows] == ["ref a", "new a", "ref b", "new b", "plain"]
    # under a steady drift the two kernels' medians are equal: order no longer decides the ratio
    assert by["new a"]["ratio_to_reference"] == pytest.approx(1.0)
    assert by["ref a"]["time_s_rounds"] == pytest.approx([3e-3, 6e-3, 7e-3, 10e-3])
    assert by["ref a"]["time_s"] == pytest.approx(6.5e-3)
    assert by["new a"]["sm_clock_mhz_rounds"] == [1700.0] * 4 and by["new a"]["gpu_state_source"] == "fake"
    assert list(by["new a"])[-len(bm.ROUND_KEYS):] == list(bm.ROUND_KEYS)
    assert "time_s_rounds" not in by["plain"] and by["plain"]["time_s_repeat"] is not None
    spread = dict((label, (lo, hi)) for label, lo, hi in bm.round_spread(rows))
    assert spread["ref a"] == pytest.approx((100 * (3 / 6.5 - 1), 100 * (10 / 6.5 - 1)))
    assert "plain" not in spread
    bm.report(rows)
    printed = capsys.readouterr().out
    assert "rounds ref a: 4 x, -53.85 / +53.85 % of the median; SM MHz [1700, 1700, 1700, 1700]" in printed
    assert "repeat plain" in printed and "rounds plain" not in printed


# --------------------------------------------------------------------------------------------------
# Nsight Compute CSV reports (gpuperf.benchmark.ncu) and bench/matmul_profile.py's rows
# --------------------------------------------------------------------------------------------------

from pathlib import Path  # noqa: E402

from gpuperf.benchmark import ncu  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BASELINE = REPO / "bench" / "profiles" / "2026-12-01-baseline" / "ncu_matmul_bf16_4096.csv"

_HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
           '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def _line(launch, kernel, section, name, unit, value):
    return (f'"{launch}","1","python3","h","{kernel}","1","7","(256, 1, 1)","(132, 1, 1)","0","9.0",'
            f'"{section}","{name}","{unit}","{value}"')


def test_parse_ncu_csv_groups_metrics_by_launch():
    text = "\n".join([
        "==PROF== Connected to process 1",
        _HEADER,
        _line(0, "_matmul_tma_kernel", "Command line profiler metrics", "gpu__time_duration.sum", "ns", "180,416"),
        _line(0, "_matmul_tma_kernel", "Launch Statistics", "Registers Per Thread", "register/thread", "161"),
        _line(0, "_matmul_tma_kernel", "Command line profiler metrics",
              "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "", "0.52"),
        _line(1, "nvjet", "Command line profiler metrics", "gpu__time_duration.sum", "ns", "174,304"),
        _line(1, "nvjet", "Launch Statistics", "Block Limit Registers", "block", "n/a"),
    ])
    launches = ncu.parse_ncu_csv(text)
    assert [x["kernel_name"] for x in launches] == ["_matmul_tma_kernel", "nvjet"]
    assert launches[0]["metrics"]["gpu__time_duration.sum"] == ("ns", 180416.0)
    assert launches[1]["metrics"]["Block Limit Registers"] == ("block", "n/a")
    s = ncu.kernel_summary(launches[0])
    assert s["duration_ns"] == 180416.0 and s["registers_per_thread"] == 161.0
    assert s["tensor_pipe_active_pct"] is None and s["stalls"] == {"wait": 0.52}
    assert s["block_size"] == "(256, 1, 1)"
    with pytest.raises(ValueError, match="header"):
        ncu.parse_ncu_csv("==PROF== nothing profiled\n")
    with pytest.raises(ValueError, match="columns"):
        ncu.parse_ncu_csv('"ID","Kernel Name"\n"0","k"\n')


def test_matmul_profile_rows_from_the_baseline_report():
    import importlib.util

    spec = importlib.util.spec_from_file_location("matmul_profile", REPO / "bench" / "matmul_profile.py")
    mp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mp)
    rows = mp.rows_from_reports({("before", "bf16", 4096): BASELINE.read_text()})
    assert [(r["stage"], r["kernel"]) for r in rows] == [("before", "triton"), ("before", "cublas")]
    ours, cublas = rows
    # the figures bench/NOTES.md quotes for the baseline
    assert ours["duration_ns"] == 180416.0 and cublas["duration_ns"] == 174304.0
    assert (ours["tensor_pipe_active_pct"], cublas["tensor_pipe_active_pct"]) == (92.09, 94.95)
    assert ours["block_size"] == "(256, 1, 1)" and cublas["block_size"] == "(384, 1, 1)"
    assert mp.parse_spec("after:fp16:8192=x.csv") == (("after", "fp16", 8192), Path("x.csv"))
    with pytest.raises(ValueError, match="STAGE:DTYPE:N=PATH"):
        mp.parse_spec("after:bf16=x.csv")


def test_round_ratios_pair_each_round_with_the_reference_round():
    ref = bm.make_row("f", bm.Case("cublas", lambda: None, flop=2e12, metric="flop_per_s", rounds=3), 2e-3)
    new = bm.make_row("f", bm.Case("triton", lambda: None, flop=2e12, metric="flop_per_s", reference="cublas",
                                   rounds=3), 2.2e-3)
    ref["time_s_rounds"] = [1.8e-3, 2.0e-3, 2.4e-3]
    new["time_s_rounds"] = [2.0e-3, 2.2e-3, 2.2e-3]
    plain = bm.make_row("f", bm.Case("other", lambda: None, flop=1.0, metric="flop_per_s", reference="cublas"),
                        1e-3)
    ratios = bm.round_ratios([ref, new, plain])
    assert list(ratios) == ["triton"]
    assert ratios["triton"] == pytest.approx([0.9, 2.0 / 2.2, 2.4 / 2.2])


def test_run_cases_soaks_an_interleaved_group_before_its_rounds(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(_gpustate, "make_reader", lambda index: None)
    calls = []
    monkeypatch.setattr(bm, "time_callable", lambda fn, w, r: (calls.append("timed"), 1e-3)[1])
    cases = [bm.Case("ref", lambda: calls.append("ref"), rounds=2),
             bm.Case("new", lambda: calls.append("new"), reference="ref")]
    rows = bm.run_cases("demo", iter(cases), progress=False, soak_s=1e-9)
    # arrival runs, one soak pass over the group (at least once, however short), then 2 x 2 timings
    assert calls == ["ref", "new", "ref", "new"] + ["timed"] * 4
    assert rows[1]["sm_clock_mhz_rounds"] == [None, None] and rows[1]["gpu_state_source"] is None
    with pytest.raises(ValueError, match="soak_s"):
        bm.run_cases("demo", iter(cases), progress=False, soak_s=-1)
    # a retime case joining a group would silently lose its repeat: refused, naming the case
    retimed = [cases[0], bm.Case("new2", lambda: None, reference="ref", retime=True)]
    with pytest.raises(ValueError, match="'new2' has retime=True"):
        bm.run_cases("demo", iter(retimed), progress=False, soak_s=0.0)


def test_sweep_rows_from_a_sweep_report():
    import importlib.util

    spec = importlib.util.spec_from_file_location("matmul_sweep", REPO / "bench" / "matmul_sweep.py")
    ms = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ms)
    tail = ("compiled base bfloat16 (256, 256, 256): regs 161, spills 0, shared 180248, num_warps 8, threads None\n"
            "compiled base float16 (256, 256, 256): regs 170, spills 2, shared 1, num_warps 8, threads None\n")
    report = {
        "candidates": {"base": [[128, 256, 64, 8, 3, 8, True], True]},
        "compile": [["base", 7.0, 0, tail]],
        "check": [["base", "torch.bfloat16", [1025, 2056, 1032], 0, 1e-3, True],
                  ["base", "torch.float16", [1025, 2056, 1032], 0, 1e-3, True]],
        "timing": [{"dtype": "torch.bfloat16", "n": 4096, "kernel": k, "times_s": ts, "sm_clock_mhz": [1.0] * 3,
                    "temperature_c": [50.0] * 3, "power_w": [600.0] * 3, "ratio_median": r, "ratio_rounds": [r] * 3}
                   for k, ts, r in (("cublas", [2e-4, 1e-4, 3e-4], 1.0), ("base", [2e-4, 2e-4, 2e-4], 1.0))],
    }
    rows = ms.sweep_rows(report)
    assert [r["kernel"] for r in rows] == ["cublas", "base"]
    cub, base = rows
    assert cub["time_s"] == 2e-4 and cub["flop_per_s"] == pytest.approx(2 * 4096**3 / 2e-4)
    assert "block_m" not in cub and cub["dtype"] == "bf16"
    assert (base["block_m"], base["block_n"], base["stages"], base["split_epilogue"]) == (128, 256, 3, True)
    assert (base["registers_per_thread"], base["spilled_registers"], base["shared_bytes"]) == (161, 0, 180248)
    assert base["checked"] is True and base["warp_specialize"] is True


# --------------------------------------------------------------------------------------------------
# gpuperf.results.matmul_targets: chapter 08's tables of the targets, the sweep and the profiles
# --------------------------------------------------------------------------------------------------

from gpuperf.results import matmul_targets as mt  # noqa: E402


def _target_pair(dtype, size, cublas_times, triton_times, clocks=(1600.0, 1700.0)):
    flop = 2.0 * size**3
    ref_label = f"cublas {dtype} {size}x{size}x{size}"
    rows = []
    for kernel, times, ref, clock in (("cublas", cublas_times, None, clocks[0]),
                                      ("triton-auto", triton_times, ref_label, clocks[1])):
        case = bm.Case(f"{kernel.split('-')[0]} {dtype} {size}x{size}x{size}", lambda: None, flop=flop,
                       metric="flop_per_s", reference=ref, rounds=len(times),
                       params={"group": "square", "dtype": dtype, "m": size, "n": size, "k": size,
                               "kernel": kernel})
        row = bm.make_row("matmul", case, sorted(times)[len(times) // 2])
        row.update(time_s_rounds=list(times), sm_clock_mhz_rounds=[clock] * len(times))
        rows.append(row)
    return rows


def test_target_rows_read_medians_and_per_round_ratios():
    rows = (_target_pair("bf16", 4096, [1.0, 1.1, 1.2], [1.05, 1.1, 1.1])
            + _target_pair("bf16", 8192, [8.0, 8.0, 8.0], [7.9, 8.0, 8.1]))
    table = mt.target_rows(rows)
    assert [t["case"] for t in table] == ["bf16 4096^3", "bf16 8192^3"]
    small, big = table
    assert small["ratio"] == pytest.approx(1.0) and small["met"] and small["target"] == 0.95
    assert (small["ratio_lo"], small["ratio_hi"]) == (pytest.approx(1.0 / 1.05), pytest.approx(1.2 / 1.1))
    assert small["cublas_mhz"] == 1600.0 and small["triton_mhz"] == 1700.0 and small["rounds"] == 3
    assert big["ratio"] == pytest.approx(1.0) and big["met"]  # 8.0 / 8.0: the target is >= 1.0
    slower = mt.target_rows(_target_pair("fp16", 8192, [8.0] * 3, [8.1] * 3))[0]
    assert not slower["met"] and slower["ratio"] == pytest.approx(8.0 / 8.1)
    plain = _target_pair("fp16", 4096, [1.0], [1.0])
    plain[1].pop("time_s_rounds")
    with pytest.raises(ValueError, match="interleaved"):
        mt.target_rows(plain)


def test_sweep_and_profile_tables_from_the_recorded_files():
    from gpuperf import records as recorded

    shapes = [("bf16", 4096), ("fp16", 4096), ("bf16", 8192), ("fp16", 8192)]
    sweep = mt.sweep_table(recorded.load_run("matmul_sweep_h200")["results"], shapes)
    base = next(r for r in sweep if r["launch"] == "base")
    assert base["tile"] == "128x256x64" and base["stages"] == 3 and base["shared_kib"] == pytest.approx(176.02, abs=0.01)
    assert all(base[f"{dt} {n}"] is not None for dt, n in shapes) and "cublas" not in {r["launch"] for r in sweep}
    ws4 = next(r for r in sweep if r["launch"] == "ws-w4")
    assert ws4["spilled"] > 0 and max(ws4[f"{dt} {n}"] for dt, n in shapes) < 0.2
    import importlib.util

    spec = importlib.util.spec_from_file_location("matmul_profile", REPO / "bench" / "matmul_profile.py")
    mp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mp)
    rows = mp.rows_from_reports({("before", "bf16", 4096): BASELINE.read_text()})
    table = mt.profile_table(rows)
    assert [t["who"] for t in table] == ["before: triton", "before: cublas"]
    assert (table[0]["threads"], table[1]["threads"]) == (256, 384)
    assert table[0]["duration_us"] == pytest.approx(180.416) and table[1]["dram_read_mb"] == pytest.approx(148.02, abs=0.01)
    assert mt.profile_table(rows, stages=("after",)) == []


def test_plot_interleaved_rounds_draws_each_rounds_rate_and_clock():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gpuperf import records as recorded
    from gpuperf.plotting.tiling import plot_interleaved_rounds

    rows = recorded.load_run("matmul_targets_h200")["results"]
    label = "triton bf16 4096x4096x4096"
    by_label = {r["label"]: r for r in rows}
    fig, ax = plt.subplots()
    clock_ax = plot_interleaved_rounds(ax, rows, label)
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["cublas", "triton-auto"]
    for line, r in zip(lines, (by_label[by_label[label]["reference"]], by_label[label])):
        assert list(line.get_xdata()) == list(range(1, 8))
        assert list(line.get_ydata()) == pytest.approx([r["flop"] / t / 1e12 for t in r["time_s_rounds"]])
    assert [list(line.get_ydata()) for line in clock_ax.get_lines()] == [
        by_label[by_label[label]["reference"]]["sm_clock_mhz_rounds"], by_label[label]["sm_clock_mhz_rounds"]]
    plt.close(fig)


def test_profile_window_refuses_a_bad_warmup_count():
    from gpuperf.benchmark.ncu import profile_window

    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="^warmups must be"):
            profile_window([], warmups=bad)


def test_load_or_run_reads_the_recorded_run_without_a_gpu():
    from gpuperf.results import matmul as mr

    run = mr.load_or_run(False)
    assert run["provenance"]["device"] == "NVIDIA H200" and mr.rows_of_kind(run, "square")
