"""Candidate launches of the FlashAttention backward against SDPA's cuDNN backward, same run (GPU only).

Used to choose ``gpuperf.kernels.flash_attention_bwd.GPU_CONFIGS`` (bench/NOTES.md, "bwd"). Modes:

* ``variants``: for d = 64 and 128, full and causal, fp16, N = 4096, B H N = 2^19 (the family's shapes),
  each candidate (the split design: a dK/dV kernel and a dQ kernel; the fused design: one kernel, dQ by
  fp32 atomic adds) is checked on the GPU against float64 (fp16 and bf16, N_q != N_k, blocks that do not
  divide N) and timed as a whole backward (all its launches) next to cuDNN's backward; the registers and
  spills of each compiled kernel are recorded. Writes ``attention_backward_variants_<device>.json``.
* ``overhead``: where the time of a small fwd+bwd step goes (B = 1, H = 16, d = 64, N = 1K/2K): wall time
  per step, the GPU kernel time per step (torch.profiler), and the host time of each Python call.
  Writes ``attention_backward_overhead_<device>.json``.

Compiles dominate a short job: ``precompile`` builds every kernel a mode needs in parallel worker processes
first (Triton's on-disk cache then serves the timed process), on tiny inputs with the same specialisation.

* ``profile``: one backward of a candidate (or the default) and one of cuDNN's in the harness's profiler
  window; with ``--ncu CSV`` it runs itself under the harness's ncu command line (the sections of
  ``gpuperf.benchmark.profile.SECTIONS``, the metrics of :data:`PROFILE_METRICS`);
* ``collect``: per-kernel summaries of such reports -> ``attention_backward_profile_<device>.json``.

Times are the harness's (``gpuperf.benchmark.time_callable``: the median of do_bench; host times
``time_host_callable``, wall times ``time_wall_per_call``); provenance and recording are
``gpuperf.records``'s.

    python bench/attention_backward_sweep.py variants OUT_DIR
    python bench/attention_backward_sweep.py overhead OUT_DIR
    python bench/attention_backward_sweep.py precompile    # the defaults, before bench/run.py
    python bench/attention_backward_sweep.py profile default 128 causal --ncu RAW/after.csv
    python bench/attention_backward_sweep.py collect OUT_DIR LABEL=CSV [LABEL=CSV ...]
    python bench/attention_backward_sweep.py launch        # host time of single launches (printed only)
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

if importlib.util.find_spec("gpuperf") is None:  # a machine without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

import torch  # noqa: E402

from gpuperf.benchmark import profile as prof  # noqa: E402
from gpuperf.benchmark import time_callable, time_host_callable, time_wall_per_call  # noqa: E402
from gpuperf.kernels import flash_attention_bwd as fab  # noqa: E402

Cfg = fab.BackwardConfig

#: Candidates per head dimension: name -> config. "S": split (dK/dV + dQ kernels), "F": fused (atomic dQ).
CANDIDATES = {
    64: {
        "S0": Cfg(32, 128, 128, 64, num_warps=4, num_stages=3, dq_num_warps=8),  # last session's default
        "S0s4": Cfg(32, 128, 128, 64, num_warps=4, num_stages=4, dq_num_warps=8, dq_num_stages=3),
        "S0s5": Cfg(32, 128, 128, 64, num_warps=4, num_stages=5, dq_num_warps=8, dq_num_stages=3),
        "S0T": Cfg(32, 128, 128, 64, num_warps=4, num_stages=3, dq_num_warps=8, tma=True),
        "S2": Cfg(32, 128, 128, 64, num_warps=4, num_stages=3, dq_num_warps=8, dq_num_stages=2),
        "F4": Cfg(64, 128, 64, 128, num_warps=8, num_stages=3, fused=True),
    },
    128: {
        "S0": Cfg(64, 64, 64, 64, num_warps=4, num_stages=2),  # last session's default
        "S0T": Cfg(64, 64, 64, 64, num_warps=4, num_stages=2, tma=True),
        "S3": Cfg(64, 64, 64, 64, num_warps=4, num_stages=3),
        "S4": Cfg(64, 64, 128, 64, num_warps=4, num_stages=2, dq_num_warps=8),
        "F4": Cfg(64, 128, 64, 128, num_warps=8, num_stages=3, fused=True),
        "F1": Cfg(64, 128, 64, 128, num_warps=8, num_stages=2, fused=True),
    },
}

#: The metrics of ``profile --ncu``: the harness's kernel metrics and the L2's reduction sectors (the fused
#: design's atomic dQ adds).
PROFILE_METRICS = prof.KERNEL_METRICS + ("lts__t_sectors_op_red.sum",)

ROWS = 2**19
WIDTH = 2048
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def _tiny(head_dim, dtype, n_q=128, n_k=128):
    # Same specialisation as the timed shapes: every size and stride a multiple of 16, H = 16.
    g = torch.Generator(device="cuda").manual_seed(1)
    q = torch.randn(1, 16, n_q, head_dim, device="cuda", generator=g).to(dtype)
    k, v = (torch.randn(1, 16, n_k, head_dim, device="cuda", generator=g).to(dtype) for _ in range(2))
    do = torch.randn_like(q)
    lse = torch.randn(1, 16, n_q, device="cuda", generator=g).abs() + 5
    return q, k, v, q.clone(), lse, do


def _compile_one(job):
    head_dim, dtype_name, causal, cfg = job
    q, k, v, o, lse, do = _tiny(head_dim, DTYPES[dtype_name])
    t0 = time.perf_counter()
    try:
        if cfg == "forward":
            from gpuperf.kernels.flash_attention import flash_attention_forward

            for tma in (False, True):
                flash_attention_forward(q, k, v, causal=causal, use_tma=tma)
        else:
            fab.flash_attention_backward(q, k, v, o, lse, do, causal, config=cfg)
        torch.cuda.synchronize()
    except Exception as exc:  # e.g. out of shared memory: the timed run records it per candidate
        return repr(exc)[:200]
    return time.perf_counter() - t0


def precompile(jobs, workers=14) -> float:
    """Compile every (head_dim, dtype, causal, config or "forward") in parallel processes; seconds taken."""
    import multiprocessing as mp

    t0 = time.perf_counter()
    with mp.get_context("spawn").Pool(min(workers, len(jobs))) as pool:
        pool.map(_compile_one, jobs, chunksize=1)
    return time.perf_counter() - t0


def _sdpa_cudnn(q, k, v, causal):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def _check(cfg, head_dim, dtype, causal, gen) -> float:
    """Max error of dq, dk, dv vs float64 over max|ref|, at N_q = 1040, N_k = 784 (multiples of 16 that
    no block divides, so the compiled kernels are the timed ones)."""
    shape_q, shape_k = (2, 16, 1040, head_dim), (2, 16, 784, head_dim)
    q = torch.randn(shape_q, device="cuda", generator=gen).to(dtype)
    k, v = (torch.randn(shape_k, device="cuda", generator=gen).to(dtype) for _ in range(2))
    do = torch.randn(shape_q, device="cuda", generator=gen).to(dtype)
    q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
    o64, lse64 = fab.attention_forward_torch(q64, k64, v64, causal)
    ref = torch.autograd.grad(o64, (q64, k64, v64), do.double())
    got = fab.flash_attention_backward(q, k, v, o64.detach().to(dtype), lse64.detach().float(), do, causal,
                                       config=cfg)
    size = max(float(r.abs().max()) for r in ref)
    return max(float((g.double() - r).abs().max()) for g, r in zip(got, ref)) / size


def _one_shape(head_dim, causal, table, gen, backward_flop, n_seq=4096):
    """cuDNN's backward, then every candidate, at one (d, mask), fp16: rows with times and errors."""
    results = []
    heads = WIDTH // head_dim
    batch = ROWS // (heads * n_seq)
    mask = "causal" if causal else "full"
    shape = (batch, heads, n_seq, head_dim)
    q, k, v, do = (torch.randn(shape, device="cuda", dtype=torch.float16, generator=gen) for _ in range(4))
    flop = backward_flop(batch, heads, n_seq, head_dim, causal)
    qr, kr, vr = (t.clone().requires_grad_() for t in (q, k, v))
    t0 = time.perf_counter()
    out = _sdpa_cudnn(qr, kr, vr, causal)
    torch.autograd.grad(out, (qr, kr, vr), do, retain_graph=True)
    torch.cuda.synchronize()
    first_s = time.perf_counter() - t0
    t_ref = time_callable(lambda: torch.autograd.grad(out, (qr, kr, vr), do, retain_graph=True),
                          warmup_ms=10, rep_ms=40)
    row = {"head_dim": head_dim, "mask": mask, "n_seq": n_seq, "batch": batch, "heads": heads,
           "impl": "sdpa-cudnn", "time_s": t_ref, "tflop_per_s": flop / t_ref / 1e12, "first_call_s": first_s}
    results.append(row)
    print(row, flush=True)
    o, lse = _forward(q, k, v, causal)
    for name, cfg in table.items():
        row = {"head_dim": head_dim, "mask": mask, "n_seq": n_seq, "batch": batch, "heads": heads,
               "impl": name, "fused": cfg.fused, "dkdv_block_m": cfg.dkdv_block_m,
               "dkdv_block_n": cfg.dkdv_block_n, "dq_block_m": cfg.dq_block_m, "dq_block_n": cfg.dq_block_n,
               "num_warps": cfg.num_warps, "num_stages": cfg.num_stages, "dq_num_warps": cfg.dq_num_warps,
               "dq_num_stages": cfg.dq_num_stages, "tma": cfg.tma}
        try:
            row["error_fp16"] = _check(cfg, head_dim, torch.float16, causal, gen)
            row["error_bf16"] = _check(cfg, head_dim, torch.bfloat16, causal, gen)
            *_, kernels = fab.flash_attention_backward(q, k, v, o, lse, do, causal, config=cfg,
                                                       return_kernels=True)
            for kname, kern in kernels.items():
                row[f"{kname}_regs"] = getattr(kern, "n_regs", None)
                row[f"{kname}_spills"] = getattr(kern, "n_spills", None)

            def run(cfg=cfg):
                return fab.flash_attention_backward(q, k, v, o, lse, do, causal, config=cfg)

            t = time_callable(run, warmup_ms=10, rep_ms=40)
            row.update(time_s=t, tflop_per_s=flop / t / 1e12, ratio_to_cudnn=t_ref / t)
        except Exception as exc:  # out of resources: record and go on
            row["failed"] = repr(exc)[:300]
        results.append(row)
        print(row, flush=True)
    return results


