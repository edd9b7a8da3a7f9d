"""Sweep of split-K launches for small and ragged matmuls against cuBLAS and a copy of the weight (GPU).

    PYTHONPATH=$PWD/lib python3 bench/matmul_small_sweep.py OUT_DIR [--quick] [--procs 14]

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
BIG_TILES = [(128, 128, 64, 8, 3), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4), (128, 256, 64, 8, 3),
             (64, 64, 64, 4, 4)]
BIG_SPLITS = (1, 2, 3, 4)
DECODE_TILES = [(128, 128, 4, 4), (64, 128, 4, 4), (128, 256, 4, 3), (64, 256, 4, 3), (32, 256, 4, 4)]
DECODE_PROGRAMS_PER_SM = (1, 2, 4)


def candidates(shape, sms):
    """(name, MatmulPlan) of every split-K launch tried for ``shape``."""
    from gpuperf import tiling
    from gpuperf.kernels.matmul_splitk import MatmulPlan

    m, n, k = shape
    out = []
    if m <= 64:
        bm = 16 if m <= 16 else (32 if m <= 32 else 64)
        for bn, bk, w, s in DECODE_TILES:
            splits = sorted({tiling.split_k_for_programs(-(-n // bn), k, bk, p * sms)
                             for p in DECODE_PROGRAMS_PER_SM})
            for sp in splits:
                out.append((f"sk{bm}x{bn}x{bk}w{w}s{s}/{sp}", MatmulPlan("splitk", bm, bn, bk, sp, w, s, 1)))
    else:
        for bm, bn, bk, w, s in BIG_TILES:
            for sp in BIG_SPLITS:
                out.append((f"sk{bm}x{bn}x{bk}w{w}s{s}/{sp}", MatmulPlan("splitk", bm, bn, bk, sp, w, s, 8)))
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

    from gpuperf.kernels import matmul_splitk as mks

    shape, plans = job
    a, b = _inputs(shape, torch.bfloat16)
    for _, plan in plans:
        try:
            mks.matmul_splitk(a, b, plan=plan)
        except Exception as exc:  # noqa: BLE001 - reported, the main process skips it
            print(f"compile failed {shape} {plan}: {exc!r}"[:300], flush=True)
    torch.cuda.synchronize()
    return len(plans)


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("out_dir")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--procs", type=int, default=14)
    args = p.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    import torch
    import triton

    from gpuperf.kernels import matmul as mm
    from gpuperf.kernels import matmul_splitk as mks

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    shapes = BIG + DECODE
    if args.quick:
        shapes = [BIG[0], DECODE[0]]
    t0 = time.time()
    jobs = []
    for shape in shapes:
        plans = candidates(shape, sms)
        for i in range(0, len(plans), 4):
            jobs.append((shape, plans[i:i + 4]))
    ctx = mp.get_context("spawn")
    with ctx.Pool(args.procs) as pool:
        pool.map(_compile_job, jobs, chunksize=1)
    print(f"compiled {sum(len(j[1]) for j in jobs)} launches in {time.time() - t0:.1f} s", flush=True)

    bench = lambda fn: triton.testing.do_bench(fn, warmup=3, rep=12)  # noqa: E731 - ms, median, L2 flushed
    rows = []
    for shape in shapes:
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
        results = []
        named = [("tma-default", lambda: mm.matmul(a, b)), ("auto", lambda: mks.matmul_auto(a, b))]
        named += [(name, (lambda plan=plan: mks.matmul_splitk(a, b, plan=plan))) for name, plan in
                  candidates(shape, sms)]
        for name, fn in named:
            try:
                c = fn()
                err = ((c[:64].double() - ref).abs().max() / ref.abs().max()).item()
                if not err < 2.0**-7:
                    print(f"  {shape} {name}: WRONG rel err {err:.3g}", flush=True)
                    continue
                if name != "tma-default" and name != "auto":  # deterministic?
                    same = torch.equal(fn(), fn())
                else:
                    same = None
                ms = bench(fn)
            except Exception as exc:  # noqa: BLE001
                print(f"  {shape} {name}: failed {exc!r}"[:300], flush=True)
                continue
            results.append((name, ms, same))
        cub.append(bench(lambda: torch.matmul(a, b)))
        cub_ms = sum(cub) / 2
        print(f"{m}x{n}x{k} bf16: cuBLAS {cub[0] * 1e3:.1f}/{cub[1] * 1e3:.1f} us "
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
                         "cublas_s": [c * 1e-3 for c in cub], "copy_bytes_per_s": copy_bps,
                         "deterministic": same})
        plan = mks.plan_matmul(m, n, k, sms)
        print(f"  plan_matmul picks {plan}", flush=True)
        with open(os.path.join(args.out_dir, "matmul_small_sweep.json"), "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "triton": triton.__version__,
                       "torch": torch.__version__, "rows": rows}, f, indent=1)
    print(f"done in {time.time() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
