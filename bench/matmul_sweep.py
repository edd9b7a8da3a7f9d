"""Chapter 08's launch sweep (issue 15, job mm-1): TMA matmul launches vs cuBLAS, timed in interleaved rounds.

``JOB_OUT=RAW python bench/matmul_sweep.py`` (GPU, writes ``RAW/mm_sweep.json``): compiles every candidate launch
of :data:`CANDIDATES` in parallel processes first (Triton's on-disk cache is shared; a compiler crash loses
one candidate, not the run), checks each on an awkward shape and at 4096^3 against float64 (first and last
64 rows, NaN-poisoned output), then times cuBLAS and every candidate round-robin (order reversed every other
round) with the SM clock, temperature and power sampled during each timing.

``python bench/matmul_sweep.py collect SWEEP_JSON --provenance-from RECORDED_JSON`` turns that report into
the recorded run ``book/data/matmul_sweep_h200.json`` (one row per launch and shape), with the provenance
of a recorded run made by the same job (``bench/run.py`` in job mm-1; ``gpuperf.benchmark.profile.
provenance_of_job``). Times are the harness's (``gpuperf.benchmark.time_callable``, ``interleaved_order``,
the GPU-state sampler of the ``rounds`` option); ``MM_ONLY`` (comma-separated names) and ``MM_ROUNDS``
(default 3) narrow the sweep.
"""
import importlib.util
import json
import os
import statistics
import sys
import time

if importlib.util.find_spec("gpuperf") is None:  # a machine without `pip install -e .`
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))

OUT = os.environ.get("JOB_OUT", "/tmp/mm_out")
# name: ((BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, stages, warps, split epilogue), warp_specialize)
CANDIDATES = {
    "base":    ((128, 256, 64, 8, 3, 8, True), True),
    "s4":      ((128, 256, 64, 8, 4, 8, True), True),
    "g16":     ((128, 256, 64, 16, 3, 8, True), True),
    "g16-s4":  ((128, 256, 64, 16, 4, 8, True), True),
    "m256-s4": ((256, 128, 64, 8, 4, 8, True), True),
    "nows":    ((128, 256, 64, 8, 3, 8, True), False),
    "bk128":   ((128, 256, 128, 8, 2, 8, True), True),
    "m256":    ((256, 128, 64, 8, 3, 8, True), True),
    "nosplit": ((128, 256, 64, 8, 3, 8, False), True),
    # 4 warps: Triton 3.6's Hopper warp specialisation (add_hopper_warpspec) may split M over 2 consumer
    # warpgroups plus a producer; if it does not, 128 x 256 fp32 over 128 threads spills.
    "ws-w4":   ((128, 256, 64, 8, 3, 4, True), True),
    "ws-w4-g16-s4": ((128, 256, 64, 16, 4, 4, True), True),
}
CANDIDATES = {k: v for k, v in CANDIDATES.items() if k in os.environ.get("MM_ONLY", ",".join(CANDIDATES)).split(",")}
AWKWARD = (1025, 2056, 1032)
ROUNDS = int(os.environ.get("MM_ROUNDS", "3"))


def _compile_all(name):
    """Compile one candidate for both dtypes and both specialisations (run in its own process)."""
    import torch
    from gpuperf.kernels import matmul as mm
    for dtype_name in ("bfloat16", "float16"):
        for m, n, k in ((256, 256, 256), AWKWARD):
            dt = getattr(torch, dtype_name)
            a = torch.randn(m, k, device="cuda", dtype=dt); b = torch.randn(k, n, device="cuda", dtype=dt)
            out = torch.empty(m, n, device="cuda", dtype=dt)
            tile, ws = CANDIDATES[name]
            ck = mm._launch_tma_fixed(a, b, out, tile, ws)
            torch.cuda.synchronize()
            md = ck.metadata
            print(f"compiled {name} {dtype_name} {(m, n, k)}: regs {ck.n_regs}, spills {ck.n_spills}, "
                  f"shared {getattr(md, 'shared', None)}, num_warps {getattr(md, 'num_warps', None)}, "
                  f"threads {getattr(ck, 'num_warps', None)}", flush=True)


def _compile_in_subprocess(name):
    import subprocess
    t0 = time.time()
    try:
        r = subprocess.run([sys.executable, __file__, "--compile", name], capture_output=True, text=True,
                           timeout=50)
    except subprocess.TimeoutExpired as e:
        return name, time.time() - t0, -9, f"timeout: {str(e.stdout)[-500:]}"
    return name, time.time() - t0, r.returncode, (r.stdout + r.stderr)[-1500:]


