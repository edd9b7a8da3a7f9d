"""Probe: where the dispatch's time goes on the small matmuls it loses (GPU).

    PYTHONPATH=$PWD/lib python3 bench/matmul_small_probe.py OUT.json

For each shape and dtype (fp16, bf16, fp16 again: an order effect shows as the two fp16 rows differing),
times ``matmul_auto``, the persistent TMA kernel and cuBLAS four ways: ``do_bench`` (L2 flushed, the
benchmark family's timing), a CUDA graph of the same call replayed (no host time), the host time of one call
(``perf_counter`` over back-to-back calls) and the device time of the kernels of one call
(``torch.profiler``). A call is host-bound where do_bench's time follows the host time and the graph's
does not. Prints one line per row and writes the rows as JSON.
"""
from __future__ import annotations

import json
import time

SHAPES = ((1000, 1000, 1000), (64, 4096, 4096), (64, 14336, 4096), (16, 4096, 14336), (1536, 1536, 1536),
          (64, 4096, 14336))
DTYPES = ("fp16", "bf16", "fp16")


def host_us(fn, n=200):
    import torch

    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


def graph_us(fn):
    import torch
    import triton

    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        return triton.testing.do_bench(g.replay, return_mode="median") * 1e3
    except Exception as e:  # noqa: BLE001
        return f"graph failed: {type(e).__name__}: {str(e)[:120]}"


def kernels_us(fn, calls=20):
    import torch
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    per = {}
    for e in prof.key_averages():
        if e.device_type.name == "CUDA" and e.self_device_time_total > 0:
            per[e.key[:60]] = round(e.self_device_time_total / calls, 2)
    return per


def main(out_path):
    import torch
    import triton

    from gpuperf.kernels import matmul as mm
    from gpuperf.kernels import matmul_splitk as mks

    if not torch.cuda.is_available():
        raise SystemExit("matmul_small_probe.py needs a CUDA GPU")
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    info = {"device": props.name, "torch": torch.__version__, "triton": triton.__version__,
            "date": time.strftime("%Y-%m-%d"), "rows": []}
    print(info)
    for m, n, k in SHAPES:
        for dname in DTYPES:
            dt = {"fp16": torch.float16, "bf16": torch.bfloat16}[dname]
            a = torch.randn(m, k, device="cuda", dtype=dt)
            b = torch.randn(k, n, device="cuda", dtype=dt)
            plan = mks.plan_matmul(m, n, k, sms, tma_ok=True)
            ref = a.double() @ b.double()
            got = mks.matmul_auto(a, b).double()
            err = float((got - ref).abs().max() / ref.abs().max())
            fns = {"auto": lambda: mks.matmul_auto(a, b), "tma": lambda: mm.matmul(a, b),
                   "cublas": lambda: torch.matmul(a, b)}
            for name, fn in fns.items():
                row = {"shape": [m, n, k], "dtype": dname, "fn": name, "plan": repr(plan) if name == "auto" else "",
                       "rel_err": err if name == "auto" else None,
                       "do_bench_us": triton.testing.do_bench(fn, return_mode="median") * 1e3,
                       "graph_us": graph_us(fn), "host_us": host_us(fn), "kernels_us": kernels_us(fn)}
                info["rows"].append(row)
                g = row["graph_us"]
                print(f"{m}x{n}x{k} {dname} {name:6s} do_bench {row['do_bench_us']:8.2f} graph "
                      f"{g if isinstance(g, str) else round(g, 2)} host {row['host_us']:7.2f} "
                      f"kernels {row['kernels_us']} {row['plan']} err {row['rel_err']}", flush=True)
    locks = mks._locks
    info["locks_nonzero"] = {k: int((v != 0).sum()) for k, v in locks.items()}
    print("locks nonzero after:", info["locks_nonzero"])
    with open(out_path, "w") as f:
        json.dump(info, f, indent=1)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the JSON file to write")
    main(parser.parse_args().out)
