"""The overhead experiments of chapter 07, recorded on a GPU (a standalone script: what it times is the
*wall-clock* cost of calls issued from Python, launch overhead included, which ``do_bench``'s events between
calls would hide: the harness's ``gpuperf.benchmark.time_wall_per_call``, GPU synchronised inside the timed
region).

Three experiments, written to ``book/data/overhead_<device>.json`` with their provenance:

* ``launch``: R back-to-back launches of one small kernel from Python (eager) vs the same R launches captured
  once in a CUDA Graph and replayed; time per kernel.
* ``size_sweep``: one elementwise add (fp32) and one square matmul (bf16) over sizes; time per call when the
  calls are issued back to back (the per-call time is then the larger of the CPU's cost to issue a call and
  the GPU's time to run it): flat while launch-bound, then sloped (memory- or compute-bound).
* ``compile_chain``: a chain of six elementwise ops (fp32), eager vs ``torch.compile`` (default mode) vs
  ``torch.compile(mode="reduce-overhead")`` (CUDA Graphs), at a small and a large size.
* ``launch_split`` (not in the default run): the course's Triton add three ways, to split its launch cost:
  the checked wrapper ``ew.vector_add``, the bare ``_add_kernel[grid](...)`` launch, and ``torch.add``.
* ``sync_trace`` (not in the default run): a ``torch.profiler`` trace (CPU and CUDA) of 50 fp32 adds of
  ``--sync-elements`` elements (default 2^16) issued back to back, then of the same 50 with ``.item()`` after
  each; rows are the trace's ranges (host and device), for a timeline figure in chapter 07.

Usage: ``python bench/overhead.py [--out-dir DIR] [--quick] [--parts launch,size_sweep,compile_chain]
[--name STEM]``; e.g. ``python bench/overhead.py --parts launch_split,sync_trace --name overhead_sync``.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

if importlib.util.find_spec("gpuperf") is None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))


def per_call_s(fn, calls: int, repeats: int = 5) -> float:
    """The harness's wall time per call (:func:`gpuperf.benchmark.time_wall_per_call`): median over ``repeats``
    of (wall time of ``calls`` back-to-back calls, synchronised at both ends) / calls."""
    from gpuperf.benchmark import time_wall_per_call

    return time_wall_per_call(fn, calls, repeats=repeats, warmup_calls=3)


def launch_rows(calls: int = 1000) -> list[dict]:
    import torch

    from gpuperf.kernels import elementwise as ew

    x = torch.randn(1024, device="cuda")
    y = torch.randn(1024, device="cuda")
    z = torch.empty_like(x)
    a = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
    c = torch.empty_like(a)
    kernels = {
        "torch.add 1024 fp32": lambda: torch.add(x, y, out=z),
        "triton vector_add 1024 fp32": lambda: ew.vector_add(x, y, z),
        "torch.matmul 64^3 bf16": lambda: torch.matmul(a, a, out=c),
    }
    rows = []
    for name, fn in kernels.items():
        eager = per_call_s(fn, calls)
        fn()
        torch.cuda.synchronize()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):  # warm-up on a side stream, as CUDA Graph capture requires
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        per_graph = 100
        with torch.cuda.graph(graph):
            for _ in range(per_graph):
                fn()
        replay = per_call_s(graph.replay, max(1, calls // per_graph)) / per_graph
        rows.append({"experiment": "launch", "kernel": name, "mode": "eager", "time_s": eager})
        rows.append({"experiment": "launch", "kernel": name, "mode": "cuda_graph", "time_s": replay})
    return rows


def size_sweep_rows(quick: bool = False) -> list[dict]:
    import torch

    rows = []
    add_sizes = [2**p for p in range(8, 29, 2 if quick else 1)]
    for n in add_sizes:
        x = torch.randn(n, device="cuda")
        y = torch.randn(n, device="cuda")
        z = torch.empty_like(x)
        calls = max(5, min(2000, int(2e9 / (12 * n))))
        t = per_call_s(lambda: torch.add(x, y, out=z), calls)
        rows.append({"experiment": "size_sweep", "op": "add fp32", "n": n, "flop": float(n),
                     "bytes_moved": 12.0 * n, "time_s": t})
        del x, y, z
    mm_sizes = [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192] if not quick else [64, 512, 4096]
    for n in mm_sizes:
        a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        c = torch.empty_like(a)
        calls = max(5, min(2000, int(2e12 / (2 * n**3))))
        t = per_call_s(lambda: torch.matmul(a, a, out=c), calls)
        rows.append({"experiment": "size_sweep", "op": "matmul bf16", "n": n, "flop": 2.0 * n**3,
                     "bytes_moved": 6.0 * n * n, "time_s": t})
        del a, c
    return rows


def compile_chain_rows(quick: bool = False) -> list[dict]:
    import torch

    def chain(x):  # six elementwise ops: mul, add, sin, mul, sub, relu (six kernels when eager)
        return torch.relu((x * 2.0 + 1.0).sin() * x - 0.5)

    rows = []
    compiled = torch.compile(chain)
    graphed = torch.compile(chain, mode="reduce-overhead")
    for n in (4096, 2**24):
        x = torch.randn(n, device="cuda")
        ref = chain(x)
        for mode, fn in (("eager", chain), ("torch.compile", compiled), ("torch.compile reduce-overhead", graphed)):
            for _ in range(3):
                out = fn(x)
            torch.cuda.synchronize()
            if not torch.allclose(out, ref, rtol=1e-5, atol=1e-5):
                raise RuntimeError(f"compile_chain: {mode} at n={n} differs from eager")
            calls = 1000 if n == 4096 else 50
            t = per_call_s(lambda: fn(x), calls)
            rows.append({"experiment": "compile_chain", "mode": mode, "n": n, "ops": 6,
                         "bytes_moved_fused": 8.0 * n, "time_s": t})
    return rows


def launch_split_rows(calls: int = 1000) -> list[dict]:
    import torch

    from gpuperf.kernels import elementwise as ew

    x = torch.randn(1024, device="cuda")
    y = torch.randn(1024, device="cuda")
    z = torch.empty_like(x)
    grid = (1,)
    kernels = {
        "triton vector_add (checked wrapper)": lambda: ew.vector_add(x, y, z),
        "triton _add_kernel[grid] (bare launch)": lambda: ew._add_kernel[grid](x, y, z, 1024, BLOCK_SIZE=1024),
        "torch.add": lambda: torch.add(x, y, out=z),
    }
    return [{"experiment": "launch_split", "kernel": name, "mode": "eager", "time_s": per_call_s(fn, calls)}
            for name, fn in kernels.items()]


def sync_trace_rows(kernels: int = 50, elements: int = 1 << 16) -> list[dict]:
    import torch
    from torch.profiler import ProfilerActivity, profile

    x = torch.randn(elements, device="cuda")
    rows = []
    for variant in ("no sync", "item() after each"):
        for _ in range(3):
            torch.add(x, 1.0).sum().item()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(kernels):
                y = torch.add(x, 1.0)
                if variant != "no sync":
                    y[0].item()
            torch.cuda.synchronize()
        events = [e for e in prof.events() if e.cpu_parent is None or e.device_type.name == "CUDA"]
        t0 = min(e.time_range.start for e in events)
        for e in events:
            rows.append({"experiment": "sync_trace", "variant": variant, "elements": elements, "name": e.name,
                         "lane": "device" if e.device_type.name == "CUDA" else "host",
                         "start_s": (e.time_range.start - t0) * 1e-6,
                         "duration_s": (e.time_range.end - e.time_range.start) * 1e-6})
    return rows


PARTS = ("launch", "size_sweep", "compile_chain", "launch_split", "sync_trace")
DEFAULT_PARTS = ("launch", "size_sweep", "compile_chain")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--parts", default=",".join(DEFAULT_PARTS), help=f"comma-separated, of {PARTS}")
    parser.add_argument("--name", default="overhead", help="stem of the JSON file (device appended)")
    parser.add_argument("--sync-elements", type=int, default=1 << 16,
                        help="fp32 elements of each add in sync_trace (2^24: kernels outlast their launch)")
    args = parser.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p]
    if not parts or any(p not in PARTS for p in parts):
        parser.error(f"--parts must be a comma-separated list of {PARTS}, got {args.parts!r}")
    import torch

    from gpuperf.benchmark import device_slug
    from gpuperf.records import provenance, save_run

    if not torch.cuda.is_available():
        print("bench/overhead.py needs a CUDA GPU", file=sys.stderr)
        return 2
    rows = []
    runners = {"launch": launch_rows, "size_sweep": lambda: size_sweep_rows(args.quick),
               "compile_chain": lambda: compile_chain_rows(args.quick), "launch_split": launch_split_rows,
               "sync_trace": lambda: sync_trace_rows(elements=args.sync_elements)}
    for part in (runners[p] for p in parts):
        t0 = time.perf_counter()
        new = part()
        rows += new
        print(f"{len(new)} rows in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        for r in new:
            print({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()})
    prov = provenance("python bench/overhead.py " + " ".join(argv))
    path = save_run(f"{args.name}_{device_slug(prov['device'])}", rows, prov, data_dir=args.out_dir)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
