"""Probe of the Gluon FlashAttention backward on the H200 (issue 34): correctness, registers, time.

Usage (repository root, PYTHONPATH=lib)::

    python bench/gluon_attention_bwd_probe.py warm [WORKERS]   # compile every launch, in parallel
    timeout 30 python bench/gluon_attention_bwd_probe.py check [OUT_DIR]  # float64 checks, awkward shapes
    python bench/gluon_attention_bwd_probe.py time [OUT_DIR]   # registers, spills, times vs Triton, cuDNN

``check`` compares dQ, dK, dV of each Gluon variant (:data:`VARIANTS`) and of PyTorch's SDPA backward
with a float64 reference (the error relative to the reference's largest entry) and passes when the Gluon
error is within twice SDPA's (or :data:`FLOOR`). O and L come from PyTorch's FlashAttention-2 forward
(nothing to compile). ``time`` times the backward pass alone (O and L given) of the variants that passed
(:data:`VARIANTS`, :data:`TIME_ONLY`) with ``gpuperf.benchmark.time_callable`` (median of
``triton.testing.do_bench``, L2 flushed between calls), the Triton backward and cuDNN's backward through
SDPA, on three bf16 shapes, and prints the ratios; with ``OUT_DIR`` it saves a record there
(``gpuperf.records.save_run``).
Every step catches and prints its exception, so one failure does not hide the rest. Run ``check``
under ``timeout`` before any timing: a wrong barrier (``_cta_barrier`` inside a partition must sync only
the consumer warps; ``mbarrier.arrive(count=1)`` once per partition) deadlocks the launch, and a check
killed that way leaves every variant marked failed, so ``time`` runs none of them.
"""

from __future__ import annotations

import json
import math
import sys
import time
import traceback
from pathlib import Path

import torch

CHECKS = [  # (dtype, B, H, N_q, N_k, d, causal): the timed shapes' variants, on awkward sizes
    (torch.bfloat16, 1, 2, 333, 333, 64, True),
    (torch.bfloat16, 1, 2, 333, 333, 64, False),
    (torch.bfloat16, 2, 1, 200, 333, 64, False),
    (torch.bfloat16, 1, 2, 333, 333, 128, True),
    (torch.bfloat16, 1, 1, 1000, 1000, 128, True),
    (torch.float16, 1, 2, 257, 257, 128, False),
]

SHAPES = [  # (B, H, N, d, causal), bf16
    (4, 32, 4096, 128, True),
    (2, 16, 10240, 64, False),
    (8, 8, 2048, 64, True),
]


def _inputs(dtype, b, h, n_q, n_k, d, seed=0):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn((b, h, n_q, d), device="cuda", dtype=dtype, generator=gen)
    k, v = (torch.randn((b, h, n_k, d), device="cuda", dtype=dtype, generator=gen) for _ in range(2))
    do = torch.randn((b, h, n_q, d), device="cuda", dtype=dtype, generator=gen)
    return q, k, v, do


def _forward(q, k, v, causal):
    """O and the natural-log L of the rows, from PyTorch's FlashAttention-2 forward (no compile here)."""
    out = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal)
    return out[0].contiguous(), out[1][..., :q.shape[2]].float().contiguous()


def _sdpa_grads(q, k, v, do, causal):
    qr, kr, vr = (t.detach().clone().requires_grad_() for t in (q, k, v))
    o = torch.nn.functional.scaled_dot_product_attention(qr, kr, vr, is_causal=causal)
    return torch.autograd.grad(o, (qr, kr, vr), do)


def _reference(q, k, v, do, causal):
    q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
    s = q64 @ k64.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:  # top-left aligned: query i sees keys j <= i
        keep = torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~keep, float("-inf"))
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    o = p @ v64
    return torch.autograd.grad(o, (q64, k64, v64), do.double())


def _rel(x, ref):
    return float((x.double() - ref).abs().max() / ref.abs().max().clamp_min(1e-30))


