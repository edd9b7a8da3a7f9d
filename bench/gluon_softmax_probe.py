"""Probe of the Gluon softmax on a Hopper GPU (H200, Triton 3.6): what Gluon offers, correctness, speed.

A probe, not a benchmark family: it runs :mod:`gpuperf.kernels.gluon_softmax` beside a same-run copy and
the Triton softmax (``gpuperf.kernels.softmax``, ``method="auto"``) and prints

1. what this Triton's Gluon offers for Hopper (modules, and the names the kernel uses);
2. the kernel's results against float64 on awkward shapes (32000, 50000, 65536, 100000, 1007, 50257
   columns; rows with -inf; large offsets; a strided input; fp16 and bf16), and the errors it must raise;
3. times (``gpuperf.benchmark.time_callable``: ``triton.testing.do_bench``, CUDA events, median) of the
   copy (``y.copy_(x)``, the same bytes: ``2 n b`` per call), the Gluon kernel and the Triton softmax at
   fp16/bf16 4096 x 32000, 2048 x 65536, 2048 x 50257 and 32768 x 4096, as ratios to the copy (the Gluon
   kernel's default pipelined schedule and its three-pass schedule with ``store_exp=True``); a few
   launches of the Gluon kernel (warps, programs per SM) on the first dtype with ``--sweep``.

Every step runs in its own ``try`` so one failure (a compile error under Triton 3.6's Gluon, say) is
printed and the rest still runs. With ``$OUT`` set, writes ``$OUT/gluon_softmax_probe.json`` (rows and
provenance). Usage: ``python bench/gluon_softmax_probe.py [--quick] [--sweep | --confirm | --profile]``; ~40 s
on an H200, most of it compiling (each shape, dtype and launch is a kernel of its own). ``--confirm`` runs
only :func:`confirm` (writes ``$OUT/gluon_softmax_confirm.json``); ``--profile`` only :func:`profile`
(Nsight Compute, the first design against the pipelined one: ``$OUT/gluon_softmax_profile.json`` and the
CSV report).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

SHAPES = ((4096, 32000), (2048, 65536), (2048, 50257), (32768, 4096))
#: (rows, n_cols) checked against float64 in fp16; bf16 checks the first five (each shape and dtype is a
#: compile of its own: the probe's time goes mostly there).
CHECK_SHAPES = ((64, 32000), (32, 65536), (40, 50257), (512, 4096), (300, 1007), (48, 50000), (16, 100000),
                (1, 4097), (7, 3000))
#: Extra launches timed with ``--sweep`` on the first dtype at 32000 and 65536 columns:
#: (num_warps, programs_per_sm or None for the plan's choice, chunk_cols or None for 8 KiB chunks).
LAUNCHES = ((16, None, None), (8, 1, None), (4, None, None), (8, None, 8192), (16, None, 8192))


def section(title: str) -> None:
    print(f"\n== {title}", flush=True)


def gluon_inventory() -> dict:
    """What this Triton's Gluon offers for Hopper: module contents and the names the kernel needs."""
    import importlib

    import triton

    info: dict = {"triton": triton.__version__}
    for name in ("triton.experimental.gluon", "triton.experimental.gluon.language",
                 "triton.experimental.gluon.language.nvidia.hopper",
                 "triton.experimental.gluon.language.nvidia.hopper.tma",
                 "triton.experimental.gluon.language.nvidia.hopper.mbarrier",
                 "triton.experimental.gluon.language.nvidia.ampere.async_copy",
                 "triton.experimental.gluon.nvidia.hopper"):
        try:
            module = importlib.import_module(name)
            info[name] = sorted(n for n in dir(module) if not n.startswith("_"))
        except Exception as exc:  # noqa: BLE001
            info[name] = f"import failed: {type(exc).__name__}: {exc}"
    return info