def main():
    import torch, triton
    from gpuperf.kernels import matmul as mm
    from gpuperf.benchmark import interleaved_order, time_callable
    from gpuperf.benchmark._gpustate import GpuSampler, make_reader
    print(torch.__version__, triton.__version__, torch.cuda.get_device_name(), flush=True)
    try:
        import pynvml  # noqa: F401
        print("pynvml: present")
    except ImportError:
        print("pynvml: absent")
    reader = make_reader(0)
    print("gpu state source:", reader[0] if reader else None, reader[1]() if reader else None, flush=True)
    read = reader[1] if reader else None
    report = {"candidates": {k: [list(v[0]), v[1]] for k, v in CANDIDATES.items()}, "compile": [], "check": [],
              "timing": []}
    # 1. compile in parallel (4096^3 and 256^3 share a specialisation: every size a multiple of 16)
    t0 = time.time()
    broken = set()
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=14) as ex:
        for nm, sec, rc, tail in ex.map(_compile_in_subprocess, list(CANDIDATES)):
            report["compile"].append([nm, sec, rc, tail])
            print(f"compile {nm}: rc {rc}, {sec:.1f} s", flush=True)
            print("   " + "\n   ".join(l for l in tail.splitlines() if l.startswith("compiled")), flush=True)
            if rc != 0:
                broken.add(nm)
                print(f"COMPILE FAIL {nm}: {tail}", flush=True)
    print(f"compiled {len(CANDIDATES)} candidates in {time.time() - t0:.1f} s; broken: {sorted(broken)}", flush=True)
    names = [n for n in CANDIDATES if n not in broken]
    # 2. correctness: NaN-poisoned output, float64 reference
    gen = torch.Generator(device="cuda").manual_seed(1234)
    for dt in (torch.bfloat16, torch.float16):
        tol = 2.0**-8 if dt == torch.bfloat16 else 2.0**-10
        for shape in (AWKWARD, (4096, 4096, 4096)):
            m, n, k = shape
            a = torch.randn(m, k, device="cuda", dtype=dt, generator=gen)
            b = torch.randn(k, n, device="cuda", dtype=dt, generator=gen)
            rows = min(m, 64)
            ref = a[:rows].double() @ b.double()
            for nm in names:
                out = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
                tile, ws = CANDIDATES[nm]
                try:
                    mm._launch_tma_fixed(a, b, out, tile, ws)
                    torch.cuda.synchronize()
                    nan = int(torch.isnan(out).sum())
                    # the last rows too (edge tiles): a float64 product of the final 64 rows
                    ref_last = a[-rows:].double() @ b.double()
                    err = max(float((out[:rows].double() - ref).norm() / ref.norm()),
                              float((out[-rows:].double() - ref_last).norm() / ref_last.norm()))
                    ok = nan == 0 and err <= tol
                except Exception as e:  # noqa: BLE001
                    nan, err, ok = -1, float("nan"), False
                    print(f"RUN FAIL {nm} {dt} {shape}: {type(e).__name__}: {str(e)[:300]}", flush=True)
                report["check"].append([nm, str(dt), list(shape), nan, err, ok])
                if not ok:
                    broken.add(nm)
                    print(f"CHECK FAIL {nm} {dt} {shape}: unwritten {nan}, rel err {err:.3g}", flush=True)
    names = [n for n in names if n not in broken]
    print(f"checked; usable: {names}", flush=True)
    # 3. interleaved timing
    for dt in (torch.bfloat16, torch.float16):
        for s in (4096, 8192):
            a = torch.randn(s, s, device="cuda", dtype=dt, generator=gen)
            b = torch.randn(s, s, device="cuda", dtype=dt, generator=gen)
            out = torch.empty(s, s, device="cuda", dtype=dt)
            fns = {"cublas": lambda: torch.matmul(a, b, out=out)}
            for nm in names:
                fns[nm] = (lambda tile=CANDIDATES[nm][0], ws=CANDIDATES[nm][1]: mm._launch_tma_fixed(a, b, out, tile, ws))
            keys = list(fns)
            times = {k: [] for k in keys}; clocks = {k: [] for k in keys}; temps = {k: [] for k in keys}
            power = {k: [] for k in keys}
            for i in interleaved_order(len(keys), ROUNDS):
                with GpuSampler(read) as smp:
                    times[keys[i]].append(time_callable(fns[keys[i]], 10, 50))
                st = smp.summary()
                clocks[keys[i]].append(st["sm_clock_mhz"]); temps[keys[i]].append(st["temperature_c"])
                power[keys[i]].append(st["power_w"])
            flop = 2 * s**3
            ref = statistics.median(times["cublas"])
            print(f"\n{dt} {s}^3 (rounds {ROUNDS})", flush=True)
            for k in keys:
                med = statistics.median(times[k])
                per_round = [times["cublas"][r] / times[k][r] for r in range(ROUNDS)]
                print(f"  {k:8s} {flop / med / 1e12:7.1f} TFLOP/s  ratio {ref / med:.3f}  per-round ratio "
                      f"{min(per_round):.3f}-{max(per_round):.3f}  times {['%.4f' % (t * 1e3) for t in times[k]]} ms  "
                      f"MHz {clocks[k]}  C {temps[k]}  W {power[k]}", flush=True)
                report["timing"].append({"dtype": str(dt), "n": s, "kernel": k, "times_s": times[k],
                                         "sm_clock_mhz": clocks[k], "temperature_c": temps[k], "power_w": power[k],
                                         "ratio_median": ref / med, "ratio_rounds": per_round})
            del a, b, out
            json.dump(report, open(os.path.join(OUT, "mm_sweep.json"), "w"), indent=1)


