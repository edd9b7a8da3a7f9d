"""Quick H200 probe of softmax and cross-entropy over vocabularies (helper vocab, issue 33 section 2).

Usage (from the repository root, GPU only)::

    python bench/vocab_probe.py OUT_DIR [--part softmax|ce|host|all] [--rep-ms 15] [--no-compile]

Times each launch with ``triton.testing.do_bench`` (median, L2 flushed between calls) after a check against
float64 on a few rows, and prints TB/s (the bytes a softmax or a training step's loss must move: one read of
the rows and one write of the output or gradient) and the ratio to the same-run copy, torch.softmax, eager
``F.cross_entropy`` and ``torch.compile`` of it. Writes ``OUT_DIR/vocab_probe.json`` (the rows).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

SOFTMAX_SHAPES = ((4096, 50257), (2048, 128256), (2048, 151936), (4096, 32000), (32768, 1000), (32768, 5000),
                  (8192, 12288))
STREAM_LAUNCHES = ((4096, 8, 1, 3), (4096, 8, 2, 3), (4096, 8, 4, 3), (2048, 4, 4, 4), (8192, 16, 1, 2))
ROWS_LAUNCHES = ((2, 4), (4, 4), (1, 8))
CE_SHAPES = ((8192, 32000), (4096, 50257), (4096, 128256), (4096, 151936))
CE_LAUNCHES = ((4096, 8, 1, 3), (4096, 8, 2, 3), (4096, 8, 4, 3), (8192, 16, 1, 2))


def bench(fn, rep_ms):
    import triton.testing

    return float(triton.testing.do_bench(fn, warmup=5, rep=rep_ms, return_mode="median")) * 1e-3


def softmax_part(rows_out, rep_ms):
    import torch

    from gpuperf.kernels import softmax as sm

    gen = torch.Generator(device="cuda").manual_seed(0)
    for rows, n in SOFTMAX_SHAPES:
        for strided in (False, True) if n == 50257 else (False,):
            dtype = torch.float16
            if strided:  # a slice of logits padded to 50304 columns
                x = (torch.randn(rows, 50304, device="cuda", generator=gen) * 3).to(dtype)[:, :n]
            else:
                x = (torch.randn(rows, n, device="cuda", generator=gen) * 3).to(dtype)
            y = torch.empty(rows, n, device="cuda", dtype=dtype)
            moved = 2 * rows * n * 2
            ref = sm.softmax_reference(x[:8])
            shape = f"{rows}x{n}" + (" strided" if strided else "")
            runs = {"copy": lambda: y.copy_(x), "torch.softmax": lambda: torch.softmax(x, -1),
                    "auto": lambda: sm.softmax(x, out=y)}
            if n <= sm.FUSED_MAX_COLS:
                runs["fused"] = lambda: sm.softmax(x, out=y, method="fused")
            if n > 16384:
                runs["split"] = lambda: sm.softmax(x, out=y, method="split")
                for launch in STREAM_LAUNCHES:
                    b, w, p, s = launch
                    runs[f"stream b{b} w{w} p{p} s{s}"] = (
                        lambda b=b, w=w, p=p, s=s: sm.softmax(x, out=y, method="stream", block_cols=b, num_warps=w,
                                                              programs_per_sm=p, num_stages=s))
            if n <= 16384:
                for r, w in ROWS_LAUNCHES:
                    runs[f"rows r{r} w{w}"] = (lambda r=r, w=w: sm.softmax(x, out=y, method="rows", rows_per_program=r,
                                                                           num_warps=w))
            times = {}
            for name, fn in runs.items():
                try:
                    out = fn()
                    torch.cuda.synchronize()
                    if name != "copy":
                        o = out if name == "torch.softmax" else y
                        err = (o[:8].double().cpu() - ref).abs().max().item()
                        if not err < 2e-3:
                            raise RuntimeError(f"max error {err}")
                    times[name] = bench(fn, rep_ms)
                except Exception as exc:  # keep going: a failed launch is a row
                    print(f"softmax {shape} {name}: FAILED {type(exc).__name__}: {str(exc)[:200]}", flush=True)
            for name, t in times.items():
                row = {"part": "softmax", "shape": shape, "rows": rows, "n": n, "name": name, "time_s": t,
                       "tb_per_s": moved / t / 1e12, "vs_copy": times["copy"] / t,
                       "vs_torch": times.get("torch.softmax", float("nan")) / t}
                rows_out.append(row)
                print(f"softmax {shape:>20} {name:<26} {t * 1e6:9.1f} us {row['tb_per_s']:6.2f} TB/s "
                      f"{row['vs_copy']:5.3f} of copy {row['vs_torch']:5.2f}x torch", flush=True)
            del x, y


def ce_part(rows_out, rep_ms, use_compile, use_compile_all):
    import torch
    import torch.nn.functional as F

    from gpuperf.kernels import cross_entropy as ce

    gen = torch.Generator(device="cuda").manual_seed(0)
    compiled = None
    if use_compile:
        compiled = torch.compile(lambda x, t: F.cross_entropy(x, t), dynamic=False)
    for i, (rows, n) in enumerate(CE_SHAPES):
        if i == 1 and not use_compile_all:
            compiled = None
        dtype = torch.bfloat16
        x0 = (torch.randn(rows, n, device="cuda", generator=gen) * 3).to(dtype)
        t = torch.randint(0, n, (rows,), device="cuda", generator=gen)
        t[::50] = -100
        x = x0.clone().requires_grad_(True)
        y = torch.empty_like(x0)
        moved = 2 * rows * n * 2
        shape = f"{rows}x{n}"
        sample = torch.arange(0, rows, rows // 16, device="cuda")
        g_ref = ce.cross_entropy_reference(x0[sample], t[sample], reduction="sum")[1]
        n_valid = (t != -100).sum().item()

        def ours(**kw):
            def run():
                loss, _, g = ce.cross_entropy_forward(x.detach(), t, **kw)
                return g
            return run

        def eager():
            return torch.autograd.grad(F.cross_entropy(x, t), x)[0]

        runs = {"copy": lambda: y.copy_(x0), "eager": eager,
                "ours": lambda: torch.autograd.grad(ce.cross_entropy(x, t), x)[0]}
        one = torch.ones((), device="cuda")
        runs["ours forward"] = ours()  # the default launch without autograd: the autograd wrapper's cost apart
        runs["scale only"] = lambda: ce.scale_gradient_(x.detach(), one)  # the backward's kernel alone
        for b, w, p, s in CE_LAUNCHES:
            runs[f"ours b{b} w{w} p{p} s{s}"] = ours(block_cols=b, num_warps=w, programs_per_sm=p, num_stages=s)
        if compiled is not None:
            def comp():
                return torch.autograd.grad(compiled(x, t), x)[0]
            runs["torch.compile"] = comp
        times, peaks = {}, {}
        for name, fn in runs.items():
            try:
                with torch.no_grad():
                    x.copy_(x0)
                t0 = time.perf_counter()
                g = fn()
                torch.cuda.synchronize()
                first = time.perf_counter() - t0
                if name not in ("copy", "scale only"):
                    err = (g[sample].double().cpu() * n_valid - g_ref).abs().max().item()
                    if not err < 0.05:
                        raise RuntimeError(f"gradient error {err}")
                times[name] = bench(fn, rep_ms)
                if name in ("eager", "ours", "torch.compile"):
                    g = None
                    torch.cuda.synchronize()
                    base = torch.cuda.memory_allocated()
                    torch.cuda.reset_peak_memory_stats()
                    g = fn()
                    torch.cuda.synchronize()
                    peaks[name] = torch.cuda.max_memory_allocated() - base
                    del g
                if name == "torch.compile":
                    print(f"  torch.compile first call {first:.1f} s", flush=True)
            except Exception as exc:
                print(f"ce {shape} {name}: FAILED {type(exc).__name__}: {str(exc)[:300]}", flush=True)
        for name, tm in times.items():
            row = {"part": "ce", "shape": shape, "rows": rows, "n": n, "name": name, "time_s": tm,
                   "tb_per_s": moved / tm / 1e12, "vs_copy": times["copy"] / tm,
                   "vs_eager": times.get("eager", float("nan")) / tm,
                   "vs_compile": times.get("torch.compile", float("nan")) / tm,
                   "peak_extra_bytes": peaks.get(name), "logits_bytes": rows * n * 2}
            rows_out.append(row)
            print(f"ce {shape:>14} {name:<24} {tm * 1e6:9.1f} us {row['tb_per_s']:6.2f} TB/s {row['vs_copy']:5.3f} "
                  f"of copy {row['vs_eager']:5.2f}x eager {row['vs_compile']:5.2f}x compile"
                  + (f", peak +{peaks[name] / 1e9:.2f} GB" if name in peaks else ""), flush=True)
        del x, x0, y


def host_part(rows_out):
    import torch

    from gpuperf.benchmark import time_host_callable
    from gpuperf.kernels import softmax as sm

    x = torch.randn(64, 1024, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    before = sm.PLAN_BUILDS
    calls = {"torch.softmax": lambda: torch.softmax(x, -1), "gpuperf softmax": lambda: sm.softmax(x),
             "gpuperf softmax out=": lambda: sm.softmax(x, out=y)}
    res = {name: time_host_callable(fn) for name, fn in calls.items()}
    for name, t in res.items():
        rows_out.append({"part": "host", "name": name, "time_s": t})
        print(f"host 64x1024 fp16 {name:<22} {t * 1e6:6.2f} us per call "
              f"({t / res['torch.softmax']:.2f}x torch.softmax)", flush=True)
    print(f"plans built during the host probe: {sm.PLAN_BUILDS - before}", flush=True)


SPLIT_SHAPES = ((4096, 50257), (2048, 128256), (2048, 151936), (1024, 262144))
SPLIT_LAUNCHES = ((4096, 8, 1, 3, 16384), (4096, 8, 2, 3, 16384), (4096, 8, 2, 3, 32768), (4096, 8, 4, 3, 16384),
                  (2048, 4, 4, 4, 16384))


def split_part(rows_out, rep_ms):
    """"stream" with a row over cooperating programs (last: a wrong residency count would hang here)."""
    import torch

    from gpuperf.kernels import softmax as sm

    gen = torch.Generator(device="cuda").manual_seed(0)
    for rows, n in SPLIT_SHAPES:
        x = (torch.randn(rows, n, device="cuda", generator=gen) * 3).to(torch.float16)
        y = torch.empty_like(x)
        ref = sm.softmax_reference(x[-8:])
        copy_t = bench(lambda: y.copy_(x), rep_ms)
        torch_t = bench(lambda: torch.softmax(x, -1), rep_ms)
        for b, w, p, s, ch in SPLIT_LAUNCHES:
            name = f"stream split b{b} w{w} p{p} s{s} c{ch}"
            fn = (lambda b=b, w=w, p=p, s=s, ch=ch: sm.softmax(x, out=y, method="stream", cooperative=True,
                                                            block_cols=b, num_warps=w, programs_per_sm=p,
                                                            num_stages=s, chunk_cols=ch))
            try:
                fn()
                torch.cuda.synchronize()
                err = (y[-8:].double().cpu() - ref).abs().max().item()
                if not err < 2e-3:
                    raise RuntimeError(f"max error {err}")
                t = bench(fn, rep_ms)
            except Exception as exc:
                print(f"split {rows}x{n} {name}: FAILED {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                continue
            row = {"part": "softmax", "shape": f"{rows}x{n}", "rows": rows, "n": n, "name": name, "time_s": t,
                   "tb_per_s": 4 * rows * n / t / 1e12, "vs_copy": copy_t / t, "vs_torch": torch_t / t}
            rows_out.append(row)
            print(f"softmax {rows}x{n:<14} {name:<34} {t * 1e6:9.1f} us {row['tb_per_s']:6.2f} TB/s "
                  f"{row['vs_copy']:5.3f} of copy {row['vs_torch']:5.2f}x torch", flush=True)
        del x, y


CE_SPLIT_LAUNCHES = ((4096, 8, 1, 3, 16384), (4096, 8, 2, 3, 16384), (4096, 8, 2, 3, 32768),
                     (4096, 8, 4, 3, 16384))


def ce_split_part(rows_out, rep_ms):
    import torch

    from gpuperf.kernels import cross_entropy as ce

    gen = torch.Generator(device="cuda").manual_seed(0)
    for rows, n in CE_SHAPES:
        x0 = (torch.randn(rows, n, device="cuda", generator=gen) * 3).to(torch.bfloat16)
        t = torch.randint(0, n, (rows,), device="cuda", generator=gen)
        t[::50] = -100
        x = x0.clone()
        y = torch.empty_like(x0)
        sample = torch.arange(0, rows, rows // 16, device="cuda")
        g_ref = ce.cross_entropy_reference(x0[sample], t[sample], reduction="sum")[1]
        n_valid = (t != -100).sum().item()
        copy_t = bench(lambda: y.copy_(x0), rep_ms)
        for b, w, p, s, ch in CE_SPLIT_LAUNCHES:
            name = f"ours split b{b} w{w} p{p} s{s} c{ch}"
            fn = (lambda b=b, w=w, p=p, s=s, ch=ch: ce.cross_entropy_forward(
                x, t, block_cols=b, num_warps=w, programs_per_sm=p, num_stages=s, chunk_cols=ch)[2])
            try:
                x.copy_(x0)
                g = fn()
                torch.cuda.synchronize()
                err = (g[sample].double().cpu() * n_valid - g_ref).abs().max().item()
                if not err < 0.05:
                    raise RuntimeError(f"gradient error {err}")
                tm = bench(fn, rep_ms)
            except Exception as exc:
                print(f"ce {rows}x{n} {name}: FAILED {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                continue
            rows_out.append({"part": "ce", "shape": f"{rows}x{n}", "rows": rows, "n": n, "name": name,
                             "time_s": tm, "tb_per_s": 4 * rows * n / tm / 1e12, "vs_copy": copy_t / tm})
            print(f"ce {rows}x{n:<10} {name:<32} {tm * 1e6:9.1f} us {4 * rows * n / tm / 1e12:6.2f} TB/s "
                  f"{copy_t / tm:5.3f} of copy", flush=True)
        del x, x0, y


def ncu_part():
    """One launch each, for Nsight Compute: the stream kernel at 1, 2 and 4 programs per SM and the
    cross-entropy kernel at 1, 2 and 4, on 4096 x 50257 fp16 / bf16 (DRAM bytes read against the input's)."""
    import torch

    from gpuperf.kernels import cross_entropy as ce
    from gpuperf.kernels import softmax as sm

    x = torch.randn(4096, 50257, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    print(f"input bytes {x.numel() * 2}", flush=True)
    for p in (1, 2, 4):
        sm.softmax(x, out=y, method="stream", programs_per_sm=p)
    xb = x.to(torch.bfloat16)
    t = torch.randint(0, 50257, (4096,), device="cuda")
    for p in (1, 2, 4):
        ce.cross_entropy_forward(xb, t, programs_per_sm=p)
    torch.cuda.synchronize()


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("out_dir", type=Path)
    p.add_argument("--part", default="all")
    p.add_argument("--rep-ms", type=float, default=15.0)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--name", default="vocab_probe_h200", help="file stem of the recorded run")
    p.add_argument("--compile-all", action="store_true", help="torch.compile at every shape (default: the first)")
    a = p.parse_args(argv)
    import torch

    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    rows = []
    t0 = time.time()
    if a.part == "ncu":
        ncu_part()
        return 0
    try:
        if a.part in ("host", "all"):
            host_part(rows)
        if a.part in ("softmax", "all"):
            softmax_part(rows, a.rep_ms)
        print(f"[{time.time() - t0:.0f} s]", flush=True)
        if a.part in ("ce", "all"):
            ce_part(rows, a.rep_ms, not a.no_compile, a.compile_all)
        print(f"[{time.time() - t0:.0f} s]", flush=True)
        if a.part in ("split",):
            ce_split_part(rows, a.rep_ms)
            split_part(rows, a.rep_ms)
    finally:
        a.out_dir.mkdir(parents=True, exist_ok=True)
        (a.out_dir / "vocab_probe.json").write_text(json.dumps(rows, indent=1) + "\n")
        from gpuperf.records import provenance, save_run

        prov = provenance("python bench/vocab_probe.py OUT_DIR " + " ".join(argv[1:]))
        path = save_run(a.name, rows, prov, data_dir=a.out_dir)
        print(f"wrote {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