#: Variants of the Gluon kernel tried: name -> config (BLOCK_N, BLOCK_M, STAGES, warps, specialised, dQ
#: transposed, L and D one value a thread) per d.
VARIANTS = {
    "plain": {64: (128, 64, 2, 8, False, False, False), 128: (128, 64, 2, 8, False, False, False)},
    "ws": {64: (128, 64, 2, 8, True, False, False), 128: (128, 64, 2, 8, True, False, False)},
    # dQ^T = K^T dS^T (32-query blocks at d = 128): 0-40 B of spills instead of 184-288 on the CPU compile
    "plain-dqt": {64: (128, 64, 2, 8, False, True, False), 128: (128, 32, 2, 8, False, True, False)},
    "ws-dqt": {64: (128, 64, 2, 8, True, True, False), 128: (128, 32, 2, 8, True, True, False)},
}
#: Extra variants timed (not checked on the small shapes), each built like the checked variant whose name
#: starts it: timed only when that one passed.
TIME_ONLY = {
    "plain-dqt-n64w4": {64: (64, 64, 2, 4, False, True, False), 128: (64, 32, 2, 4, False, True, False)},
    "plain-n64w4": {64: (64, 64, 2, 4, False, False, False), 128: (64, 64, 2, 4, False, False, False)},
    "plain-lsev": {128: (128, 64, 2, 8, False, False, True)},
    "ws-lsev": {128: (128, 64, 2, 8, True, False, True)},
    "plain-s3": {128: (128, 64, 3, 8, False, False, False)},
}
FLOOR = {torch.float16: 2e-3, torch.bfloat16: 1e-2}


def check(out_dir: str | None = None) -> bool:
    """Every variant on every shape of :data:`CHECKS`, one variant after the other (a variant that hangs
    leaves the earlier ones' results); with ``out_dir``, ``variants_ok.json`` there says after each
    variant which passed (``time`` times only those)."""
    from gpuperf.kernels import gluon_attention_bwd as gab

    print("gluon available:", gab.available(), "warp_specialize list API:",
          getattr(gab, "_WS_LIST_API", None), flush=True)
    cases = []
    for dtype, b, h, n_q, n_k, d, causal in CHECKS:
        label = f"{str(dtype)[6:]} B{b} H{h} Nq{n_q} Nk{n_k} d{d} {'causal' if causal else 'full'}"
        try:
            q, k, v, do = _inputs(dtype, b, h, n_q, n_k, d)
            o, lse = _forward(q, k, v, causal)
            ref = _reference(q, k, v, do, causal)
            base = [_rel(x, r) for x, r in zip(_sdpa_grads(q, k, v, do, causal), ref)]
            cases.append((label, dtype, d, causal, (q, k, v, o, lse, do), ref, base))
        except Exception:  # noqa: BLE001 - print and go on to the next shape
            print(f"ERROR (reference) {label}", flush=True)
            traceback.print_exc()
            sys.stdout.flush()
    passed = {}
    if out_dir:  # every variant unchecked until it passes: a check killed by its timeout (a barrier
        # deadlock hangs the launch) leaves ``time`` nothing to run rather than everything
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        (Path(out_dir) / "variants_ok.json").write_text(json.dumps(dict.fromkeys(VARIANTS, False)))
    for name, configs in VARIANTS.items():
        ok_variant = len(cases) == len(CHECKS)
        print(f"checking {name} (a hang here is a deadlock: run under `timeout`)", flush=True)
        for label, dtype, d, causal, (q, k, v, o, lse, do), ref, base in cases:
            if d not in configs:
                continue
            try:
                t0 = time.time()
                glu = gab.gluon_attention_backward(q, k, v, o, lse, do, causal, config=configs[d],
                                                   return_kernels=True)
                torch.cuda.synchronize()
                handle = glu[3]["gluon"]
                errs = []
                ok = True
                for gname, x, r, eb in zip("QKV", glu[:3], ref, base):
                    eg = _rel(x, r)
                    good = math.isfinite(eg) and eg <= max(2 * eb, FLOOR[dtype])
                    ok &= good
                    errs.append(f"d{gname} {eg:.2e} (sdpa {eb:.2e}){'' if good else ' BAD'}")
                ok_variant &= ok
                print(f"{'ok  ' if ok else 'FAIL'} {name:6s} {label}: {'; '.join(errs)}; regs "
                      f"{handle.n_regs} spills {handle.n_spills} ({time.time() - t0:.1f} s)", flush=True)
            except Exception:  # noqa: BLE001 - print and go on
                ok_variant = False
                print(f"ERROR {name} {label}", flush=True)
                traceback.print_exc()
                sys.stdout.flush()
        passed[name] = ok_variant
        if out_dir:
            status = {**dict.fromkeys(VARIANTS, False), **passed}
            (Path(out_dir) / "variants_ok.json").write_text(json.dumps(status))
    print("check:", passed, flush=True)
    return all(passed.values()) and len(passed) == len(VARIANTS)