def print_inventory(info: dict) -> None:
    for key, value in info.items():
        if isinstance(value, list):
            print(f"{key}:")
            line = "   "
            for n in value:
                if len(line) + len(n) + 1 > 108:
                    print(line)
                    line = "   "
                line += " " + n
            print(line)
        else:
            print(f"{key}: {value}")
    lang = "triton.experimental.gluon.language"
    used = {f"{lang}.nvidia.hopper.tma": ("async_copy_global_to_shared", "async_load"),
            f"{lang}.nvidia.hopper.mbarrier": ("init", "expect", "wait", "invalidate", "MBarrierLayout"),
            f"{lang}.nvidia.hopper": ("fence_async_shared",),
            lang: ("thread_barrier", "barrier", "allocate_shared_memory", "NVMMASharedLayout",
                   "BlockedLayout", "SliceLayout", "exp2", "static_range", "num_programs"),
            "triton.experimental.gluon.nvidia.hopper": ("TensorDescriptor",)}
    for module, names in used.items():
        listed = info.get(module, [])
        have = [n for n in names if isinstance(listed, list) and n in listed]
        print(f"names used from {module}: present {have}; absent {[n for n in names if n not in have]}")


def check_against_float64(gs, dtypes, gen) -> list[dict]:
    """Run the kernel on fresh random rows and compare with float64, element by element."""
    import torch

    rows_out = []
    unit = {torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}
    def randn(*shape):
        return torch.randn(*shape, generator=gen, device="cuda")

    for dtype in dtypes:
        tol_rel = 4 * unit[dtype]
        tol_abs = 1e-7 if dtype == torch.float16 else 1e-37  # fp16 subnormals; fp32's flush-to-zero range
        cases = []
        for rows, n in (CHECK_SHAPES if dtype == dtypes[0] else CHECK_SHAPES[:5]):
            cases.append((f"{rows}x{n}", lambda r=rows, c=n: randn(r, c) * 3))
        cases.append(("64x32000 with -inf", lambda: _with_neg_inf(randn(64, 32000), gen)))
        three = {"schedule": "three_pass"}
        cases.append(("64x32000 three_pass", lambda: randn(64, 32000) * 3, three))
        three_exp = {"schedule": "three_pass", "store_exp": True}
        cases.append(("64x32000 three_pass store_exp", lambda: randn(64, 32000) * 3, three_exp))
        cases.append(("40x50257 three_pass store_exp", lambda: randn(40, 50257) * 3, three_exp))
        cases.append(("64x32000 offset +-1000",
                      lambda: randn(64, 32000) + torch.linspace(-1000, 1000, 64, device="cuda")[:, None]))
        # Strided rows: the views keep their row stride (converted to the dtype before slicing).
        cases.append(("96x20000 strided (row stride 20024)", lambda: randn(96, 20024).to(dtype)[:, :20000]))
        cases.append(("33x9999 strided (row stride 10001, flat view)",
                      lambda: randn(33, 10001).to(dtype)[:, :9999]))
        for label, make, *options in cases:
            name = f"check {label} {gs.DTYPE_NAMES[dtype]}"
            try:
                x = make().to(dtype)  # no copy when already in dtype: a strided view stays strided
                y = torch.full((x.shape[0], x.shape[1]), float("nan"), dtype=dtype, device="cuda")
                gs.softmax(x, out=y, **(options[0] if options else {}))
                torch.cuda.synchronize()
                ref = gs.softmax_reference(x)
                err = (y.double().cpu() - ref).abs()
                bound = tol_rel * ref.abs() + tol_abs
                bad = ~(err <= bound)  # NaN fails
                worst = float((err / bound).max()) if not bad.any() else float("inf")
                row = {"check": label, "dtype": gs.DTYPE_NAMES[dtype], "ok": not bool(bad.any()),
                       "max_abs_err": float(err.nan_to_num(float("inf")).max()),
                       "worst_err_over_bound": worst}
                if bad.any():
                    i, j = (int(v) for v in bad.nonzero()[0])
                    row["first_bad"] = [i, j, float(y[i, j]), float(ref[i, j])]
                    row["bad_count"] = int(bad.sum())
                print(f"{name}: {'ok' if row['ok'] else 'WRONG'}  max|err| {row['max_abs_err']:.3g}  "
                      f"err/bound {worst:.3g}" + (f"  first bad (row, col, ours, ref) {row['first_bad']}, "
                                                  f"{row['bad_count']} bad" if not row["ok"] else ""))
            except Exception as exc:  # noqa: BLE001
                row = {"check": label, "dtype": gs.DTYPE_NAMES[dtype], "ok": False,
                       "error": f"{type(exc).__name__}: {exc}"}
                print(f"{name}: FAILED {row['error'][:600]}")
                traceback.print_exc(limit=3)
            rows_out.append(row)
    return rows_out