def variants(out_dir: Path) -> None:
    from gpuperf.benchmark import device_slug
    from gpuperf.benchmark.family.attention_backward import backward_flop
    from gpuperf import records as recorded

    jobs = [(d, dt, c, cfg) for d, table in CANDIDATES.items() for cfg in table.values()
            for dt in ("fp16", "bf16") for c in (False, True)]
    jobs += [(d, "fp16", c, "forward") for d in CANDIDATES for c in (False, True)]
    print(f"precompile {len(jobs)} backward variants: {precompile(jobs):.1f} s", flush=True)
    gen = torch.Generator(device="cuda").manual_seed(0)
    results = []
    for head_dim, table in CANDIDATES.items():
        for causal in (False, True):
            results += _one_shape(head_dim, causal, table, gen, backward_flop)
            torch.cuda.empty_cache()
    print("\nsummary (fp16, N = 4096, B H N = 2^19): TFLOP/s and ratio to cuDNN's backward")
    for r in results:
        print(f"d={r['head_dim']:<4} {r['mask']:<7} {r['impl']:<10} "
              f"{r.get('tflop_per_s', float('nan')):7.1f} {r.get('ratio_to_cudnn', 1.0):6.3f} "
              f"err16 {r.get('error_fp16', 0):.1e} err_bf16 {r.get('error_bf16', 0):.1e} "
              f"regs/spills {[(k[:-5], r[k], r[k[:-5] + '_spills']) for k in r if k.endswith('_regs')]} "
              f"{r.get('failed', '')}")
    name = f"attention_backward_variants_{device_slug(torch.cuda.get_device_name())}"
    prov = recorded.provenance("python bench/attention_backward_sweep.py variants")
    print(recorded.save_run(name, results, prov, data_dir=out_dir))