def _flop(b, h, n, d, causal):
    # 5 matrix products of 2 N^2 d each (S, dP, dV, dK, dQ); half of them under a causal mask.
    return 5 * 2 * b * h * n * n * d * (0.5 if causal else 1.0)


def _checked_as(name: str) -> str:
    """The checked variant a variant stands or falls with: itself, or the longest checked name it starts
    with."""
    if name in VARIANTS:
        return name
    return max((v for v in VARIANTS if name.startswith(v + "-")), key=len, default=name)


def time_shapes(out_dir: str | None = None) -> None:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from gpuperf.benchmark import time_callable
    from gpuperf.kernels import flash_attention_bwd as fab
    from gpuperf.kernels import gluon_attention_bwd as gab

    rows = []
    status = Path(out_dir or ".") / "variants_ok.json"
    passed = json.loads(status.read_text()) if out_dir and status.exists() else {}
    # Variants timed: those that passed the check (all when there was none), and the untested
    # TIME_ONLY ones built like a passing one (a "plain-..." variant after "plain" passed).
    timed = {name: configs for name, configs in {**VARIANTS, **TIME_ONLY}.items()
             if not passed or passed.get(_checked_as(name), False)}
    print("timing variants:", list(timed), flush=True)
    for b, h, n, d, causal in SHAPES:
        label = f"bf16 B{b} H{h} N{n} d{d} {'causal' if causal else 'full'}"
        try:
            q, k, v, do = _inputs(torch.bfloat16, b, h, n, n, d)
            o, lse = _forward(q, k, v, causal)
            tri = fab.flash_attention_backward(q, k, v, o, lse, do, causal, return_kernels=True)
            ht = tri[3]["dkdv"]
            t_t = time_callable(lambda: fab.flash_attention_backward(q, k, v, o, lse, do, causal))
            qr, kr, vr = (t.detach().clone().requires_grad_() for t in (q, k, v))
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                out = torch.nn.functional.scaled_dot_product_attention(qr, kr, vr, is_causal=causal)
            t_c = time_callable(lambda: torch.autograd.grad(out, (qr, kr, vr), do, retain_graph=True))
            fl = _flop(b, h, n, d, causal)
            print(f"{label}: triton {t_t * 1e3:.3f} ms (dkdv regs {ht.n_regs} spills {ht.n_spills}), "
                  f"cudnn {t_c * 1e3:.3f} ms ({fl / t_c / 1e12:.0f} TFLOP/s); triton/cudnn speed "
                  f"{t_c / t_t:.3f}", flush=True)
            row = {"params": {"dtype": "bf16", "batch": b, "heads": h, "n_seq": n, "head_dim": d,
                              "mask": "causal" if causal else "full"},
                   "time_s": {"triton": t_t, "sdpa-cudnn": t_c}, "flop": fl,
                   "triton_dkdv_regs": ht.n_regs, "triton_dkdv_spills": ht.n_spills, "gluon": {}}
            rows.append(row)
        except Exception:  # noqa: BLE001
            print(f"ERROR {label}", flush=True)
            traceback.print_exc()
            sys.stdout.flush()
            continue
        for name, configs in timed.items():
            if d not in configs:
                continue
            try:
                glu = gab.gluon_attention_backward(q, k, v, o, lse, do, causal, config=configs[d],
                                                   return_kernels=True)
                diffs = [_rel(x, y.double()) for x, y in zip(glu[:3], tri[:3])]
                hg = glu[3]["gluon"]
                t_g = time_callable(lambda: gab.gluon_attention_backward(q, k, v, o, lse, do, causal,
                                                                         config=configs[d]))
                print(f"  gluon {name:12s} {t_g * 1e3:.3f} ms ({fl / t_g / 1e12:.0f} TFLOP/s): /cudnn speed "
                      f"{t_c / t_g:.3f}, /triton {t_t / t_g:.3f}; regs {hg.n_regs} spills {hg.n_spills}; "
                      f"max rel diff vs triton dQ {diffs[0]:.1e} dK {diffs[1]:.1e} dV {diffs[2]:.1e}",
                      flush=True)
                row["gluon"][name] = {"config": list(configs[d]), "time_s": t_g, "regs": hg.n_regs,
                                      "spills": hg.n_spills, "max_rel_diff_vs_triton": diffs}
            except Exception:  # noqa: BLE001
                print(f"ERROR gluon {name} {label}", flush=True)
                traceback.print_exc()
                sys.stdout.flush()
        del q, k, v, do, o, lse, tri, out, qr, kr, vr
        torch.cuda.empty_cache()
    if out_dir and rows:
        try:
            from gpuperf.records import provenance, save_run

            prov = provenance("python bench/gluon_attention_bwd_probe.py time OUT_DIR")
            prov["method"] = "time_callable (do_bench median, L2 flushed), backward pass only"
            print("record:", save_run("attention_backward_gluon_h200", rows, prov, data_dir=out_dir),
                  flush=True)
        except Exception:  # noqa: BLE001
            traceback.print_exc()


