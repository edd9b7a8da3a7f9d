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
        module = bm.load_family(name)
        stem = getattr(module, "RECORD_STEM", name)
        path = REPO / "book" / "data" / f"{stem}_h200.json"
        if not path.exists() and getattr(module, "RECORD_PENDING", ""):  # a new family not yet run
            assert "RECORD_PENDING" not in (module.__doc__ or "") and len(module.RECORD_PENDING) > 20, name
            continue
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


# --------------------------------------------------------------------------------------------------
# bench/ behind the harness: every family is a generator, every record has a row in bench/README.md's
# index and every command there names a family or a script that exists; the shared pieces the scripts use
# --------------------------------------------------------------------------------------------------


def test_every_family_builds_its_cases_lazily():
    """cases() returns a generator (nothing allocated before the first case is asked for), so it can be
    called on a machine without a GPU; every family says what it measures."""
    import inspect

    for name in bm.families():
        module = bm.load_family(name)
        assert inspect.isgenerator(module.cases(quick=True)), f"family {name}: cases() must be a generator"
        assert isinstance(getattr(module, "DESCRIPTION", None), str) and module.DESCRIPTION, name


def _index_rows():
    """(record, command cell, readers cell) of each table row of bench/README.md's index."""
    rows = []
    for line in (REPO / "bench" / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`") and cells[0].endswith(".json`"):
            rows.append((cells[0].strip("`"), cells[2], cells[3]))
    return rows


def _commands(cell):
    """The `python bench/...` commands quoted in an index cell (the words after `python`)."""
    import re
    import shlex

    found = []
    for quoted in re.findall(r"`([^`]+)`", cell):
        words = shlex.split(quoted)
        while words and "=" in words[0] and not words[0].startswith("-"):  # JOB_OUT=... TRITON_INTERPRET=0
            words = words[1:]
        if len(words) >= 2 and words[0] == "python" and words[1].startswith("bench/"):
            found.append(words[1:])
    return found


def test_the_bench_index_names_every_record_once():
    records = sorted(p.name for p in (REPO / "book" / "data").glob("*.json"))
    indexed = [record for record, _, _ in _index_rows()]
    assert sorted(indexed) == records, (set(records) - set(indexed), set(indexed) - set(records))
    assert len(indexed) == len(set(indexed))


def test_every_index_command_names_a_family_or_a_script_that_exists():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_run", REPO / "bench" / "run.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    families = bm.families()
    for record, cell, readers in _index_rows():
        commands = _commands(cell)
        if not commands:
            assert cell in ("none now", "(the same command)") or cell.startswith("as `"), (record, cell)
            continue
        for script, *args in commands:
            assert (REPO / script).is_file(), (record, script)
            if script != "bench/run.py":
                continue
            parsed = run.parse_args(args)
            assert len(parsed.families) == 1 and parsed.families[0] in families, (record, parsed.families)
            for key, value in run.parse_options(parsed.option).items():
                # a value that is not a literal (e.g. tuple(range(...))) would reach cases() as a string
                assert not isinstance(value, str) or value.isidentifier(), (record, key, value)
            family = parsed.families[0]
            stem = getattr(bm.load_family(family), "RECORD_STEM", family)
            partial = parsed.quick or parsed.only is not None
            written = parsed.name or f"{stem}_h200{'_quick' if partial else ''}"
            assert f"{written}.json" == record, (record, written)
        assert readers, record


def test_bench_holds_no_shell_scripts():
    assert sorted(p.relative_to(REPO).as_posix() for p in (REPO / "bench").rglob("*.sh")) == []


def test_ncu_command_line():
    from gpuperf.benchmark import profile

    cmd = profile.ncu_command(["python", "bench/profile_kernels.py", "softmax_long"])
    assert cmd[:9] == ["ncu", "--clock-control", "none", "--profile-from-start", "off", "--csv", "--page",
                       "details", "--section"]
    assert cmd[-3:] == ["python", "bench/profile_kernels.py", "softmax_long"]
    assert "--metrics" in cmd and cmd[cmd.index("--metrics") + 1] == ",".join(profile.KERNEL_METRICS)
    plain = profile.ncu_command(["python", "x.py"], sections=(), metrics=("a.sum",), window=False,
                                base_units=True, kernel_regex="^div_")
    assert plain == ["ncu", "--clock-control", "none", "--csv", "--page", "details", "--print-units", "base",
                     "--kernel-name", "regex:^div_", "--metrics", "a.sum", "python", "x.py"]
    with pytest.raises(ValueError, match="^program"):
        profile.ncu_command("python x.py")
    with pytest.raises(ValueError, match="^metrics"):
        profile.ncu_command(["python"], metrics="dram__bytes_read.sum")


def test_launches_pair_with_the_report_one_to_one():
    from gpuperf.benchmark import profile

    launches = [{"kernel": "coalesce_4"}, {"kernel": "bank_8"}]
    profiled = [{"kernel_name": "coalesce_4"}, {"kernel_name": "bank_8"}]

    def matches(launch, name):
        return name.startswith(launch["kernel"])

    assert profile.pair_launches(launches, profiled, matches) == list(zip(launches, profiled))
    with pytest.raises(ValueError, match="profiled 1 kernels, the script launched 2"):
        profile.pair_launches(launches, profiled[:1], matches)
    with pytest.raises(ValueError, match="paired with kernel 'bank_8'"):
        profile.pair_launches(launches, profiled[::-1], matches)
    report = {"metrics": {"dram__bytes_read.sum": ("byte", 12.0), "Block Size": ("", "(128, 1, 1)")}}
    assert profile.metric_values(report) == {"dram__bytes_read.sum": 12.0, "Block Size": "(128, 1, 1)"}
    run = {"provenance": {"device": "NVIDIA H200", "command": "job"}}
    assert profile.provenance_of_job(run, "collect") == {"device": "NVIDIA H200", "command": "collect"}


def test_sass_opcodes_count_each_instruction_once_under_its_opcode():
    from gpuperf.benchmark.compiled import sass_opcodes

    text = """
        Function : div_loop
        /*0000*/                   LDC R1, c[0x0][0x28] ;     /* 0x00000a00ff017b82 */
                                                              /* 0x000ff00000000800 */
        /*0010*/              @!P0 BRA 0x280 ;                /* 0x00000000006c8947 */
        /*0020*/                   ISETP.GE.U32.AND P0, PT, R22, 0x1, PT ;
        Function : spin
        /*0000*/                   EXIT ;
    """
    assert sass_opcodes(text) == {"div_loop": {"LDC": 1, "BRA": 1, "ISETP": 1}, "spin": {"EXIT": 1}}


def test_compile_provenance_says_no_gpu_ran():
    from gpuperf.benchmark.compiled import compile_provenance

    prov = compile_provenance("python bench/part1_sass.py", nvcc="Build cuda_13.0")
    assert prov["device"] == "none: compiled for sm_90 (H100/H200) on a CPU" and prov["driver"] == "none"
    assert prov["command"] == "python bench/part1_sass.py" and prov["nvcc"] == "Build cuda_13.0"
    assert {"torch", "triton", "python", "date"} <= set(prov)


def test_a_case_may_measure_extra_columns():
    case = bm.Case("x", lambda: None, measure=lambda: {"peak_bytes": 3}, params={"impl": "x"})
    bm._add_measured(case)
    assert bm.make_row("f", case, 1e-3)["peak_bytes"] == 3
    with pytest.raises(ValueError, match="measure must be callable"):
        bm.Case("x", lambda: None, measure=3)
    clash = bm.Case("y", lambda: None, measure=lambda: {"time_s": 1.0})
    with pytest.raises(ValueError, match=r"returned columns \['time_s'\]"):
        bm._add_measured(clash)


def test_the_scripts_timers_refuse_bad_counts():
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="^reps"):
            bm.event_times_s(lambda: None, reps=bad)
        with pytest.raises(ValueError, match="^calls"):
            bm.time_wall_per_call(lambda: None, calls=bad)
    with pytest.raises(ValueError, match="^backend"):
        bm.event_times_s(lambda: None, backend="numba")


