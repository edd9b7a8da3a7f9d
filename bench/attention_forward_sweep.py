"""FlashAttention forward launch sweep on the H200 (jobs fwd-1, fwd-2, fwd-3; bench/NOTES.md, "fwd").

Compiles every candidate in parallel worker processes (sharing TRITON_CACHE_DIR), then in one process
checks each candidate against a float64 reference and times it next to SDPA's cuDNN and flash backends on
the same inputs. Writes $JOB_OUT/fwd_sweep.json and prints a table.

    JOB_OUT=RAW python bench/attention_forward_sweep.py   # the whole job; writes RAW/fwd_sweep.json
    python bench/attention_forward_sweep.py --compile I N   # worker: compile its share of the candidates
    python bench/attention_forward_sweep.py --record OUT.json JOB1.json [JOB2.json ...]
        # the jobs' fwd_sweep.json files -> one recorded run, book/data/attention_forward_sweep_h200.json

Times are the harness's (``gpuperf.benchmark.time_callable``); the job's report carries the harness's
provenance (``gpuperf.results.recorded.provenance``), which ``--record`` keeps (the reports of jobs fwd-1
and fwd-2, older, held only the device and the versions).

The candidates of rounds 1 and 2 used options of the kernel that lost and were removed (warp
specialisation with in-kernel descriptors, a persistent grid, a hand-pipelined loop); the recorded rows
keep their launch fields by name.
"""

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

if importlib.util.find_spec("gpuperf") is None:  # a machine without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

import torch  # noqa: E402

import gpuperf.kernels.flash_attention as fa  # noqa: E402

HC = fa.HopperConfig
DEV = "cuda" if torch.cuda.is_available() else "cpu"
DRY = DEV == "cpu"  # a dry run of the script's logic under the interpreter, tiny shapes

# Rounds 1 and 2 (jobs fwd-1, fwd-2) also tried warp specialisation, a persistent grid and a hand-pipelined
# loop, options since removed from the kernel (bench/NOTES.md, "fwd"). The candidates below are round 3
# (more, smaller programs per SM; N = 2048 for the short/long threshold of HOPPER_CONFIGS), prepared but not
# run: the session's device time ran out first.
CANDIDATES = {
    (128, False): [HC(128, 128, 8, 3), HC(64, 64, 4, 3), HC(64, 32, 4, 3), HC(64, 32, 4, 4), HC(64, 64, 4, 2)],
    (128, True): [HC(128, 128, 8, 3), HC(64, 64, 4, 3), HC(64, 32, 4, 3), HC(64, 32, 4, 4)],
    (64, False): [HC(128, 64, 8, 3), HC(128, 64, 4, 3, maxnreg=168), HC(128, 128, 8, 2, maxnreg=128),
                  HC(64, 64, 4, 3), HC(64, 64, 4, 4), HC(64, 128, 4, 2)],
    (64, True): [HC(128, 64, 8, 3), HC(128, 64, 4, 3, maxnreg=168), HC(128, 128, 8, 2, maxnreg=128),
                 HC(64, 64, 4, 3), HC(64, 64, 4, 4), HC(64, 128, 4, 2)],
}
POINTER = {64: (128, 64, 8, 3), 128: (128, 128, 8, 3)}  # the recorded pointer-kernel winners (fa-1)

SHAPES = [(d, causal, n) for d in (128, 64) for causal in (False, True) for n in (1024, 2048, 4096, 16384)]


def sync():
    if not DRY:
        torch.cuda.synchronize()


def jobs():
    """Work items for the workers: ("time", d, causal, cfg) compiles a timed candidate (fp16, the timed
    shapes' specialisation); ("check", dtype, d, causal, cfg) runs the awkward-shape checks."""
    out = [("time", d, causal, cfg) for (d, causal), cands in CANDIDATES.items() for cfg in cands]

    for dtype, n_cfg in (("fp16", 9), ("bf16", 2)):
        for (d, causal), cands in CANDIDATES.items():
            for cfg in [None] + cands[:n_cfg]:
                out.append(("check", dtype, d, causal, cfg))
    return out