def _warm_one(job) -> str:
    """Compile one launch (fills Triton's cache on disk) by running it once on small inputs whose integer
    arguments specialise like the real ones' (N divisible by 16 or not)."""
    kind, dtype_name, d, causal, n_q, n_k, config = job
    t0 = time.time()
    try:
        dtype = getattr(torch, dtype_name)
        q, k, v, do = _inputs(dtype, 1, 1, n_q, n_k, d)
        o, lse = _forward(q, k, v, causal)
        if kind == "triton":
            from gpuperf.kernels import flash_attention_bwd as fab

            fab.flash_attention_backward(q, k, v, o, lse, do, causal)
        else:
            from gpuperf.kernels import gluon_attention_bwd as gab

            gab.gluon_attention_backward(q, k, v, o, lse, do, causal, config=config)
        torch.cuda.synchronize()
        return f"warm {job[:6]} {config}: {time.time() - t0:.1f} s"
    except Exception as exc:  # noqa: BLE001 - reported, the check step prints the traceback
        return f"warm {job[:6]} {config}: {type(exc).__name__}: {str(exc)[:300]}"


def warm(workers: int = 14, limit_s: float = 35.0) -> None:
    """Compile every launch ``check`` and ``time`` will make, in parallel processes (each compile is
    single-threaded; the device machine has 16 cores)."""
    import concurrent.futures
    import multiprocessing

    jobs = []
    for dtype, _, _, n_q, n_k, d, causal in CHECKS:
        for configs in VARIANTS.values():
            if d in configs:
                jobs.append(("gluon", str(dtype)[6:], d, causal, n_q, n_k, configs[d]))
    for _, _, n, d, causal in SHAPES:  # N divisible by 16, as at the timed shapes
        jobs.append(("triton", "bfloat16", d, causal, 256, 256, None))
        for configs in {**VARIANTS, **TIME_ONLY}.values():
            if d in configs:
                jobs.append(("gluon", "bfloat16", d, causal, 256, 256, configs[d]))
    # One job per compiled kernel: Triton specialises integer arguments on divisibility by 16.
    by_kernel = {}
    for job in jobs:
        kind, dtype_name, d, causal, n_q, n_k, config = job
        by_kernel.setdefault((kind, dtype_name, d, causal, n_q % 16 == 0, n_k % 16 == 0, config), job)
    jobs = list(by_kernel.values())
    t0 = time.time()
    ctx = multiprocessing.get_context("spawn")
    pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx)
    futures = {pool.submit(_warm_one, job): job for job in jobs}
    try:
        for future in concurrent.futures.as_completed(futures, timeout=limit_s):
            print(future.result(), flush=True)
    except concurrent.futures.TimeoutError:
        for future, job in futures.items():
            if not future.done():
                print(f"warm {job[:6]} {job[6]}: not done after {limit_s} s (a hang?)", flush=True)
        for process in list(pool._processes.values()):  # our own workers: a hung kernel must not linger
            process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    print(f"warmed {len(jobs)} launches in {time.time() - t0:.1f} s", flush=True)


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("warm", "check", "time"))
    parser.add_argument("arg", nargs="?", help="warm: worker processes (14); check, time: OUT_DIR")
    args = parser.parse_args(argv)
    import triton

    print(f"torch {torch.__version__} triton {triton.__version__} "
          f"{torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU'}", flush=True)
    if args.step == "warm":
        warm(int(args.arg) if args.arg else 14)
        return 0
    if args.step == "check":
        return 0 if check(args.arg) else 1
    time_shapes(args.arg)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
