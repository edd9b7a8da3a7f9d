"""Part I measurements on a CUDA GPU (chapters 02 and 03), recorded with provenance.

A standalone script, not a ``gpuperf.benchmark`` case: pointer chasing reads the SM clock inside the kernel
and the divergence counters come from Nsight Compute, neither of which is "time a callable". The kernels are
CUDA C++ in ``bench/part1_kernels.cu``, built at run time by CuPy (NVRTC).

Usage (from the repository root, on a GPU machine with CuPy)::

    python bench/part1_gpu.py --out-dir DIR            # latency, bytes-in-flight sweep, divergence timings
    python bench/part1_gpu.py --out-dir book/data --skip sweep divergence   # latency only (~10 s)
    python bench/part1_gpu.py --out-dir DIR --skip chase sweep --ncu RAW   # divergence, with ncu counters

``--ncu RAW`` runs, after the timings, ``--ncu-divergence`` (each divergence case launched once) under the
harness's ncu command line (``gpuperf.benchmark.profile.ncu_command``: every ``div_`` kernel from the start,
the metrics of :data:`DIVERGENCE_METRICS`) into ``RAW/ncu.csv``, then ``--merge-ncu RAW/ncu.csv`` (the
counters into ``divergence_h200.json``, each report kernel paired with its case by
``profile.pair_launches``). Times are CUDA events around each launch (``gpuperf.benchmark.event_times_s``
on CuPy's stream); provenance and recording are ``gpuperf.records``'s.

Every kernel's output is checked before its timing is kept: the chase's final index against the cycle
it walks, the sweep's XOR of everything read against an independent CuPy reduction, the divergence kernels
against a float64 NumPy evaluation of the same arithmetic; a wrong chase, or latencies out of order,
stops the run before anything is written. The pointer chase is the course's one latency method: chapters
02, 04 and 05 all read ``pointer_chase_<dev>.json``. It writes ``pointer_chase_<dev>.json``,
``bytes_in_flight_<dev>.json`` and ``divergence_<dev>.json``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from gpuperf import simt  # noqa: E402

KERNELS = (ROOT / "bench" / "part1_kernels.cu").read_text()
BODY = 512
LOOP_BODY = 64
N_DIV = 1 << 24  # threads of each divergence kernel (a multiple of every block size used)
DIV_BLOCK = 256


def log(*args) -> None:
    print(*args, file=sys.stderr, flush=True)


def kernel(name: str, **defines):
    import cupy as cp

    opts = tuple(f"-D{k}={v}" for k, v in defines.items()) + ("-std=c++17",)
    return cp.RawKernel(KERNELS, name, options=opts)


def event_time_s(fn, reps: int = 1) -> list[float]:
    """Device time of each of ``reps`` launches (the harness's CUDA events on CuPy's stream)."""
    from gpuperf.benchmark import event_times_s

    return event_times_s(fn, reps=reps, backend="cupy")


# ------------------------------------------------------------------------------------------------
# Pointer chase
# ------------------------------------------------------------------------------------------------


def sm_clock_hz() -> float:
    import cupy as cp

    k = kernel("spin_cycles")
    out = cp.zeros(1, dtype=cp.int64)
    target = 200_000_000
    k((1,), (1,), (np.int64(1000), out))
    cp.cuda.Device().synchronize()
    (t,) = event_time_s(lambda: k((1,), (1,), (np.int64(target), out)))
    return float(out.get()[0]) / t


#: Working sets up to this size are chased twice: a full first pass, then a timed pass over the same lines.
FULL_WARM_BYTES = 96 << 20
#: Larger working sets (HBM) start from a flushed L2: this many bytes are written between the chain's
#: construction and the chase, so that no line of the chain is still in the 60 MiB L2.
FLUSH_BYTES = 256 << 20


def pointer_chase(steps: int = 1 << 15) -> list[dict]:
    """Latency of one dependent load over working sets of 4 KiB to 1 GiB (global) and in shared memory.

    The course's one latency method (chapters 02, 04 and 05 read its rows). Up to ``FULL_WARM_BYTES`` the
    first pass walks the whole cycle, so the timed pass revisits lines that pass touched: a cache level is
    measured warm. The first pass is timed too (``first_pass_cycles_per_load``): its loads are first touches
    by this SM. Beyond it, L2 is flushed first and a short first pass only warms the TLBs' neighbourhood.
    Raises ``RuntimeError`` if a chase ends anywhere but where its cycle says.
    """
    import cupy as cp

    rows = []
    line_bytes = 128
    words_per_line = line_bytes // 4
    sizes = sorted({int(2 ** (e / 2)) // line_bytes * line_bytes for e in range(2 * 12, 2 * 30 + 1)})
    max_bytes = sizes[-1]
    next_buf = cp.zeros(max_bytes // 4, dtype=cp.uint32)
    flush = cp.empty(FLUSH_BYTES, dtype=cp.uint8)
    out = cp.zeros(2, dtype=cp.uint32)
    cycles = cp.zeros(2, dtype=cp.int64)
    kg = kernel("chase_global")
    rng = cp.random.RandomState(1234)
    for size in sizes:
        n_lines = size // line_bytes
        perm = rng.permutation(n_lines).astype(cp.uint32) * words_per_line
        # One cycle through every line (perm[i] -> perm[i+1]), built apart and then copied in whole: every
        # word of every line is written, so no L2 sector of the chain holds a partial write that a first read
        # would have to complete from DRAM (L2 allocates on write with byte masks; review N-E1, 2026-12-04).
        chain = cp.zeros(n_lines * words_per_line, dtype=cp.uint32)
        chain[perm.astype(cp.int64)] = cp.roll(perm, -1)
        next_buf[:chain.size] = chain
        del chain
        full = size <= FULL_WARM_BYTES
        warm = n_lines if full else 4096
        if not full:
            flush.fill(1)
        start = perm[0].item()
        (t,) = event_time_s(lambda: kg((1,), (1,), (next_buf, np.uint32(start), np.int32(warm),
                                                     np.int32(steps), out, cycles)))
        got, got_warm = (int(v) for v in out.get())  # the kernel writes out[0] last, out[1] after warm-up
        ok = (got_warm == int(perm[warm % n_lines].item())
              and got == int(perm[(warm + steps) % n_lines].item()))
        # with a full first pass the timed pass starts where the cycle starts: every line it loads was
        # loaded by the first pass (steps may wrap round the cycle, never past lines not yet touched)
        revisits = full and warm % n_lines == 0
        timed, first = (float(v) for v in cycles.get())
        rows.append({"level": "global", "working_set_bytes": size, "steps": steps, "warm_steps": warm,
                     "cycles_per_load": timed / steps, "first_pass_cycles_per_load": first / warm,
                     "timed_pass_revisits_first_pass": revisits, "l2_flushed_before": not full,
                     "kernel_time_s": t, "correct": ok})
        log(f"chase {size / 2**20:10.3f} MiB: {timed / steps:7.1f} cycles/load "
            f"(first pass {first / warm:7.1f}) {'ok' if ok else 'WRONG'}")
        if not ok:
            raise RuntimeError(f"the chase over {size} bytes ended at the wrong index: nothing recorded")
    del flush
    ks = kernel("chase_shared")
    for size in (1 << 12, 1 << 14, 1 << 15):
        n = size // 4
        perm = rng.permutation(n).astype(cp.uint32)
        chain = cp.zeros(n, dtype=cp.uint32)
        chain[perm.astype(cp.int64)] = cp.roll(perm, -1)
        start = perm[0].item()
        ks((1,), (256,), (chain, np.int32(n), np.uint32(start), np.int32(steps), out, cycles), shared_mem=size)
        cp.cuda.Device().synchronize()
        expected = int(perm[(64 + steps) % n].item())
        ok = int(out.get()[0]) == expected
        if not ok:
            raise RuntimeError(f"the shared-memory chase over {size} bytes ended at the wrong index")
        cyc = float(cycles.get()[0])
        rows.append({"level": "shared", "working_set_bytes": size, "steps": steps, "warm_steps": 64,
                     "cycles_per_load": cyc / steps, "kernel_time_s": None, "correct": ok})
        log(f"chase shared {size} B: {cyc / steps:6.1f} cycles/load {'ok' if ok else 'WRONG'}")
    del next_buf
    return rows


# ------------------------------------------------------------------------------------------------
# Bandwidth against bytes in flight
# ------------------------------------------------------------------------------------------------


def xor_columns(words):
    import cupy as cp

    red = cp.ReductionKernel("T x", "T y", "x", "a ^ b", "y = a", "0", "xor_reduce")
    return red(words, axis=0)


def bytes_in_flight_sweep(n_sms: int, latency_guess_s: float = 700e-9) -> list[dict]:
    import cupy as cp

    src_bytes = 1 << 30
    src = cp.random.RandomState(7).randint(0, 2**31 - 1, size=src_bytes // 4).astype(cp.int32)
    flush = cp.empty(256 << 20, dtype=cp.uint8)
    rows = []
    for ilp in (1, 2, 4, 8, 16):
        k = kernel("stream_read", ILP=ilp)
        for warps in (1, 2, 4, 8, 16, 32, 64):
            blocks_per_sm = 2 if warps == 64 else 1
            block = 32 * warps // blocks_per_sm
            smem = 100 * 1024 if blocks_per_sm == 2 else 120 * 1024
            try:
                k.max_dynamic_shared_size_bytes = smem
                k.preferred_shared_memory_carveout = 100
            except Exception as exc:  # noqa: BLE001 - record and go on without the limit
                log(f"could not set shared memory attributes: {exc!r}")
            grid = n_sms * blocks_per_sm
            in_flight = grid * block * ilp * 16
            predicted = min(4.3e12, in_flight / latency_guess_s)
            grid_stride_bytes = grid * block * ilp * 16
            target = int(np.clip(predicted * 0.01, 8 << 20, src_bytes))
            n_iters = max(1, target // grid_stride_bytes)
            read_bytes = n_iters * grid_stride_bytes
            sink = cp.zeros((grid * block, 4), dtype=cp.int32)
            smid = cp.zeros(grid, dtype=cp.uint32)
            args = (src, np.int64(n_iters), sink, smid)
            row = {"warps_per_sm": warps, "loads_in_flight_per_thread": ilp, "bytes_per_load": 16,
                   "blocks_per_sm": blocks_per_sm, "threads_per_block": block, "grid": grid,
                   "bytes_in_flight_per_sm": warps * 32 * ilp * 16, "bytes_read": read_bytes}

            def launch():
                k((grid,), (block,), args, shared_mem=smem)

            try:
                row["registers_per_thread"] = int(k.attributes["num_regs"])
                row["occupancy_blocks_per_sm"] = int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                    k.kernel.ptr, block, smem))
                launch()
                cp.cuda.Device().synchronize()
            except Exception as exc:  # noqa: BLE001 - e.g. too many registers for 1024 threads
                row["error"] = repr(exc)
                rows.append(row)
                log(f"sweep warps {warps:2d} ilp {ilp:2d}: not run ({exc!r})")
                continue
            ok = bool(cp.all(xor_columns(sink) == xor_columns(src[: read_bytes // 4].reshape(-1, 4))))
            counts = np.bincount(smid.get().astype(np.int64), minlength=n_sms)
            placement_ok = bool((counts == blocks_per_sm).sum() == n_sms)
            times = []
            for _ in range(3):
                flush.fill(1)
                times += event_time_s(launch)
            t = float(np.median(times))
            row.update({"time_s": t, "bytes_per_s": read_bytes / t, "times_s": times, "correct": ok,
                        "one_block_set_per_sm": placement_ok})
            rows.append(row)
            log(f"sweep warps {warps:2d} ilp {ilp:2d}: {read_bytes / t / 1e12:6.3f} TB/s "
                f"{'ok' if ok else 'WRONG'} placement {'ok' if placement_ok else 'UNEVEN'}")
            del sink
    # same-run reference: a device-to-device copy of 1 GiB (bytes read + written)
    dst = cp.empty_like(src)
    cp.copyto(dst, src)
    copy_times = []
    for _ in range(5):
        flush.fill(1)
        copy_times += event_time_s(lambda: cp.copyto(dst, src))
    ok = bool(cp.array_equal(dst, src))
    t = float(np.median(copy_times))
    rows.append({"reference": "copy", "bytes_moved": 2 * src_bytes, "time_s": t,
                 "bytes_per_s": 2 * src_bytes / t, "correct": ok})
    log(f"copy reference: {2 * src_bytes / t / 1e12:.3f} TB/s")
    return rows


# ------------------------------------------------------------------------------------------------
# Divergence
# ------------------------------------------------------------------------------------------------


def divergence_cases() -> list[dict]:
    """The cases, in launch order; each names its kernel and inputs (made by gpuperf.simt)."""
    n = N_DIV
    cases = [{"name": "uniform (all then)", "kernel": "div_branch", "pattern": "uniform", "p": 1.0},
             {"name": "uniform (all else)", "kernel": "div_branch", "pattern": "none", "p": 0.0},
             {"name": "alternating", "kernel": "div_branch", "pattern": "alternating", "p": 0.5},
             {"name": "warp-alternating", "kernel": "div_branch", "pattern": "warp_alternating", "p": 0.5},
             {"name": "sorted p=0.5", "kernel": "div_branch", "pattern": "sorted", "p": 0.5}]
    for p in (0.01, 0.1, 0.5):
        cases.append({"name": f"random p={p}", "kernel": "div_branch", "pattern": "random", "p": p})
    cases += [{"name": "nested random 0.5/0.5", "kernel": "div_nested", "pattern": "random", "p": 0.5},
              {"name": "nested alternating", "kernel": "div_nested", "pattern": "alternating", "p": 0.5},
              {"name": "loop uniform 4", "kernel": "div_loop", "trips": "uniform4"},
              {"name": "loop uniform 8", "kernel": "div_loop", "trips": "uniform8"},
              {"name": "loop long-tailed, arrival order", "kernel": "div_loop", "trips": "long_tailed"},
              {"name": "loop long-tailed, sorted", "kernel": "div_loop", "trips": "long_tailed_sorted"}]
    for c in cases:
        c["n_threads"] = n
    return cases


def case_inputs(case: dict) -> dict[str, np.ndarray]:
    """The case's per-thread inputs, made by gpuperf.simt so that the simulator sees the same branches."""
    return simt.h200_case_inputs(case["kernel"], case.get("pattern"), case.get("p"), case.get("trips"),
                                 case["n_threads"])