def run_candidate(q, k, v, causal, cfg):
    if cfg == "pointer":
        return fa.flash_attention_forward(q, k, v, causal, variant="pointer", config=POINTER[q.shape[-1]])[0]
    return fa.flash_attention_forward(q, k, v, causal, variant="tma_host", hopper=cfg)[0]


def check_item(dtype_name, d, causal, cfg):
    """Awkward shapes (ragged N_k, N_q not a multiple of the block, one key) against float64, through the
    default path (cfg None) or one host-descriptor candidate; returns a list of result dicts."""
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[dtype_name]
    gen = torch.Generator(device=DEV).manual_seed(hash((dtype_name, d, causal, str(cfg))) % 2**31)
    out = []
    shapes = ((1, 3, 384, 384), (2, 2, 256, 300), (1, 2, 1025, 1025), (1, 1, 128, 77), (1, 1, 128, 1))
    for (b, h, n_q, n_k) in (shapes[:2] + shapes[3:] if DRY else shapes):
        if cfg is not None and n_q % cfg.block_m:
            continue
        q = torch.randn(b, h, n_q, d, device=DEV, dtype=dtype, generator=gen)
        k = torch.randn(b, h, n_k, d, device=DEV, dtype=dtype, generator=gen)
        v = torch.randn(b, h, n_k, d, device=DEV, dtype=dtype, generator=gen)
        ro, rl = fa.attention_reference(q, k, v, causal)
        try:
            if cfg is None:
                o, lse = fa.flash_attention_forward(q, k, v, causal)
            else:
                o, lse = fa.flash_attention_forward(q, k, v, causal, variant="tma_host", hopper=cfg)
            err = (o.double().cpu() - ro).abs().max().item()
            errl = (lse.double().cpu() - rl).abs().max().item()
            tol = 2e-3 if dtype == torch.float16 else 1.6e-2
            ok = bool(err <= tol * max(1.0, v.abs().max().item()) and errl <= tol * max(1.0, rl.abs().max().item()))
        except Exception as exc:  # noqa: BLE001
            err, errl, ok = f"{type(exc).__name__}: {str(exc)[:200]}", None, False
        out.append({"dtype": dtype_name, "d": d, "causal": causal, "shape": [b, h, n_q, n_k],
                    "config": None if cfg is None else list(cfg), "err_o": err, "err_lse": errl, "ok": ok})
    return out


def compile_worker(index, count):
    for i, item in enumerate(jobs()):
        if i % count != index:
            continue
        t = time.time()
        if item[0] == "check":
            for r in check_item(*item[1:]):
                print("CHECK " + json.dumps(r), flush=True)
            continue
        _, d, causal, cfg = item
        q = torch.randn(1, 16, 256, d, device=DEV, dtype=torch.float16)
        try:
            run_candidate(q, q, q, causal, cfg)
            sync()
            print(f"compiled d{d} causal={causal} {cfg if cfg == 'pointer' else tuple(cfg)} {time.time() - t:.1f}s",
                  flush=True)
        except Exception as exc:  # noqa: BLE001 - reported, the main process records it
            print(f"FAILED d{d} causal={causal} {cfg if cfg == 'pointer' else tuple(cfg)}: {type(exc).__name__}: "
                  f"{str(exc)[:300]}".replace("\n", " "), flush=True)


def reference(q, k, v, causal):
    q, k, v = (t[:1, :1].double() for t in (q, k, v))
    s = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    return (torch.softmax(s, -1) @ v)[0, 0]


def bench(fn):
    from gpuperf.benchmark import time_callable

    if DRY:
        t = time.time()
        fn()
        return time.time() - t
    return time_callable(fn, warmup_ms=10, rep_ms=40)  # median of do_bench, in seconds