def _with_neg_inf(x, gen):
    import torch

    mask = torch.rand(x.shape, generator=gen, device="cuda") < 0.3
    x = x.masked_fill(mask, float("-inf"))
    x[:, 0] = 1.0  # no row of -inf only (torch gives NaN there, so do we)
    return x


def expected_errors(gs) -> list[dict]:
    """Inputs the wrapper must refuse with a ValueError."""
    import torch

    out = []
    cases = {
        "CPU tensor": lambda: gs.softmax(torch.randn(4, 64)),
        "row too long (131072 fp16)": lambda: gs.softmax(torch.randn(2, 131072, device="cuda").half()),
        "column stride 2": lambda: gs.softmax(torch.randn(64, 64, device="cuda").half()[:, ::2]),
        "3-D input": lambda: gs.softmax(torch.randn(2, 4, 64, device="cuda").half()),
    }
    for label, call in cases.items():
        try:
            call()
            result = "no error (expected ValueError)"
        except ValueError as exc:
            result = f"ValueError: {exc}"
        except Exception as exc:  # noqa: BLE001
            result = f"{type(exc).__name__} (expected ValueError): {exc}"
        print(f"error case {label}: {result[:300]}")
        out.append({"error_case": label, "result": result})
    return out


def _run_checked(fn, y, ref) -> float:
    """Run ``fn`` once into ``y`` (first filled with NaN); its largest error on the first 8 rows against
    ``ref`` (float64), or RuntimeError when that passes 0.01 or a NaN is left anywhere in ``y``."""
    import torch

    y.fill_(float("nan"))
    fn()
    torch.cuda.synchronize()
    err = float((y[:8].double().cpu() - ref).abs().max())
    if not err <= 0.01 or bool(torch.isnan(y).any()):
        raise RuntimeError(f"wrong result: max |err| {err} on the first rows, or NaN")
    return err


