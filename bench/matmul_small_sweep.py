"""Sweep of split-K launches for small and ragged matmuls against cuBLAS and a copy of the weight (GPU).

    PYTHONPATH=$PWD/lib python3 bench/matmul_small_sweep.py OUT_DIR [--quick] [--procs 12]
    PYTHONPATH=$PWD/lib python3 bench/matmul_small_sweep.py OUT_DIR --warm-family   # compile only

Compiles every launch first in parallel worker processes (Triton's on-disk cache), then times each shape's
candidates in the main process with ``triton.testing.do_bench`` (L2 flushed before every call, median),
cuBLAS (``torch.matmul``) timed before and after the candidates of its shape and the copy of the weight
(``dst.copy_(b)``, 2 bytes moved per weight byte) once per decoding shape. Every candidate is checked
against a float64 product of the first rows first. Prints one line per launch (TFLOP/s, TB/s, ratio to
cuBLAS and, for m <= 64, bytes per second over the copy's) and writes ``OUT_DIR/matmul_small_sweep.json``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time

BIG = [(1000, 1000, 1000), (777, 4096, 4096), (2048, 2048, 2048), (1000, 1000, 8192), (1536, 1536, 1536)]
DECODE = [(m, n, k) for m in (1, 16, 64) for (k, n) in ((4096, 4096), (4096, 14336), (14336, 4096))]
BIG_TILES = [(128, 128, 64, 8, 3), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4), (128, 256, 64, 8, 3)]
BIG_SPLITS = (1, 2, 4)
BIG_TMA_TILES = [(128, 128, 64, 8, 3), (128, 256, 64, 8, 3)]
STREAMK_TILES = [(128, 128, 64, 8, 3), (64, 256, 64, 4, 3), (128, 64, 64, 4, 4)]
STREAMK_TMA_TILES = [(128, 128, 64, 8, 3), (64, 256, 64, 4, 3), (128, 256, 64, 8, 3)]
TMA_TILES = [(128, 256, 64, 8, 3, 8, True), (128, 128, 64, 8, 4, 8, False), (128, 128, 64, 8, 3, 4, False),
             (64, 256, 64, 8, 3, 4, False)]
DECODE_TILES = [(128, 128, 4, 4), (64, 128, 4, 4), (128, 256, 4, 3)]
DECODE_TMA_TILES = [(128, 128, 4, 4), (128, 256, 4, 3)]
DECODE_PROGRAMS_PER_SM = (1, 2, 4)


def candidates(shape, sms):
    """(name, kind, plan) of every launch tried for ``shape``: kind "splitk" and "streamk" take a
    MatmulPlan, "tma" a tile tuple of gpuperf.kernels.matmul's TMA kernel."""
    from gpuperf import tiling
    from gpuperf.kernels.matmul_splitk import MatmulPlan

    m, n, k = shape
    out = []
    if m <= 64:
        bm = 16 if m <= 16 else (32 if m <= 32 else 64)
        for tiles, tma, per_sm in ((DECODE_TILES, False, DECODE_PROGRAMS_PER_SM), (DECODE_TMA_TILES, True, (2, 4))):
            for bn, bk, w, s in tiles:
                splits = sorted({tiling.split_k_for_programs(-(-n // bn), k, bk, p * sms) for p in per_sm})
                for sp in splits:
                    out.append((f"sk{'T' if tma else ''}{bm}x{bn}x{bk}w{w}s{s}/{sp}", "splitk",
                                MatmulPlan("splitk", bm, bn, bk, sp, w, s, 1, tma)))
        for tma in (False, True):
            out.append((f"stk{'T' if tma else ''}{bm}x128x128w4s4", "streamk",
                        MatmulPlan("streamk", bm, 128, 128, 1, 4, 4, 1, tma)))
    else:
        for tiles, tma in ((BIG_TILES, False), (BIG_TMA_TILES, True)):
            for bm, bn, bk, w, s in tiles:
                for sp in BIG_SPLITS:
                    out.append((f"sk{'T' if tma else ''}{bm}x{bn}x{bk}w{w}s{s}/{sp}", "splitk",
                                MatmulPlan("splitk", bm, bn, bk, sp, w, s, 8, tma)))
        for tiles, tma in ((STREAMK_TILES, False), (STREAMK_TMA_TILES, True)):
            for bm, bn, bk, w, s in tiles:
                out.append((f"stk{'T' if tma else ''}{bm}x{bn}x{bk}w{w}s{s}", "streamk",
                            MatmulPlan("streamk", bm, bn, bk, 1, w, s, 8, tma)))
        for tile in TMA_TILES:
            bm, bn, bk, g, s, w, split = tile
            out.append((f"tma{bm}x{bn}x{bk}w{w}s{s}{'e' if split else ''}", "tma", tile))
    return out


def run_candidate(kind, plan, a, b, out):
    from gpuperf.kernels import matmul as mm
    from gpuperf.kernels import matmul_splitk as mks

    if kind == "splitk":
        return mks.matmul_splitk(a, b, out, plan=plan)
    if kind == "streamk":
        return mks.matmul_streamk(a, b, out, plan=plan)
    mm._launch_tma_fixed(a, b, out, plan, False)
    return out


def _inputs(shape, dtype, seed=0):
    import torch

    m, n, k = shape
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=g).to(dtype)
    b = torch.randn(k, n, device="cuda", generator=g).to(dtype)
    return a, b


def _compile_job(job):
    import torch

    shape, plans = job
    a, b = _inputs(shape, torch.bfloat16)
    out = torch.empty(shape[0], shape[1], device="cuda", dtype=a.dtype)
    for _, kind, plan in plans:
        try:
            run_candidate(kind, plan, a, b, out)
        except Exception as exc:  # noqa: BLE001 - reported, the main process skips it
            print(f"compile failed {shape} {plan}: {exc!r}"[:300], flush=True)
    torch.cuda.synchronize()
    return len(plans)


def _time_shape(shape, phase, sms, bench, rows, cublas):
    import torch

    from gpuperf.kernels import matmul as mm
    from gpuperf.kernels import matmul_splitk as mks

    m, n, k = shape
    a, b = _inputs(shape, torch.bfloat16)
    ref = a[:64].double() @ b.double()
    flop = 2 * m * n * k
    moved = 2 * (m * k + k * n + m * n)
    cub = [bench(lambda: torch.matmul(a, b))]
    copy_bps = None
    if m <= 64:
        dst = torch.empty_like(b)
        copy_ms = bench(lambda: dst.copy_(b))
        copy_bps = 2 * b.numel() * 2 / (copy_ms * 1e-3)
    out = torch.empty(m, n, device="cuda", dtype=a.dtype)
    # "auto" may run stream-K: phase B
    named = [("tma-default", lambda: mm.matmul(a, b))] if phase == "A" else [("auto", lambda: mks.matmul_auto(a, b))]
    named += [(name, (lambda kind=kind, plan=plan: run_candidate(kind, plan, a, b, out)))
              for name, kind, plan in candidates(shape, sms) if (kind == "streamk") == (phase == "B")]
    results = []
    for name, fn in named:
        try:
            out.fill_(float("nan"))
            c = fn()
            err = ((c[:64].double() - ref).abs().max() / ref.abs().max()).item()
            if not err < 2.0**-7:
                print(f"  {shape} {name}: WRONG rel err {err:.3g}", flush=True)
                continue
            same = None
            if name not in ("tma-default", "auto"):  # deterministic?
                first = fn().clone()
                same = torch.equal(first, fn())
            ms = bench(fn)
        except Exception as exc:  # noqa: BLE001
            print(f"  {shape} {name}: failed {exc!r}"[:300], flush=True)
            continue
        results.append((name, ms, same))
    cub.append(bench(lambda: torch.matmul(a, b)))
    cub_ms = sum(cub) / 2
    print(f"[{phase}] {m}x{n}x{k} bf16: cuBLAS {cub[0] * 1e3:.1f}/{cub[1] * 1e3:.1f} us "
          f"{flop / cub_ms / 1e9:.1f} TFLOP/s {moved / cub_ms / 1e9:.2f} TB/s"
          + (f"; copy {copy_bps / 1e12:.2f} TB/s" if copy_bps else ""), flush=True)
    for name, ms, same in sorted(results, key=lambda r: r[1]):
        bps = moved / (ms * 1e-3)
        line = (f"  {name:<24} {ms * 1e3:8.1f} us {flop / ms / 1e9:7.1f} TFLOP/s {bps / 1e12:5.2f} TB/s "
                f"x cuBLAS {cub_ms / ms:5.3f}")
        if copy_bps:
            line += f" x copy {bps / copy_bps:5.3f}"
        if same is False:
            line += " NOT-DETERMINISTIC"
        print(line, flush=True)
        rows.append({"m": m, "n": n, "k": k, "dtype": "bf16", "name": name, "time_s": ms * 1e-3,
                     "cublas_s": [c * 1e-3 for c in cub], "copy_bytes_per_s": copy_bps, "deterministic": same})
    if phase == "B":
        print(f"  plan_matmul picks {mks.plan_matmul(m, n, k, sms)}", flush=True)


def _warm_job(job):
    """Compile what the family ``matmul_small`` runs for one (dtype, shape): the dispatch and the TMA kernel."""
    import torch

    from gpuperf.kernels import matmul as mm
    from gpuperf.kernels import matmul_splitk as mks

    dtype, shape = job
    m, n, k = shape
    torch_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    a = torch.randn(m, k, device="cuda").to(torch_dtype)
    b = torch.randn(k, n, device="cuda").to(torch_dtype)
    for fn in (mks.matmul_auto, mm.matmul):
        try:
            fn(a, b)
        except Exception as exc:  # noqa: BLE001 - the family's own check reports it
            print(f"warm-up failed {dtype} {shape} {fn.__name__}: {exc!r}"[:300], flush=True)
    torch.cuda.synchronize()
    return 1


def warm_family(procs: int) -> None:
    """Compile every kernel of the family ``matmul_small`` in ``procs`` processes (Triton's disk cache)."""
    from gpuperf.benchmark.family import matmul_small

    t0 = time.time()
    jobs = [(dtype, (m, n, k)) for _, dtype, m, n, k in matmul_small.shapes()]
    with mp.get_context("spawn").Pool(procs) as pool:
        pool.map(_warm_job, jobs, chunksize=1)
    print(f"warmed {len(jobs)} shapes of matmul_small in {time.time() - t0:.1f} s", flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("out_dir")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--procs", type=int, default=12)
    p.add_argument("--wait-for", default=None, help="a file to wait for (up to 20 s) before timing")
    p.add_argument("--warm-family", action="store_true", help="only compile the family matmul_small's kernels")
    args = p.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    if args.warm_family:
        warm_family(args.procs)
        return 0
    import torch
    import triton

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    shapes = BIG + DECODE
    if args.quick:
        shapes = [BIG[0], DECODE[0]]
    t0 = time.time()
    jobs = []
    for shape in shapes:
        plans = candidates(shape, sms)
        for kind_set in (("splitk", "tma"), ("streamk",)):
            some = [p for p in plans if p[1] in kind_set]
            for i in range(0, len(some), 4):
                jobs.append((shape, some[i:i + 4]))
    ctx = mp.get_context("spawn")
    # stream-K last, so that a hang there (its programs wait for each other) costs only its own compiles
    jobs.sort(key=lambda job: any(kind == "streamk" for _, kind, _ in job[1]))
    pool = ctx.Pool(args.procs)
    try:
        pool.map_async(_compile_job, jobs, chunksize=1).get(timeout=45)
    except mp.TimeoutError:
        print("compiles not finished after 45 s; timing what is compiled", flush=True)
    pool.terminate()
    print(f"compiled {sum(len(j[1]) for j in jobs)} launches in {time.time() - t0:.1f} s", flush=True)
    if args.wait_for:
        t1 = time.time()
        while not os.path.exists(args.wait_for) and time.time() - t1 < 20:
            time.sleep(0.5)
        print(f"waited {time.time() - t1:.1f} s for {args.wait_for}", flush=True)

    bench = lambda fn: triton.testing.do_bench(fn, warmup=3, rep=12)  # noqa: E731 - ms, median, L2 flushed
    rows = []
    cublas = {}
    # Phase A: every launch but stream-K (whose programs wait for each other: a hang there loses only B).
    for phase in ("A", "B"):
        for shape in shapes:
            _time_shape(shape, phase, sms, bench, rows, cublas)
            with open(os.path.join(args.out_dir, "matmul_small_sweep.json"), "w") as f:
                json.dump({"device": torch.cuda.get_device_name(0), "triton": triton.__version__,
                           "torch": torch.__version__, "timing": "triton.testing.do_bench median, L2 flushed",
                           "rows": rows}, f, indent=1)
    print(f"done in {time.time() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