def _compile_info(tail: str) -> dict:
    """Registers, spills and shared memory of a candidate from its compile lines (bf16 at 256^3)."""
    for line in tail.splitlines():
        if line.startswith("compiled") and "bfloat16 (256, 256, 256)" in line:
            fields = dict(part.strip().split(" ", 1) for part in line.split(":", 1)[1].split(","))
            return {"registers_per_thread": int(fields["regs"]), "spilled_registers": int(fields["spills"]),
                    "shared_bytes": int(fields["shared"])}
    return {"registers_per_thread": None, "spilled_registers": None, "shared_bytes": None}


def sweep_rows(report: dict) -> list:
    """The recorded rows of a sweep report: one per (dtype, n, launch), cuBLAS included."""
    info = {name: _compile_info(tail) for name, _, _, tail in report["compile"]}
    checked = {}
    for name, _, _, unwritten, err, ok in report["check"]:
        checked[name] = checked.get(name, True) and bool(ok)
    rows = []
    for t in report["timing"]:
        dtype = {"torch.bfloat16": "bf16", "torch.float16": "fp16"}[t["dtype"]]
        n = t["n"]
        row = {"dtype": dtype, "m": n, "n": n, "k": n, "kernel": t["kernel"]}
        if t["kernel"] != "cublas":
            tile, ws = report["candidates"][t["kernel"]]
            row.update(dict(zip(("block_m", "block_n", "block_k", "group_m", "stages", "warps", "split_epilogue"),
                                tile)), warp_specialize=ws, checked=checked[t["kernel"]], **info[t["kernel"]])
        row.update(time_s=statistics.median(t["times_s"]), time_s_rounds=t["times_s"],
                   flop_per_s=2.0 * n**3 / statistics.median(t["times_s"]),
                   sm_clock_mhz_rounds=t["sm_clock_mhz"], temperature_c_rounds=t["temperature_c"],
                   power_w_rounds=t["power_w"], ratio_to_cublas=t["ratio_median"],
                   ratio_rounds=t["ratio_rounds"])
        rows.append(row)
    return rows


def collect(argv) -> int:
    import argparse
    from pathlib import Path
    from gpuperf.benchmark.profile import provenance_of_job
    from gpuperf.records import save_run
    parser = argparse.ArgumentParser(description="record a sweep report")
    parser.add_argument("report", type=Path)
    parser.add_argument("--provenance-from", type=Path, required=True)
    parser.add_argument("--name", default="matmul_sweep_h200")
    parser.add_argument("--out-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    run = json.loads(args.provenance_from.read_text())
    prov = provenance_of_job(run, f"python3 bench/matmul_sweep.py (job mm-1, as gpujobs/mm_sweep.py); provenance "
                                  f"of the same job's {run['provenance']['command'].split(' --')[0]} call")
    print(save_run(args.name, sweep_rows(json.loads(args.report.read_text())), prov, data_dir=args.out_dir))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--compile":
        _compile_all(sys.argv[2])
    elif len(sys.argv) > 1 and sys.argv[1] == "collect":
        sys.exit(collect(sys.argv[2:]))
    elif len(sys.argv) > 1:  # --help or a mistake: the usage, not a run
        print(__doc__)
        sys.exit(0 if sys.argv[1] in ("-h", "--help") else 2)
    else:
        main()