@pytest.mark.parametrize("script", sorted(p.name for p in (REPO / "bench").glob("*.py")))
def test_every_bench_script_answers_help_without_a_gpu(script):
    done = subprocess.run([sys.executable, f"bench/{script}", "--help"], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip(), (done.stdout[-400:], done.stderr[-800:])


class _Parsed(Exception):
    pass


def test_every_index_command_parses_with_its_script(monkeypatch):
    """The index's script commands use options the scripts have: each script's argparse parses the command
    (stopped right after parsing, so nothing runs)."""
    import argparse
    import importlib.util

    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):
        original(self, args, namespace)  # a bad option exits with code 2
        raise _Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    modules = {}
    checked = 0
    for record, cell, _ in _index_rows():
        for script, *args in _commands(cell):
            if script in ("bench/run.py", "bench/attention_forward_sweep.py") or (
                    script == "bench/matmul_sweep.py" and args[:1] != ["collect"]):
                continue  # run.py: checked above; the two sweeps run without options
            if script not in modules:
                spec = importlib.util.spec_from_file_location(f"bench_{Path(script).stem}", REPO / script)
                modules[script] = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(modules[script])
            module = modules[script]
            entry = (lambda: module.collect(args[1:])) if script == "bench/matmul_sweep.py" else (
                lambda: module.main(args))
            with pytest.raises(_Parsed):
                entry()
            checked += 1
    assert checked >= 20
