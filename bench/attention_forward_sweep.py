"""FlashAttention forward launch sweep on the H200 (jobs fwd-1, fwd-2, fwd-3, fwd-4; bench/NOTES.md, "fwd").

Compiles every candidate in parallel worker processes (sharing Triton's cache), then in one process
checks each candidate against a float64 reference and times it next to SDPA's cuDNN and flash backends on
the same inputs. Writes $JOB_OUT/fwd_sweep.json and prints a table.

    JOB_OUT=RAW python bench/attention_forward_sweep.py   # the whole job; writes RAW/fwd_sweep.json
    python bench/attention_forward_sweep.py --compile I N   # worker: compile its share of the candidates
    python bench/attention_forward_sweep.py --record OUT.json JOB1.json [JOB2.json ...]
        # the jobs' fwd_sweep.json files -> one recorded run, book/data/attention_forward_sweep_h200.json
    python bench/attention_forward_sweep.py --chapter14 book/data/attention_targets_h200.json
        # the numbers chapter 14 states from the attention family's record (no GPU)

Modes of round 4 (fwd-4; bench/NOTES.md, "Predictions for the exp2 split" and after):

    python bench/attention_forward_sweep.py tiles tiles2 --out $OUT/tiles.json
    python bench/attention_forward_sweep.py confirm --out $OUT/confirm.json    # the table's change, A/B
        [--rounds 3] [--workers 14] [--budget-s 80]   # no shape starts after 80 s (MODE_ORDER first)

``tiles``: fp16, d = 64 and 128, full and causal, N = 1024, 2048, 4096 (B = 32768/N, H = 2048/d, as the
attention family): the wrapper's default launch and those of :data:`CANDIDATES` (round 3). ``tiles2``:
where the d = 128 tiles cross over (N = 2K-16K) and d = 64's long-row launches (:func:`round4_launches`).
``confirm``: fp16 and bf16, every shape whose launch the round-4 change of ``HOPPER_CONFIGS`` moved: the
default path, the new launch and the old one (:data:`OLD_DEFAULTS`) through ``hopper=``. SDPA cuDNN is
the reference of every shape. Each case is checked against float64 (one head) before it is timed; a
candidate that fails to compile or to check is reported and left out, the rest are timed in interleaved
rounds (``gpuperf.benchmark.run_cases``: cuDNN and every candidate of a shape round-robin, SM clock and
temperature sampled). The JSON (``gpuperf.records`` format, written after every shape) holds the
harness's rows, the per-round ratios, the failures and the provenance; the table printed at the end gives
each launch's speed over cuDNN's. On a CPU the same modes run a dry run under the interpreter (tiny
shapes, fp16, wall-clock times; only the logic is checked).

Runs 1 and 2 of round 4 also timed two kernel options since removed, both slower on every shape but one:
``exp2_split`` (part of the exponentials by a cubic on the FMA units) and ``lazy_rescale`` (the
accumulator rescaled only when a row maximum grows past a threshold); modes ``exp2`` and ``lazy`` of
this script at commit 375027f ran them (bench/NOTES.md, "Outcome of run 1", "Outcome of run 2").

Times are the harness's (``gpuperf.benchmark.time_callable``); the job's report carries the harness's
provenance (``gpuperf.records.provenance``), which ``--record`` keeps (the reports of jobs fwd-1
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
    from gpuperf.records import provenance

    with open(os.path.join(out_dir, "fwd_sweep.json"), "w") as f:
        json.dump({"provenance": provenance("JOB_OUT=RAW python bench/attention_forward_sweep.py"),
                   "results": results, "checks": checks, "compile_log": compile_log,
                   "torch": torch.__version__, "triton": __import__("triton").__version__,
                   "device": torch.cuda.get_device_name() if not DRY else "cpu", "total_s": time.time() - t0}, f, indent=1)
    print(f"total {time.time() - t0:.1f}s")


# ---- Round 4 (fwd-4): round 3's tiles, the d = 128 crossover, the confirmation of the table's change ----

TILE_SHAPES = [("fp16", d, causal, n) for d in (128, 64) for causal in (False, True) for n in (1024, 2048, 4096)]
#: Run 2, tiles2: where the d = 128 launches cross over, and d = 64's long-row alternatives.
TILE2_SHAPES = ([("fp16", 128, causal, n) for causal in (False, True) for n in (2048, 4096, 8192, 16384)]
                + [("fp16", 64, False, n) for n in (4096, 8192, 16384)])
#: HOPPER_CONFIGS before round 4 moved three entries: (d, causal) -> ((n_k_max, launch), ...), as there.
OLD_DEFAULTS = {(64, False): ((1024, HC(128, 64, 4, 3, maxnreg=168)), (None, HC(128, 64, 8, 3))),
                (128, False): ((None, HC(128, 128, 8, 3)),),
                (128, True): ((2048, HC(64, 64, 4, 3)), (None, HC(128, 128, 8, 3)))}
#: confirm: the shapes whose launch moved (d128 full 1K, 2K; d128 causal 4K; d64 full 4K, 8K, 16K).
CONFIRM_SHAPES = [(dt, d, causal, n) for dt in ("fp16", "bf16")
                  for d, causal, n in ((128, False, 1024), (128, False, 2048), (128, True, 4096),
                                       (64, False, 4096), (64, False, 8192), (64, False, 16384))]
SHAPES_OF_MODE = {"tiles": TILE_SHAPES, "tiles2": TILE2_SHAPES, "confirm": CONFIRM_SHAPES}
#: The order modes and dtypes are timed in, most wanted first (should the time budget run out).
MODE_ORDER = [("confirm", "fp16"), ("confirm", "bf16"), ("tiles", "fp16"), ("tiles2", "fp16")]
#: Relative error bound of each check (one head against float64), as the attention family's.
CHECK_TOLERANCE = {"fp16": 4e-3, "bf16": 3e-2}
TORCH_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def launch_name(cfg):
    """'128x64 8w3s', '128x64 4w3s r168' (a register cap)."""
    name = f"{cfg.block_m}x{cfg.block_n} {cfg.num_warps}w{cfg.num_stages}s"
    return name + (f" r{cfg.maxnreg}" if cfg.maxnreg else "")


def old_default(d, causal, n):
    for n_max, cfg in OLD_DEFAULTS[(d, causal)]:
        if n_max is None or n <= n_max:
            return cfg
    raise ValueError(f"OLD_DEFAULTS has no launch for d={d}, causal={causal}, N={n}")


def round4_launches(mode, d, causal, n):
    """The Triton launches a shape times in ``mode``: [(name, HopperConfig or None)], None = the wrapper's
    default path (the plan the family times).

    tiles (run 1): :data:`CANDIDATES`. tiles2 (run 2): d = 128 128 x 128 x 8w3s against 64 x 64 x 4w3s from
    N = 2K to 16K; d = 64 full, 128 x 64 x 8w3s against 64 x 128 x 4w2s and 128 x 128 x 8w2s r128 from 4K to
    16K. confirm: the new default launch and the old one, both through ``hopper=`` (one host path)."""
    if mode == "confirm":
        new, old = fa.hopper_config(d, causal, n), old_default(d, causal, n)
        return [("default", None), ("new " + launch_name(new), new), ("old " + launch_name(old), old)]
    if mode == "tiles2":
        cands = ([HC(128, 128, 8, 3), HC(64, 64, 4, 3)] if d == 128 else
                 [HC(128, 64, 8, 3), HC(64, 128, 4, 2), HC(128, 128, 8, 2, maxnreg=128)])
        return [("default", None)] + [(launch_name(cfg), cfg) for cfg in cands]
    return [("default", None)] + [(launch_name(cfg), cfg) for cfg in CANDIDATES[(d, causal)]]


def round4_shapes(modes):
    """(mode, dtype, d, causal, N) in the order they are timed (:data:`MODE_ORDER`)."""
    shapes = [(mode, dt, d, causal, n) for mode in modes for dt, d, causal, n in SHAPES_OF_MODE[mode]]
    return sorted(shapes, key=lambda s: MODE_ORDER.index(s[:2]))


def round4_compile_items(modes):
    """(dtype, d, causal, HopperConfig) for every launch of ``modes`` (each compiled once, in a worker)."""
    items = []
    for mode, dt, d, causal, n in round4_shapes(modes):
        for _, cfg in round4_launches(mode, d, causal, n):
            item = (dt, d, causal, cfg or fa.hopper_config(d, causal, n))
            if item not in items:
                items.append(item)
    return items


def round4_compile_worker(modes, index, count):
    """Compile this worker's share: one launch on small inputs of the timed shapes' specialisation (N a
    multiple of every tile, so EVEN_K and RAGGED_Q match)."""
    for i, (dt, d, causal, cfg) in enumerate(round4_compile_items(modes)):
        if i % count != index:
            continue
        t = time.time()
        n = 256 if not DRY else 64
        q = torch.randn(1, 2, n, d, device=DEV, dtype=TORCH_DTYPES[dt])
        tag = f"{dt} d{d} causal={causal} {tuple(cfg)}"
        if DRY:
            if dt != "fp16":
                continue
            cfg = _dry_cfg(cfg)
        try:
            fa.flash_attention_forward(q, q, q, causal, variant="tma_host", hopper=cfg)
            sync()
            print(f"compiled {tag} {time.time() - t:.1f}s", flush=True)
        except Exception as exc:  # noqa: BLE001 - reported; the main process leaves the launch out
            print(f"FAILED {tag}: {type(exc).__name__}: {str(exc)[:300]}".replace("\n", " "), flush=True)


def _dry_cfg(cfg):
    """Under the interpreter (dry run): the same launch with tiles small enough for 64-row inputs."""
    return cfg._replace(block_m=min(cfg.block_m, 32), block_n=min(cfg.block_n, 32))


def _round4_shape(mode, dt, d, causal, n, gen, rounds, failed):
    """Check and time one shape: returns (rows, failures)."""
    from gpuperf.benchmark import Case, check_all_written, check_relative_error, make_row, run_cases
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    td = TORCH_DTYPES[dt]
    b, h = (1, 2) if DRY else (32768 // n, 2048 // d)
    n = 64 if DRY else n
    q, k, v = (torch.randn(b, h, n, d, device=DEV, dtype=td, generator=gen) for _ in range(3))
    flop = fa.attention_flop(b, h, n, n, d, causal)
    ref = reference(q, k, v, causal).cpu()
    mask = "causal" if causal else "full"
    tag = f"{dt} d{d} {mask} N{n}"
    params = {"mode": mode, "dtype": dt, "head_dim": d, "mask": mask, "n_seq": n, "batch": b, "heads": h}

    def sdpa(backend):
        if DRY:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    runs = [("sdpa-cudnn", None, lambda: sdpa(SDPBackend.CUDNN_ATTENTION))]
    for name, cfg in round4_launches(mode, d, causal, n):
        launch = cfg or fa.hopper_config(d, causal, n)
        if DRY:
            cfg = launch = _dry_cfg(launch)
        if f"{dt} d{d} causal={causal} {tuple(launch)}" in failed:
            runs.append((name, launch, None))  # failed to compile in its worker
        elif cfg is None:
            runs.append((name, launch, lambda: fa.flash_attention_forward(q, k, v, causal)[0]))
        else:
            runs.append((name, launch, lambda cfg=cfg: fa.flash_attention_forward(
                q, k, v, causal, variant="tma_host", hopper=cfg)[0]))
    cases, failures = [], []
    ref_label = f"sdpa-cudnn {tag}"
    for name, launch, fn in runs:
        label = f"{name} {tag}"
        info = {**params, "kernel": name, "config": None if launch is None else list(launch),
                "config_fields": None if launch is None else list(launch._fields)}
        if fn is None:
            failures.append({**info, "error": "failed to compile in its worker"})
            continue
        try:  # the check (and the first call: loads the compiled kernel)
            out = fn()
            sync()
            check_all_written(label, out)
            err = check_relative_error(label, out[0, 0].float().cpu(), ref, CHECK_TOLERANCE[dt])
        except Exception as exc:  # noqa: BLE001 - one failure must not lose the other launches
            failures.append({**info, "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
            if name == "sdpa-cudnn":
                return [], failures  # no reference: nothing of this shape can be compared
            continue
        cases.append(Case(label, fn, flop=flop, metric="flop_per_s",
                          reference=None if name == "sdpa-cudnn" else ref_label,
                          params={**info, "check_relative_error": err}, rounds=rounds))
    if DRY:  # the interpreter: wall-clock times of one call, only to exercise the logic
        rows = []
        for c in cases:
            t = time.time()
            c.fn()
            rows.append(make_row("attention_fwd4", c, max(time.time() - t, 1e-9)))
        from gpuperf.benchmark import with_ratios

        return with_ratios(rows), failures
    try:
        rows = run_cases("attention_fwd4", cases, progress=False, warmup_ms=5, rep_ms=20, soak_s=0.2)
    except Exception as exc:  # noqa: BLE001 - the timing failed: keep the other shapes
        failures.append({**params, "kernel": "(timing)", "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
        return [], failures
    from gpuperf.benchmark import round_ratios

    per_round = round_ratios(rows)
    for r in rows:
        r["ratio_rounds"] = per_round.get(r["label"])
    return rows, failures


def _round4_table(rows, failures, modes):
    """Print each launch's speed over cuDNN's, per shape (the median of the rounds' times, and the lowest
    and highest per-round ratio), one block of columns per (mode, d, mask)."""
    everything = rows + failures
    for mode in modes:
        groups = dict.fromkeys((r["head_dim"], r["mask"]) for r in everything if r.get("mode") == mode)
        for d, mask in groups:
            mine = [r for r in everything if r.get("mode") == mode and (r["head_dim"], r["mask"]) == (d, mask)]
            names = list(dict.fromkeys(r["kernel"] for r in mine if r["kernel"] not in ("sdpa-cudnn", "(timing)")))
            print(f"\n{mode}, d = {d}, {mask}: speed / SDPA cuDNN in the same run, median of the rounds "
                  f"[lowest-highest round]")
            print(f"{'dtype N':<11} {'cuDNN TF/s':>10}  " + "  ".join(f"{n:>20}" for n in names))
            for dt, n in dict.fromkeys((r["dtype"], r["n_seq"]) for r in mine):
                sel = {r["kernel"]: r for r in mine if (r["dtype"], r["n_seq"]) == (dt, n)}
                cud = sel.get("sdpa-cudnn")
                cells = []
                for name in names:
                    r = sel.get(name)
                    if r is None or r.get("ratio_to_reference") is None:
                        cells.append(f"{'-' if r is None else 'failed':>20}")
                        continue
                    rr = r.get("ratio_rounds") or [r["ratio_to_reference"]]
                    cells.append(f"{r['ratio_to_reference']:>6.3f} [{min(rr):.3f}-{max(rr):.3f}]")
                rate = cud["flop_per_s"] / 1e12 if cud and cud.get("flop_per_s") else float("nan")
                print(f"{dt + ' N' + str(n):<11} {rate:>10.0f}  " + "  ".join(cells))
    for f in failures:
        print("FAILED", {k: f.get(k) for k in ("mode", "dtype", "head_dim", "mask", "n_seq", "kernel", "config")},
              f["error"][:200])


def round4_main(modes, out_path, rounds, workers, budget_s):
    from gpuperf.records import provenance

    t0 = time.time()
    command = "python bench/attention_forward_sweep.py " + " ".join(sys.argv[1:])
    procs = [subprocess.Popen([sys.executable, __file__, "--compile4", ",".join(modes), str(i), str(workers)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in range(workers)]
    compile_log = []
    for p in procs:
        text, _ = p.communicate()
        compile_log.extend(line for line in text.splitlines() if line.startswith(("compiled", "FAILED")))
        if p.returncode:
            compile_log.append(f"worker rc={p.returncode}: {text[-1500:]}")
    t_compile = time.time() - t0
    failed = {line.split(": ")[0][len("FAILED "):] for line in compile_log if line.startswith("FAILED")}
    print(f"parallel compile: {len(compile_log)} launches in {t_compile:.1f}s, {len(failed)} failed", flush=True)
    for line in compile_log:
        if not line.startswith("compiled"):
            print("  ", line, flush=True)
    gen = torch.Generator(device=DEV).manual_seed(0)
    rows, failures = [], []
    prov = provenance(command)
    shapes = round4_shapes(modes)
    if DRY:  # the smallest N of each (mode, d, mask), fp16
        shapes = [s for s in shapes if s[1] == "fp16" and s[4] == min(
            t[4] for t in shapes if t[0] == s[0] and t[2:4] == s[2:4])]
    for mode, dt, d, causal, n in shapes:
        ts = time.time()
        if ts - t0 > budget_s:  # keep the device call inside its limit; the JSON says what was skipped
            failures.append({"mode": mode, "dtype": dt, "head_dim": d, "mask": "causal" if causal else "full",
                             "n_seq": n, "kernel": "(timing)", "error": f"skipped: past the {budget_s} s budget"})
            print(f"skipped {mode} {dt} d{d} {'causal' if causal else 'full'} N{n}: past the budget", flush=True)
            continue
        r, f = _round4_shape(mode, dt, d, causal, n, gen, rounds, failed)
        rows += r
        failures += f
        best = max((x for x in r if x.get("ratio_to_reference")), key=lambda x: x["ratio_to_reference"], default=None)
        print(f"{mode} {dt} d{d} {'causal' if causal else 'full'} N{n}: {len(r)} timed, {len(f)} failed, best "
              f"{best and best['kernel']} {best and round(best['ratio_to_reference'], 3)} [{time.time() - ts:.1f}s, "
              f"total {time.time() - t0:.0f}s]", flush=True)
        if not DRY:
            torch.cuda.empty_cache()
        _round4_save(out_path, rows, failures, compile_log, prov, t_compile, time.time() - t0)
    _round4_table(rows, failures, modes)
    print(f"total {time.time() - t0:.1f}s -> {out_path}")


def _round4_save(out_path, rows, failures, compile_log, prov, t_compile, t_total):
    path = Path(out_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"name": path.stem, "provenance": prov, "results": rows, "failures": failures,
                               "compile_log": compile_log, "compile_s": t_compile, "total_s": t_total},
                              indent=1, default=str) + "\n")
    tmp.replace(path)


def round4_cli(argv):
    import argparse

    ap = argparse.ArgumentParser(description="round 4: tiles, tiles2, confirm (module docstring)")
    ap.add_argument("modes", nargs="+", choices=tuple(SHAPES_OF_MODE))
    ap.add_argument("--out", required=True, help="the JSON to write (e.g. $OUT/fwd4.json)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per shape (default 3)")
    ap.add_argument("--workers", type=int, default=max(1, min(14, (os.cpu_count() or 2) - 2)),
                    help="compile worker processes")
    ap.add_argument("--budget-s", type=float, default=80.0,
                    help="start no new shape after this many seconds (default 80)")
    args = ap.parse_args(argv)
    modes = list(dict.fromkeys(args.modes))
    round4_main(modes, args.out, args.rounds, 1 if DRY else args.workers, args.budget_s)


def chapter14_numbers(path):
    """Print, from an attention family record (``bench/run.py attention``), every number chapter 14's
    measured section states and asserts (cells e4e8c215 and 0d905b98), for updating them after a re-run."""
    from gpuperf.hardware import get_accelerator
    from gpuperf.results import attention as fwd_results

    rec = json.load(open(path))["results"]

    def tflops(kernel, d, mask, n, dtype="fp16"):
        key = (kernel, dtype, d, mask, n)
        return next(r["flop_per_s"] for r in rec
                    if (r["kernel"], r["dtype"], r["head_dim"], r["mask"], r["n_seq"]) == key) / 1e12

    vs_cudnn = fwd_results.speed_ratios(rec)
    vs_flash = fwd_results.speed_ratios(rec, reference="sdpa-flash")
    target = fwd_results.TARGET_OVER_CUDNN
    for d in (64, 128):
        mine = [v for k, v in vs_cudnn.items() if k[1] == d]
        print(f"d = {d}: Triton / cuDNN {min(mine):.2f} to {max(mine):.2f}, target {target[d]} met on "
              f"{sum(v >= target[d] for v in mine)} of {len(mine)}")
    print(f"over SDPA flash {min(vs_flash.values()):.2f} to {max(vs_flash.values()):.2f}")
    print("fp16 - bf16 at most", round(max(abs(vs_cudnn[("bf16", *k[1:])] - v)
                                           for k, v in vs_cudnn.items() if k[0] == "fp16"), 3))
    spread = max(abs(r["time_s_repeat"] / r["time_s"] - 1) for r in rec
                 if r["kernel"] == "sdpa-cudnn" and r.get("time_s_repeat"))
    print(f"cuDNN re-timed: up to {spread * 100:.0f} %")
    print("lowest:", [(k, round(v, 3)) for k, v in sorted(vs_cudnn.items(), key=lambda kv: kv[1])[:3]])
    print("met:", sorted(k for k, v in vs_cudnn.items() if v >= target[k[1]]))
    peak = get_accelerator("H200 SXM").peak_flop_per_s("fp16") / 1e12
    flash = [r["flop_per_s"] / 1e12 / peak for r in rec if r["kernel"] == "sdpa-flash"]
    print(f"SDPA flash {min(flash):.2f} to {max(flash):.2f} of the dense peak")
    print("d128 full 16K fp16: Triton", round(tflops("triton", 128, "full", 16384)), "cuDNN",
          round(tflops("sdpa-cudnn", 128, "full", 16384)), "TFLOP/s")
    print("cuDNN d128 causal bf16 4K, 8K; fp16 4K:", [round(tflops("sdpa-cudnn", 128, "causal", n, "bf16"))
                                                      for n in (4096, 8192)],
          round(tflops("sdpa-cudnn", 128, "causal", 4096, "fp16")))
    for dt in ("fp16", "bf16"):
        for d in (64, 128):
            for mask in ("full", "causal"):
                print(dt, d, mask, [round(vs_cudnn[(dt, d, mask, n)], 2) for n in (1024, 2048, 4096, 8192, 16384)])


FIELDS = ("block_m", "block_n", "num_warps", "num_stages")
#: Launch fields of rounds 1 and 2 (HopperConfig then had more options), by position.
OLD_FIELDS = {8: FIELDS + ("warp_specialize", "persistent", "maxnreg", "lookahead"),
              9: FIELDS + ("warp_specialize", "persistent", "maxnreg", "lookahead", "device_desc"),
              10: FIELDS + ("warp_specialize", "persistent", "maxnreg", "lookahead", "device_desc", "one_loop"),
              5: FIELDS + ("maxnreg",)}


def record(out_path, job_paths):
    """Flatten the jobs' fwd_sweep.json files into rows (one per timed candidate and shape) and save them
    with provenance as a recorded run (gpuperf.records.save_run)."""
    from gpuperf import records as recorded

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
    elif len(sys.argv) == 3 and sys.argv[1] == "--chapter14":
        chapter14_numbers(sys.argv[2])
    elif len(sys.argv) > 1 and sys.argv[1] in SHAPES_OF_MODE:
        round4_cli(sys.argv[1:])
    elif len(sys.argv) > 1 and sys.argv[1] == "--compile4":
        round4_compile_worker(sys.argv[2].split(","), int(sys.argv[3]), int(sys.argv[4]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--compile":
        compile_worker(int(sys.argv[2]), int(sys.argv[3]))
    elif len(sys.argv) > 1:  # --help or a mistake: the usage, not a run
        print(__doc__)
        sys.exit(0 if sys.argv[1] in ("-h", "--help") else 2)
    else:
        main()