def main():
    out_dir = os.environ.get("JOB_OUT", ".")
    t0 = time.time()
    workers = int(os.environ.get("FWD_WORKERS", "12"))
    if DRY:
        global SHAPES
        SHAPES = SHAPES[:2]
    procs = [subprocess.Popen([sys.executable, __file__, "--compile", str(i), str(workers)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in range(workers)]
    compile_log, checks = [], []
    for p in procs:
        text, _ = p.communicate()
        compile_log.extend(line for line in text.splitlines() if line.startswith(("compiled", "FAILED")))
        checks.extend(json.loads(line[6:]) for line in text.splitlines() if line.startswith("CHECK "))
        if p.returncode:
            compile_log.append(f"worker rc={p.returncode}: {text[-1500:]}")
    print(f"parallel compile + checks: {time.time() - t0:.1f}s", flush=True)
    for line in compile_log:
        print("  ", line)
    bad = [c for c in checks if not c["ok"]]
    print(f"awkward-shape checks: {len(checks) - len(bad)}/{len(checks)} ok", flush=True)
    for c in bad:
        print("   CHECK FAILED", c, flush=True)
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F

    results = []
    gen = torch.Generator(device=DEV).manual_seed(0)
    for d, causal, n in SHAPES:
        t_shape = time.time()
        b, h = (1, 1) if DRY else (32768 // n, 2048 // d)
        n = 256 if DRY else n
        q, k, v = (torch.randn(b, h, n, d, device=DEV, dtype=torch.float16, generator=gen) for _ in range(3))
        flop = fa.attention_flop(b, h, n, n, d, causal)
        ref = reference(q, k, v, causal).cpu()

        def sdpa(backend):
            if DRY:
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

        row = {"d": d, "causal": causal, "n": n, "b": b, "h": h}
        row["cudnn_s"] = bench(lambda: sdpa(SDPBackend.CUDNN_ATTENTION))
        row["flash_s"] = bench(lambda: sdpa(SDPBackend.FLASH_ATTENTION))
        cands = list(CANDIDATES[(d, causal)])
        row["cands"] = []
        failed = {line.split(": ")[0] for line in compile_log if line.startswith("FAILED")}
        for cfg in cands:
            entry = {"config": cfg if cfg == "pointer" else list(cfg)}
            if f"FAILED d{d} causal={causal} {cfg if cfg == 'pointer' else tuple(cfg)}" in failed:
                entry["error"] = "failed to compile in the worker"
                row["cands"].append(entry)
                continue
            try:
                tc = time.time()
                o = run_candidate(q, k, v, causal, cfg)
                sync()
                entry["first_call_s"] = time.time() - tc
                err = (o[0, 0].double().cpu() - ref).abs().max().item()
                entry["err"] = err
                if not err < 4e-3:
                    entry["error"] = f"wrong result: max error {err}"
                else:
                    entry["time_s"] = bench(lambda cfg=cfg: run_candidate(q, k, v, causal, cfg))
                    entry["tflops"] = flop / entry["time_s"] / 1e12
                    entry["vs_cudnn"] = row["cudnn_s"] / entry["time_s"]
            except Exception as exc:  # noqa: BLE001
                entry["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
            row["cands"].append(entry)
        row["cudnn_repeat_s"] = bench(lambda: sdpa(SDPBackend.CUDNN_ATTENTION))
        row["shape_s"] = time.time() - t_shape
        results.append(row)
        del q, k, v
        torch.cuda.empty_cache()
        best = max((c for c in row["cands"] if "vs_cudnn" in c), key=lambda c: c["vs_cudnn"], default=None)
        print(f"d{d} {'causal' if causal else 'full'} N{n}: cudnn {flop / row['cudnn_s'] / 1e12:.0f} TF/s "
              f"(repeat {flop / row['cudnn_repeat_s'] / 1e12:.0f}), flash {flop / row['flash_s'] / 1e12:.0f}; "
              f"best {best and best['config']} {best and round(best['vs_cudnn'], 3)} [{row['shape_s']:.1f}s]",
              flush=True)
        for c in row["cands"]:
            print(f"     {str(c['config']):60s} {c.get('tflops', 0):6.0f} TF/s  x{c.get('vs_cudnn', 0):.3f}  "
                  f"first {c.get('first_call_s', 0):.1f}s {c.get('error', '')[:120]}", flush=True)
    from gpuperf.results.recorded import provenance

    with open(os.path.join(out_dir, "fwd_sweep.json"), "w") as f:
        json.dump({"provenance": provenance("JOB_OUT=RAW python bench/attention_forward_sweep.py"),
                   "results": results, "checks": checks, "compile_log": compile_log,
                   "torch": torch.__version__, "triton": __import__("triton").__version__,
                   "device": torch.cuda.get_device_name() if not DRY else "cpu", "total_s": time.time() - t0}, f, indent=1)
    print(f"total {time.time() - t0:.1f}s")


FIELDS = ("block_m", "block_n", "num_warps", "num_stages")
#: Launch fields of rounds 1 and 2 (HopperConfig then had more options), by position.
OLD_FIELDS = {8: FIELDS + ("warp_specialize", "persistent", "maxnreg", "lookahead"),
              9: FIELDS + ("warp_specialize", "persistent", "maxnreg", "lookahead", "device_desc"),
              10: FIELDS + ("warp_specialize", "persistent", "maxnreg", "lookahead", "device_desc", "one_loop"),
              5: FIELDS + ("maxnreg",)}


def record(out_path, job_paths):
    """Flatten the jobs' fwd_sweep.json files into rows (one per timed candidate and shape) and save them
    with provenance as a recorded run (gpuperf.results.recorded.save_run)."""
    from gpuperf.results import recorded

    rows, prov = [], None
    for job_path in job_paths:
        job = json.load(open(job_path))
        job_name = Path(job_path).parent.name.replace(".result", "")
        if prov is None and "provenance" in job:  # the harness's provenance, taken by the job itself
            prov = {**job["provenance"], "command": "python bench/attention_forward_sweep.py, jobs "}
        prov = prov or {"device": job["device"], "driver": "not recorded by the job", "torch": job["torch"],
                        "triton": job["triton"], "date": "2026-12-01",
                        "command": "python gpujobs/fwd_sweep.py (= bench/attention_forward_sweep.py), jobs "}
        prov["command"] += job_name + " "
        for shape in job["results"]:
            base = {"job": job_name, "head_dim": shape["d"], "mask": "causal" if shape["causal"] else "full",
                    "n_seq": shape["n"], "batch": shape["b"], "heads": shape["h"], "dtype": "fp16",
                    "cudnn_time_s": shape["cudnn_s"], "cudnn_repeat_time_s": shape["cudnn_repeat_s"],
                    "flash_time_s": shape["flash_s"]}
            for cand in shape["cands"]:
                cfg = cand["config"]
                launch = ({"kernel": "pointer", **dict(zip(FIELDS, POINTER[shape["d"]]))} if cfg == "pointer"
                          else {"kernel": "tma_host", **dict(zip(OLD_FIELDS[len(cfg)], cfg))})
                rows.append({**base, **launch, "time_s": cand.get("time_s"), "ratio_to_cudnn": cand.get("vs_cudnn"),
                             "max_error": cand.get("err") if isinstance(cand.get("err"), float) else None,
                             "error": cand.get("error")})
    prov["command"] = prov["command"].strip()
    print(recorded.save_run(Path(out_path).stem, rows, prov, data_dir=Path(out_path).parent))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--record":
        record(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) > 1 and sys.argv[1] == "--compile":
        compile_worker(int(sys.argv[2]), int(sys.argv[3]))
    elif len(sys.argv) > 1:  # --help or a mistake: the usage, not a run
        print(__doc__)
        sys.exit(0 if sys.argv[1] in ("-h", "--help") else 2)
    else:
        main()
