"""The benchmark harness's bookkeeping (no GPU needed): cases, rows, ratios, spread, families, bench/run.py."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from gpuperf import benchmark as bm

REPO = Path(__file__).resolve().parents[1]


def _case(label, flop=0.0, bytes_moved=1e9, reference=None, metric="bytes_per_s", **params):
    return bm.Case(label=label, fn=lambda: None, flop=flop, bytes_moved=bytes_moved, reference=reference,
                   metric=metric, params=params)


def test_row_counts_rates_from_the_case():
    row = bm.make_row("demo", _case("triton fp16", flop=4e12, bytes_moved=2e9, dtype="fp16"), 2e-3)
    assert row["dtype"] == "fp16" and row["family"] == "demo" and row["label"] == "triton fp16"
    assert row["flop_per_s"] == pytest.approx(2e15) and row["bytes_per_s"] == pytest.approx(1e12)
    assert list(row)[1:] == list(bm.ROW_KEYS)


def test_ratios_compare_the_chosen_metric_with_the_reference_rate():
    rows = [bm.make_row("f", _case("copy", bytes_moved=2e9), 1e-3),                     # 2 TB/s
            bm.make_row("f", _case("add", bytes_moved=3e9, reference="copy"), 1.25e-3),  # 2.4 TB/s
            bm.make_row("f", _case("cublas", flop=1e12, metric="flop_per_s"), 2e-3),
            bm.make_row("f", _case("triton", flop=1e12, metric="flop_per_s", reference="cublas"), 2.5e-3)]
    ratios = bm.summarize_ratios(rows)
    assert ratios == {"add": pytest.approx(1.2), "triton": pytest.approx(0.8)}
    assert bm.with_ratios(rows)[0]["ratio_to_reference"] is None


def test_a_missing_reference_is_named():
    rows = [bm.make_row("f", _case("add", reference="copy"), 1e-3)]
    with pytest.raises(ValueError, match="names reference 'copy'"):
        bm.with_ratios(rows)


def test_spread_reads_the_repeated_time():
    row = bm.make_row("f", _case("copy"), 1e-3)
    row["time_s_repeat"] = 1.02e-3
    assert bm.spread([row]) == [("copy", pytest.approx(2.0))]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"label": ""}, "^label must be a non-empty string"),
        ({"fn": 3}, "^fn must be callable"),
        ({"flop": -1.0}, "^flop must be a finite number >= 0"),
        ({"bytes_moved": math.nan}, "^bytes_moved must be a finite number >= 0"),
        ({"metric": "seconds"}, "^metric must be one of"),
        ({"params": {"time_s": 1}}, "^params must not use the harness's column names"),
    ],
)
def test_case_refuses_bad_fields(kwargs, message):
    fields = {"label": "x", "fn": lambda: None, **kwargs}
    with pytest.raises(ValueError, match=message):
        bm.Case(**fields)


def test_make_row_refuses_a_bad_time():
    with pytest.raises(ValueError, match="^time_s must be a finite positive"):
        bm.make_row("f", _case("x"), 0.0)


def test_device_slug():
    assert bm.device_slug("NVIDIA H200") == "h200"
    assert bm.device_slug("NVIDIA A100-SXM4-80GB") == "a100-sxm4-80gb"
    assert bm.device_slug("Tesla T4") == "tesla-t4"


def test_families_are_discovered_and_unknown_ones_named():
    assert "elementwise" in bm.families()
    with pytest.raises(ValueError, match="^name must be one of the benchmark families"):
        bm.load_family("no_such_family")


def test_time_callable_refuses_bad_durations():
    with pytest.raises(ValueError, match="^warmup_ms must be"):
        bm.time_callable(lambda: None, warmup_ms=0)


def _run(*args):
    return subprocess.run([sys.executable, "bench/run.py", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120)


def test_bench_lists_its_families():
    done = _run("--list")
    assert done.returncode == 0 and "elementwise" in done.stdout, done.stderr


def test_bench_refuses_an_unknown_family_and_a_bad_option():
    assert "must be one of the benchmark families" in _run("no_such_family").stderr
    assert "--option must be KEY=VALUE" in _run("elementwise", "--option", "3=4").stderr


def test_bench_parses_literal_options():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_run", REPO / "bench" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.parse_options(["k_max=256", "dtypes=('fp16',)", "mode=fast"]) == {
        "k_max": 256, "dtypes": ("fp16",), "mode": "fast"}


def test_every_family_records_to_a_file_the_book_has():
    """`make bench` rewrites book/data/<RECORD_STEM or family>_h200.json: that must be a recorded run the book
    already holds (same family, so the same row format), never a new file beside it or an older record of
    another format."""
    import json

    for name in bm.families():
        stem = getattr(bm.load_family(name), "RECORD_STEM", name)
        path = REPO / "book" / "data" / f"{stem}_h200.json"
        assert path.exists(), f"family {name} would write {path.name}, which the book does not hold"
        rows = json.loads(path.read_text())["results"]
        assert rows and {row.get("family", name) for row in rows} == {name}, (name, path.name)


def test_host_timed_cases_compare_calls_per_second():
    # timing="host": the rate is calls per second of host time, so the ratio to the reference is the
    # reference's time per call over ours
    ref = bm.Case("torch", lambda: None, metric="calls_per_s", timing="host", bytes_moved=0.0)
    ours = bm.Case("ours", lambda: None, metric="calls_per_s", timing="host", reference="torch")
    rows = [bm.make_row("host", ref, 10e-6), bm.make_row("host", ours, 25e-6)]
    assert rows[0]["calls_per_s"] == pytest.approx(1e5) and rows[0]["timing"] == "host"
    assert list(rows[0])[:len(bm.ROW_KEYS)] == list(bm.ROW_KEYS)
    assert bm.summarize_ratios(rows) == {"ours": pytest.approx(0.4)}
    with pytest.raises(ValueError, match="timing"):
        bm.Case("x", lambda: None, timing="wall")
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="calls"):
            bm.time_host_callable(lambda: None, calls=bad)