def time_shapes(gs, sm, dtypes, shapes, quick, sweep, gen) -> list[dict]:
    import torch

    from gpuperf.benchmark import time_callable

    warmup_ms, rep_ms = (10.0, 40.0) if quick else (25.0, 100.0)
    rows = []
    for dtype in dtypes:
        dname = gs.DTYPE_NAMES[dtype]
        for n_rows, n_cols in shapes:
            shape = f"{n_rows}x{n_cols}"
            try:
                x = (torch.randn(n_rows, n_cols, generator=gen, device="cuda") * 3).to(dtype)
                y = torch.empty_like(x)
            except Exception as exc:  # noqa: BLE001
                print(f"{dname} {shape}: allocation failed: {exc}")
                continue
            moved = 2 * x.numel() * x.element_size()
            ref = gs.softmax_reference(x[:8])
            launches = {}
            variants = {"copy": lambda: y.copy_(x),
                        "gluon": lambda: gs.softmax(x, out=y),
                        "gluon 3pass store_exp": lambda: gs.softmax(x, out=y, schedule="three_pass",
                                                                    store_exp=True),
                        "triton auto": lambda: sm.softmax(x, out=y, method="auto")}
            if sweep and dtype == dtypes[0] and n_cols in (32000, 65536):
                for launch in LAUNCHES:
                    warps, pps, chunk = launch
                    variants[f"gluon w{warps} p{pps or '-'} c{chunk or '-'}"] = (
                        lambda w=warps, p=pps, c=chunk: gs.softmax(x, out=y, num_warps=w, programs_per_sm=p,
                                                                   chunk_cols=c))
                    launches[f"gluon w{warps} p{pps or '-'} c{chunk or '-'}"] = launch
            copy_s = None
            launches["gluon"] = launches["gluon 3pass store_exp"] = (None, None, None)
            for name, fn in variants.items():
                row = {"dtype": dname, "rows": n_rows, "n": n_cols, "variant": name, "bytes_moved": moved}
                try:
                    if name != "copy":
                        row["max_abs_err_first_rows"] = _run_checked(fn, y, ref)
                    t = time_callable(fn, warmup_ms, rep_ms)
                    row["time_s"] = t
                    row["bytes_per_s"] = moved / t
                    if name == "copy":
                        copy_s = t
                    row["ratio_to_copy"] = copy_s / t if copy_s else None
                    if name in launches:
                        w, p, c = launches[name]
                        plan = gs.plan_for(x, num_warps=w, programs_per_sm=p, chunk_cols=c)
                        row.update(chunks_per_row=plan.chunks_per_row, slots=plan.slots,
                                   chunk_cols=plan.chunk_cols, num_warps=plan.num_warps,
                                   programs_per_sm=plan.programs_per_sm, flat=plan.flat,
                                   bytes_in_flight_per_sm=gs.bytes_in_flight_per_sm(plan))
                    ratio = f"{row['ratio_to_copy']:.3f}" if row["ratio_to_copy"] else "-"
                    print(f"{dname} {shape:>11} {name:<22} {t * 1e6:9.1f} us {moved / t / 1e12:6.2f} TB/s "
                          f"ratio to copy {ratio}", flush=True)
                except Exception as exc:  # noqa: BLE001
                    row["error"] = f"{type(exc).__name__}: {exc}"
                    print(f"{dname} {shape:>11} {name:<22} FAILED {row['error'][:600]}", flush=True)
                    traceback.print_exc(limit=3)
                rows.append(row)
            del x, y
            torch.cuda.empty_cache()
    return rows


CONFIRM_SHAPES = ((4096, 32000), (2048, 65536), (8192, 16384), (2048, 40000), (1024, 100000))