def reference_output(case: dict, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """float64 evaluation of the kernels' arithmetic (BODY-long chains), vectorised over threads."""
    n = case["n_threads"]
    x0 = (np.arange(n) & 1023) * 0.0009765625

    def fma_chain(x, a, b, steps=BODY):
        # x_k = a^k x + b (1 - a^k) / (1 - a)
        ak = a ** steps
        return ak * x + b * (1 - ak) / (1 - a)

    if case["kernel"] == "div_branch":
        c = inputs["c"]
        return np.where(c, fma_chain(x0, 0.9990234375, 0.0009765625), x0 * 1.0009765625 ** BODY)
    if case["kernel"] == "div_nested":
        c1, c2 = inputs["c1"], inputs["c2"]
        a = fma_chain(x0, 0.9990234375, 0.0009765625)
        inner = np.where(c2, fma_chain(a, 0.998046875, 0.001953125), a * 1.0009765625 ** BODY)
        return np.where(c1, inner, x0 * 0.9990234375 ** BODY)
    t = inputs["trips"]
    return fma_chain(x0, 0.9990234375, 0.0009765625, steps=LOOP_BODY * t)


def run_divergence(timing: bool) -> list[dict]:
    import cupy as cp

    kernels = {"div_branch": kernel("div_branch", BODY=BODY),
               "div_nested": kernel("div_nested", BODY=BODY),
               "div_loop": kernel("div_loop", LOOP_BODY=LOOP_BODY)}
    rows = []
    for case in divergence_cases():
        inputs = case_inputs(case)
        n = case["n_threads"]
        out = cp.full(n, cp.nan, dtype=cp.float32)
        if case["kernel"] == "div_loop":
            dev_inputs = [cp.asarray(inputs["trips"].astype(np.int32))]
        else:
            dev_inputs = [cp.asarray(inputs[k].astype(np.uint8)) for k in sorted(inputs)]
        args = (*dev_inputs, out, np.int32(n))
        k = kernels[case["kernel"]]

        def launch():
            k((n // DIV_BLOCK,), (DIV_BLOCK,), args)

        launch()
        cp.cuda.Device().synchronize()
        row = {k_: v for k_, v in case.items()}
        if timing:
            got = out.get().astype(np.float64)
            ref = reference_output(case, inputs)
            rel = float(np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-30)))
            row["max_rel_error"] = rel
            row["correct"] = bool(np.isfinite(got).all() and rel < 1e-3)
            for _ in range(3):
                launch()
            times = event_time_s(launch, reps=10)
            row["time_s"] = float(np.median(times))
            row["times_s"] = times
            log(f"{case['name']:34s} {row['time_s'] * 1e6:9.1f} us rel.err {rel:.1e} "
                f"{'ok' if row['correct'] else 'WRONG'}")
        rows.append(row)
    return rows


#: The counters of the divergence profile (``--ncu``).
DIVERGENCE_METRICS = ("smsp__thread_inst_executed_per_inst_executed.ratio", "smsp__inst_executed.sum",
                      "smsp__thread_inst_executed.sum")


def ncu_command(raw: Path) -> list[str]:
    """The ncu command line of the divergence counters (every ``div_`` launch of ``--ncu-divergence``)."""
    from gpuperf.benchmark import profile

    program = [sys.executable, __file__, "--ncu-divergence", "--out-dir", str(raw)]
    return profile.ncu_command(program, sections=(), metrics=DIVERGENCE_METRICS, window=False,
                               kernel_regex="^div_")


def merge_ncu(path: Path, report: Path) -> int:
    """Pair the report's kernels with the divergence rows of the recorded run at ``path`` (same order) and
    write their counters into it (``ncu``: {metric: value}); 1 (and nothing written) when they disagree."""
    from gpuperf.benchmark import profile

    run = json.loads(path.read_text())
    rows = run["results"]
    try:
        pairs = profile.pair_launches(rows, profile.parse_ncu_csv(report.read_text()),
                                      lambda row, kernel: kernel.startswith(row["kernel"]))
    except ValueError as exc:
        log(f"not merged: {exc}")
        return 1
    for row, launch in pairs:
        row["ncu"] = profile.metric_values(launch)
    run["provenance"]["ncu_command"] = ("ncu --clock-control none --csv --kernel-name regex:^div_ --metrics "
                                        + ",".join(DIVERGENCE_METRICS) + " python bench/part1_gpu.py --ncu-divergence")
    path.write_text(json.dumps(run, indent=1) + "\n")
    log("merged ncu counters into", path)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--ncu-divergence", action="store_true", help="launch each divergence case once")
    parser.add_argument("--merge-ncu", type=Path, default=None, help="ncu CSV to merge into divergence JSON")
    parser.add_argument("--skip", nargs="*", default=[], choices=["chase", "sweep", "divergence"])
    parser.add_argument("--ncu", type=Path, default=None, metavar="RAW",
                        help="after the divergence timings, profile the divergence kernels under ncu (report "
                             "into RAW/ncu.csv) and merge the counters")
    args = parser.parse_args(argv)
    from gpuperf.records import provenance, save_run

    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.ncu_divergence:
        run_divergence(timing=False)
        return 0
    if args.merge_ncu is not None:
        return merge_ncu(args.out_dir / "divergence_h200.json", args.merge_ncu)

    import cupy as cp

    command = shlex.join(["python", "bench/part1_gpu.py", *argv])
    prov = provenance(command)
    prov["cupy"] = cp.__version__
    dev = cp.cuda.Device()
    n_sms = int(dev.attributes["MultiProcessorCount"])
    t0 = time.time()
    clock = sm_clock_hz()
    prov["sm_clock_hz_measured"] = f"{clock:.4g}"
    log(f"SM clock during the run: {clock / 1e6:.0f} MHz; {n_sms} SMs")
    if "chase" not in args.skip:
        rows = pointer_chase()
        clock_after = sm_clock_hz()
        for r in rows:
            r["latency_s"] = r["cycles_per_load"] / clock_after
        prov["sm_clock_hz_after_chase"] = f"{clock_after:.4g}"
        prov["chase_chain_written"] = "every word of every line (the chain copied in whole before each chase)"
        from gpuperf import hardware
        from gpuperf.results.latency import latency_levels

        lv = latency_levels(rows, hardware.get_accelerator("H200 SXM").l2_bytes, clock_after)
        log(f"levels (cycles): shared {lv.shared_cycles:.0f}, L1 {lv.l1_cycles:.0f}, "
            f"L2 {lv.l2_cycles:.0f}, HBM {lv.hbm_cycles:.0f}")
        if not (lv.shared_cycles < lv.l2_cycles and lv.l1_cycles < lv.l2_cycles < lv.hbm_cycles):
            raise SystemExit("latencies out of order (a chase that did not reach the level it names): "
                             "nothing recorded")
        save_run("pointer_chase_h200", rows, prov, data_dir=args.out_dir)
        log(f"chase done at {time.time() - t0:.1f} s")
    if "sweep" not in args.skip:
        rows = bytes_in_flight_sweep(n_sms)
        save_run("bytes_in_flight_h200", rows, prov, data_dir=args.out_dir)
        log(f"sweep done at {time.time() - t0:.1f} s")
    if "divergence" not in args.skip:
        rows = run_divergence(timing=True)
        save_run("divergence_h200", rows, dict(prov, body_instructions=str(BODY),
                                                 loop_body_instructions=str(LOOP_BODY)),
                 data_dir=args.out_dir)
        log(f"divergence done at {time.time() - t0:.1f} s")
        if args.ncu:
            from gpuperf.benchmark import profile

            report = profile.run_ncu(ncu_command(args.ncu), args.ncu / "ncu.csv")
            return merge_ncu(args.out_dir / "divergence_h200.json", report)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