def _forward(q, k, v, causal):
    from gpuperf.kernels.flash_attention import flash_attention_forward

    return flash_attention_forward(q, k, v, causal=causal)


def overhead(out_dir: Path) -> None:
    """Wall time, GPU kernel time and host time of one fwd+bwd step at small shapes."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.profiler import ProfilerActivity, profile

    from gpuperf.benchmark import device_slug
    from gpuperf import records as recorded

    def sdpa(backend):
        def fn(q, k, v):
            with sdpa_kernel(backend):
                return torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return fn

    impls = {"triton": fab.flash_attention, "sdpa-flash": sdpa(SDPBackend.FLASH_ATTENTION),
             "sdpa-cudnn": sdpa(SDPBackend.CUDNN_ATTENTION)}
    results = []
    for n_seq, batch in ((1024, 1), (2048, 1), (1024, 32)):
        shape = (batch, 16, n_seq, 64)
        q, k, v, do = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(4))
        q, k, v = (t.requires_grad_() for t in (q, k, v))
        for name, fn in impls.items():
            def step(fn=fn):
                return torch.autograd.grad(fn(q, k, v), (q, k, v), do)

            # 50 steps issued back to back: the host's time to issue one (queue not full), then the wall
            # time of one with the GPU synchronised at the end (the harness's two timers).
            host_s = time_host_callable(step, calls=50, batches=1, warmup_calls=5)
            wall_s = time_wall_per_call(step, calls=50, repeats=1, warmup_calls=0)
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(10):
                    step()
                torch.cuda.synchronize()
            kernels = {}
            for evt in prof.key_averages():
                dev = getattr(evt, "device_time_total", None) or getattr(evt, "cuda_time_total", 0)
                if dev and evt.count:
                    kernels[evt.key[:60]] = (evt.count / 10, dev / 10 * 1e-6)
            gpu_s = sum(t for _, t in kernels.values())
            row = {"impl": name, "n_seq": n_seq, "batch": batch, "heads": 16, "head_dim": 64,
                   "wall_s": wall_s, "host_issue_s": host_s, "gpu_kernel_s": gpu_s, "kernels": kernels}
            results.append(row)
            print(f"{name:<11} N={n_seq} B={batch}: wall {wall_s * 1e6:8.1f} us  host issue "
                  f"{host_s * 1e6:8.1f} us  GPU kernels {gpu_s * 1e6:8.1f} us", flush=True)
            for kname, (count, t) in sorted(kernels.items(), key=lambda x: -x[1][1])[:8]:
                print(f"    {count:4.1f} x {kname:<60} {t * 1e6:8.1f} us", flush=True)
    # Host time of each Python call at a tiny shape (GPU work ~ microseconds): the fixed cost.
    q, k, v, do = (torch.randn(1, 2, 64, 64, device="cuda", dtype=torch.float16) for _ in range(4))
    from gpuperf.kernels.flash_attention import flash_attention_forward

    o, lse = flash_attention_forward(q, k, v)
    calls = {"forward": lambda: flash_attention_forward(q, k, v),
             "backward": lambda: fab.flash_attention_backward(q, k, v, o, lse, do),
             "checks": lambda: fab._check_attention_inputs(q, k, v),
             "torch.empty x4": lambda: [torch.empty_like(q) for _ in range(4)]}
    for name, fn in calls.items():
        host_s = time_host_callable(fn, calls=200, batches=1, warmup_calls=20)
        results.append({"impl": "host", "call": name, "host_s": host_s})
        print(f"host time of {name}: {host_s * 1e6:.1f} us", flush=True)
    name = f"attention_backward_overhead_{device_slug(torch.cuda.get_device_name())}"
    prov = recorded.provenance("python bench/attention_backward_sweep.py overhead")
    print(recorded.save_run(name, results, prov, data_dir=out_dir))


def profile(name: str, head_dim: int, causal: bool, n_seq: int = 4096) -> None:
    """One backward of candidate ``name`` (or the default, "default") and one of cuDNN's inside a profiler
    window, at ``bench/profile_kernels.py``'s shapes (B = 32768 / N, H = 2048 / d), for ncu."""
    batch, heads = max(1, 32768 // n_seq), 2048 // head_dim
    q, k, v, do = (torch.randn(batch, heads, n_seq, head_dim, device="cuda", dtype=torch.float16)
                   for _ in range(4))
    o, lse = _forward(q, k, v, causal)
    cfg = None if name == "default" else CANDIDATES[head_dim][name]
    qr, kr, vr = (t.clone().requires_grad_() for t in (q, k, v))
    out = _sdpa_cudnn(qr, kr, vr, causal)
    calls = [lambda: fab.flash_attention_backward(q, k, v, o, lse, do, causal, config=cfg),
             lambda: torch.autograd.grad(out, (qr, kr, vr), do, retain_graph=True)]
    prof.profile_window(calls)  # warm-up twice, then one call each in the window


def launch_cost() -> None:
    """Host time of single launches (tiny grid): where the backward's ~130 us of host time goes."""
    q, k, v, do = (torch.randn(1, 2, 64, 64, device="cuda", dtype=torch.float16) for _ in range(4))
    o, lse = _forward(q, k, v, False)
    delta = torch.empty(1, 2, 64, device="cuda")
    dk, dv = torch.empty_like(k), torch.empty_like(v)
    cfg = fab.SPLIT_CONFIGS[64]
    calls = {
        "preprocess launch (5 args)": lambda: fab._preprocess_kernel[(1, 2)](
            o, do, delta, delta, 64, BLOCK_M=64, HEAD_DIM=64, ZERO_DQ=False),
        "dkdv launch (13 args)": lambda: fab._dkdv_kernel[(1, 2)](
            q, k, v, do, lse, delta, dk, dv, delta, 64, 64, 0.18, 0.125, CAUSAL=False,
            BLOCK_M=cfg.dkdv_block_m, BLOCK_N=cfg.dkdv_block_n, HEAD_DIM=64, FUSED_DQ=False, USE_TMA=False,
            PRECISION="default", num_warps=cfg.num_warps, num_stages=cfg.num_stages),
        "flash_attention_backward": lambda: fab.flash_attention_backward(q, k, v, o, lse, do),
        "torch.empty": lambda: torch.empty(1, 2, 64, 64, device="cuda"),
    }
    for name, fn in calls.items():
        host_s = time_host_callable(fn, calls=300, batches=1, warmup_calls=20)
        print(f"host time of {name}: {host_s * 1e6:.1f} us", flush=True)


def collect(out_dir: Path, reports: list[str]) -> None:
    """Per-kernel summaries (``gpuperf.benchmark.profile.kernel_summary``) of ncu CSV reports given as LABEL=PATH (e.g.
    before=bench/profiles/.../ncu_attn_bwd_d128_causal_n4096.csv): ``attention_backward_profile_<device>``."""
    from gpuperf.benchmark import device_slug
    from gpuperf import records as recorded

    rows = []
    for item in reports:
        label, _, path = item.partition("=")
        for launch in prof.parse_ncu_csv(Path(path).read_text()):
            summary = prof.kernel_summary(launch)
            summary.pop("stalls", None)
            red = launch["metrics"].get("lts__t_sectors_op_red.sum", (None, None))[1]
            rows.append({"run": label, "report": Path(path).name, "id": launch["id"], **summary,
                         "l2_reduction_sectors": red if isinstance(red, float) else None})
            print(rows[-1], flush=True)
    prov = recorded.provenance("ncu --clock-control none (bench/attention_backward_sweep.py profile, "
                               "bench/profile_kernels.py) + attention_backward_sweep.py collect")
    name = f"attention_backward_profile_{device_slug(prov['device'])}"  # the machine that collects
    print(recorded.save_run(name, rows, prov, data_dir=out_dir))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    for mode in ("variants", "overhead"):
        sub = modes.add_parser(mode)
        sub.add_argument("out_dir", type=Path, nargs="?", default=Path.cwd(), help="folder for the JSON")
    sub = modes.add_parser("profile", help="one backward and cuDNN's in the profiler window")
    sub.add_argument("name", help='a candidate of CANDIDATES[head_dim], or "default"')
    sub.add_argument("head_dim", type=int, choices=sorted(CANDIDATES))
    sub.add_argument("mask", choices=("full", "causal"))
    sub.add_argument("--ncu", type=Path, default=None, metavar="CSV", help="run under ncu, report here")
    sub = modes.add_parser("collect", help="ncu reports -> attention_backward_profile_<device>.json")
    sub.add_argument("out_dir", type=Path)
    sub.add_argument("reports", nargs="+", metavar="LABEL=CSV")
    modes.add_parser("precompile", help="compile the default kernels (forward + backward) for bench/run.py")
    modes.add_parser("launch", help="host time of single launches (printed)")
    args = parser.parse_args(argv)
    if args.mode == "profile" and args.ncu is not None:
        program = [sys.executable, __file__, "profile", args.name, str(args.head_dim), args.mask]
        print(f"wrote {prof.run_ncu(prof.ncu_command(program, metrics=PROFILE_METRICS), args.ncu)}")
    elif args.mode == "profile":
        profile(args.name, args.head_dim, args.mask == "causal")
    elif args.mode == "launch":
        launch_cost()
    elif args.mode == "collect":
        collect(args.out_dir, args.reports)
    elif args.mode == "precompile":
        defaults = [(d, dt, c, cfg) for d in (64, 128) for dt in ("fp16", "bf16") for c in (False, True)
                    for cfg in ("forward", fab.GPU_CONFIGS[(d, c)])]
        print(f"precompiled {len(defaults)} kernel sets in {precompile(defaults):.1f} s", flush=True)
    else:
        {"variants": variants, "overhead": overhead}[args.mode](args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