def confirm(gs, sm, dtypes, gen, rounds: int = 3) -> list[dict]:
    """Copy, Triton ``auto``, the Gluon default launch, two alternatives and the default again, timed in
    interleaved rounds (each round times every variant once, in a shuffled order; ratios are to the same
    round's copy), after one untimed timing of each; plus the host time per call of the default."""
    import statistics

    import torch

    from gpuperf.benchmark import time_callable, time_host_callable

    rows = []
    for n_rows, n_cols in CONFIRM_SHAPES:
        for dtype in dtypes:
            dname = gs.DTYPE_NAMES[dtype]
            label = f"{dname} {n_rows}x{n_cols}"
            x = (torch.randn(n_rows, n_cols, generator=gen, device="cuda") * 3).to(dtype)
            y = torch.empty_like(x)
            ref = gs.softmax_reference(x[:8])
            default = gs.plan_for(x)
            same = {"chunk_cols": default.chunk_cols, "programs_per_sm": default.programs_per_sm}
            launches = {"gluon default": {}}
            if default.programs_per_sm > 1:  # the close alternatives: other warps ...
                launches["gluon w8"] = {"num_warps": 8, **same}
                launches["gluon w16"] = {"num_warps": 16, **same}
            else:  # ... or the other chunks of 8, 16 and 32 KiB
                for kib in (8, 16, 32):
                    cols = kib * 1024 // x.element_size()
                    if cols != default.chunk_cols:
                        launches[f"gluon c{cols}"] = {"num_warps": 8, "chunk_cols": cols,
                                                      "programs_per_sm": 1}
            # The same call again, last: the same compiled kernel on the same tensors, so any difference
            # from "gluon default" is the measurement's (gluon run 3 saw fp16 defaults 20-60 % slower than
            # the same launch in bf16 or given as options).
            launches["gluon default again"] = {}
            variants = {"copy": lambda: y.copy_(x),
                        "triton auto": lambda: sm.softmax(x, out=y, method="auto")}
            for name, kw in launches.items():
                variants[name] = lambda kw=kw: gs.softmax(x, out=y, **kw)
            usable = {}
            for name, fn in variants.items():
                try:
                    if name != "copy":
                        _run_checked(fn, y, ref)
                    usable[name] = fn
                except Exception as exc:  # noqa: BLE001
                    print(f"{label} {name}: FAILED {type(exc).__name__}: {str(exc)[:400]}", flush=True)
                    rows.append({"dtype": dname, "rows": n_rows, "n": n_cols, "variant": name,
                                 "error": f"{type(exc).__name__}: {exc}"})
            warm_until = time.time() + 0.2  # bring the clocks up before the first round
            while time.time() < warm_until:
                for _ in range(10):
                    y.copy_(x)
                torch.cuda.synchronize()
            times = {name: [] for name in usable}
            names = list(usable)
            for name in names:  # each launch timed once, untimed, right before the rounds
                time_callable(usable[name], 2.0, 5.0)
            shuffle = random.Random(n_rows * n_cols + len(dname))
            for _ in range(rounds):
                order = names[:]
                shuffle.shuffle(order)  # a fresh order each round: no launch always follows another
                for name in order:
                    times[name].append(time_callable(usable[name], 5.0, 25.0))
            host = {}
            for name in ("gluon default", "triton auto"):  # host time per call: is the timing host-bound?
                if name in usable:
                    try:
                        host[name] = time_host_callable(usable[name], calls=50, batches=3, warmup_calls=5)
                    except Exception as exc:  # noqa: BLE001
                        print(f"{label} {name}: host timing failed: {exc}", flush=True)
            copy_t = times.get("copy")
            for name in names:
                ratios = [c / t for c, t in zip(copy_t, times[name])] if copy_t else []
                row = {"dtype": dname, "rows": n_rows, "n": n_cols, "variant": name,
                       "time_s_rounds": times[name], "ratio_to_copy_rounds": ratios,
                       "ratio_to_copy": statistics.median(ratios) if ratios else None,
                       "host_s_per_call": host.get(name)}
                if name.startswith("gluon"):
                    plan = gs.plan_for(x, **launches[name])
                    row.update(chunk_cols=plan.chunk_cols, programs_per_sm=plan.programs_per_sm,
                               num_warps=plan.num_warps, slots=plan.slots, chunks_per_row=plan.chunks_per_row)
                rows.append(row)
                spread = f"{min(ratios):.3f}-{max(ratios):.3f}" if ratios else "-"
                launch = (f"  (chunk {row['chunk_cols']}, {row['programs_per_sm']} prog/SM, "
                          f"{row['num_warps']} warps)") if name.startswith("gluon") else ""
                host_text = f"  host {host[name] * 1e6:.0f} us/call" if name in host else ""
                print(f"{label:>16} {name:<19} {statistics.median(times[name]) * 1e6:8.1f} us  ratio "
                      f"{row['ratio_to_copy'] or 0:.3f} (rounds {spread}){launch}{host_text}", flush=True)
            del x, y
            torch.cuda.empty_cache()
    return rows


#: Launches of ``--profile`` (fp16), in launch order: (label, rows, n_cols, Gluon softmax options, or the
#: Triton method that "auto" took there before it took the Gluon kernel). "three_pass" is the launch of the
#: first design (gluon run 1's default).
PROFILE_LAUNCHES = tuple(
    (label, rows, n, opts) for rows, n, triton in ((2048, 65536, "split"), (4096, 32000, "fused"))
    for label, opts in (("three_pass", {"schedule": "three_pass", "programs_per_sm": 1, "num_warps": 8,
                                         "chunk_cols": 4096}),
                        ("pipelined", {}),
                        (f"triton {triton}", triton)))
#: Metrics of ``--profile`` besides the harness's (DRAM bytes, duration, spills; its sections give
#: occupancy, registers and the warp stalls).
PROFILE_METRICS = ("dram__throughput.avg.pct_of_peak_sustained_elapsed",
                   "smsp__inst_executed_pipe_xu.sum")


def profile_calls():
    """The launches of :data:`PROFILE_LAUNCHES` (GPU only)."""
    import torch

    from gpuperf.kernels import gluon_softmax as gs
    from gpuperf.kernels import softmax as sm

    calls = []
    for _, rows, n, opts in PROFILE_LAUNCHES:
        x = torch.randn(rows, n, device="cuda", dtype=torch.float16)
        y = torch.empty_like(x)
        if isinstance(opts, str):
            calls.append(lambda x=x, y=y, m=opts: sm.softmax(x, out=y, method=m))
        else:
            calls.append(lambda x=x, y=y, o=opts: gs.softmax(x, out=y, **o))
    return calls


def profile(out_dir: Path) -> list[dict]:
    """Nsight Compute on :data:`PROFILE_LAUNCHES` (this script's ``--profile-run`` under the harness's ncu
    command line); returns one row per launch and leaves the CSV report in ``out_dir``."""
    from gpuperf.benchmark import profile as prof

    command = prof.ncu_command([sys.executable, str(Path(__file__).resolve()), "--profile-run"],
                               metrics=(*prof.KERNEL_METRICS, *PROFILE_METRICS, *prof.STALL_METRICS),
                               base_units=True)
    print(" ".join(command), flush=True)
    csv = prof.run_ncu(command, out_dir / "ncu_gluon_softmax.csv", timeout_s=300)
    launches = prof.parse_ncu_csv(csv.read_text())
    if len(launches) != len(PROFILE_LAUNCHES):
        raise RuntimeError(f"{csv}: {len(launches)} launches, {len(PROFILE_LAUNCHES)} expected")
    rows = []
    for launch, (label, n_rows, n, _) in zip(launches, PROFILE_LAUNCHES):
        summary = prof.kernel_summary(launch)
        values = prof.metric_values(launch)
        row = {"launch": label, "dtype": "fp16", "rows": n_rows, "n": n, "input_bytes": n_rows * n * 2,
               **summary, **{m: values.get(m) for m in PROFILE_METRICS}}
        rows.append(row)
        stalls = sorted(summary["stalls"].items(), key=lambda kv: -kv[1])[:3]
        us, read, write = (summary[k] or 0 for k in ("duration_ns", "dram_read_bytes", "dram_write_bytes"))
        print(f"{n_rows}x{n} {label:<12} {summary['kernel_name'][:28]:<28} {us / 1e3:7.1f} us  "
              f"DRAM read {read / 1e6:6.1f} MB write {write / 1e6:6.1f} MB  "
              f"regs {summary['registers_per_thread']}  occupancy {summary['achieved_occupancy_pct']}%  "
              f"top stalls {stalls}", flush=True)
    return rows


def compiled_info(gs, dtypes, shapes, gen) -> list[dict]:
    """Registers, spills and shared memory of the compiled kernel per shape (Triton's compiled kernel)."""
    import torch

    out = []
    for dtype in dtypes[:1]:
        for n_rows, n_cols in shapes:
            try:
                x = torch.randn(min(n_rows, 264), n_cols, generator=gen, device="cuda").to(dtype)
                y = torch.empty_like(x)
                plan = gs.plan_for(x)
                k = gs._launch(x, y, plan)
                info = {"dtype": gs.DTYPE_NAMES[dtype], "n": n_cols, "n_regs": getattr(k, "n_regs", None),
                        "n_spills": getattr(k, "n_spills", None),
                        "shared_bytes": getattr(getattr(k, "metadata", None), "shared", None),
                        "plan": {f: getattr(plan, f) for f in (
                            "chunk_cols", "chunks_per_row", "slots", "lookahead_chunks", "programs_per_sm",
                            "num_warps", "flat")}}
            except Exception as exc:  # noqa: BLE001
                info = {"n": n_cols, "error": f"{type(exc).__name__}: {exc}"}
            print(f"compiled {info}")
            out.append(info)
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter timings")
    parser.add_argument("--profile", action="store_true",
                        help="only Nsight Compute on PROFILE_LAUNCHES (needs ncu and $OUT for the report)")
    parser.add_argument("--profile-run", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--record", type=Path, default=None, metavar="DIR",
                        help="with --profile: also save the rows as the recorded run "
                             "DIR/softmax_gluon_profile_h200.json (gpuperf.records.save_run)")
    parser.add_argument("--confirm", action="store_true",
                        help="only the interleaved confirmation: copy, Triton auto, the Gluon default and "
                             "two alternatives at CONFIRM_SHAPES, fp16 and bf16, 3 rounds")
    parser.add_argument("--sweep", action="store_true",
                        help="also time LAUNCHES (warps, programs per SM) at 32000 and 65536 columns")
    args = parser.parse_args(argv)
    t0 = time.time()
    record: dict = {}
    if args.profile_run:  # the launches ncu profiles (called by --profile)
        from gpuperf.benchmark.ncu import profile_window

        profile_window(profile_calls())
        return 0
    if args.profile:
        out_dir = Path(os.environ.get("OUT") or ".")
        record["profile"] = profile(out_dir)
        _write(record, argv, "gluon_softmax_profile.json")
        if args.record is not None:
            from gpuperf.records import provenance, save_run

            command = "python bench/gluon_softmax_probe.py " + " ".join(argv)
            path = save_run("softmax_gluon_profile_h200", record["profile"], provenance(command), args.record)
            print(f"wrote {path}")
        print(f"\nprobe took {time.time() - t0:.1f} s")
        return 0
    section("Gluon on this machine")
    try:
        info = gluon_inventory()
        print_inventory(info)
        record["inventory"] = info
    except Exception as exc:  # noqa: BLE001
        print(f"inventory failed: {exc}")
    import torch

    from gpuperf.kernels import gluon_softmax as gs
    from gpuperf.kernels import softmax as sm

    status = gs.available()
    print(f"gluon_softmax.available(): {status.ok} {status.reason}")
    record["available"] = [status.ok, status.reason]
    if torch.cuda.is_available():
        print(f"device {torch.cuda.get_device_name()}, capability {torch.cuda.get_device_capability()}, "
              f"torch {torch.__version__}")
    gen = torch.Generator(device="cuda").manual_seed(20261201)
    dtypes = (torch.float16, torch.bfloat16)
    if args.confirm:
        section("confirmation: interleaved rounds (ratio = the round's copy time / this time; median)")
        record["confirm"] = confirm(gs, sm, dtypes, gen)
        print(f"\nprobe took {time.time() - t0:.1f} s")
        _write(record, argv, "gluon_softmax_confirm.json")
        return 0
    section("compiled kernel (fp16, first launch of each shape)")
    record["compiled"] = compiled_info(gs, dtypes, SHAPES, gen)
    section("against float64 (seed 20261201)")
    record["checks"] = check_against_float64(gs, dtypes, gen)
    section("errors")
    record["errors"] = expected_errors(gs)
    section("times (ratio = copy's time / this time; both move 2 n b)")
    record["times"] = time_shapes(gs, sm, dtypes, SHAPES, args.quick, args.sweep, gen)
    section("summary: ratio to the same-run copy")
    summary = {}
    for row in record["times"]:
        if row.get("ratio_to_copy") and row["variant"] in ("gluon", "gluon 3pass store_exp", "triton auto"):
            key = f"{row['variant']} {row['dtype']}"
            summary.setdefault((row["rows"], row["n"]), {})[key] = row["ratio_to_copy"]
    for (rows, n), ratios in summary.items():
        print(f"{rows:>6} x {n:<6} " + "  ".join(f"{k} {v:.3f}" for k, v in sorted(ratios.items())))
    print(f"\nprobe took {time.time() - t0:.1f} s")
    _write(record, argv, "gluon_softmax_probe.json")
    return 0


def _write(record: dict, argv: list[str], name: str) -> None:
    out_dir = os.environ.get("OUT")
    if not out_dir:
        return
    try:
        from gpuperf.records import provenance

        command = "python bench/gluon_softmax_probe.py " + " ".join(argv)
        record["provenance"] = provenance(command.strip())
    except Exception as exc:  # noqa: BLE001
        record["provenance"] = {"error": str(exc)}
    path = Path(out_dir) / name
    path.write_text(json.dumps(record, indent=1, default=str))
    print(f"wrote {path}")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
