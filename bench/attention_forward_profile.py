"""Nsight Compute profile of the FlashAttention forward pass: the old default kernel (pointer loads), the new
default (host-side TMA descriptors, the launch :data:`gpuperf.kernels.flash_attention.HOPPER_CONFIGS` picks)
and SDPA's cuDNN kernel, each launched once per shape in the same profiler window (chapter 14's "Reading a
profile"; bench/NOTES.md, "fwd"). GPU only.

    python bench/attention_forward_profile.py profile RAW [--l2] [--out-dir DIR] [--name NAME]
        # the whole record: `run` under ncu (RAW/ncu.csv, RAW/launches.json), then `collect`
    python bench/attention_forward_profile.py run LAUNCHES.json [--l2]   # the window alone (under ncu)
    python bench/attention_forward_profile.py collect NCU.csv LAUNCHES.json [--out-dir DIR] [--name NAME]

``--l2``: instead of the default shapes, the forward kernel alone at d = 128, full mask, 4 heads of
N = 16384, 65536 and 131072 (chapter 14, exercise 5: where a head's K and V outgrow the L2; recorded as
``attention_forward_l2_profile_h200``). The prediction of gpuperf.attention_traffic.q_outer_dram_model
is in bench/NOTES.md, "c5: the L2 edge of the forward kernel".

The ncu command line is the harness's (``gpuperf.benchmark.profile.ncu_command``) with base units, the
sections of :data:`NCU_SECTIONS` and the metrics of :data:`NCU_METRICS`. ``collect`` pairs the CSV's kernels
with the launch list in order (``profile.pair_launches``: the window holds exactly those launches, one
kernel each) and fails if the counts or kernel names disagree.
"""

from __future__ import annotations

import argparse
import importlib.util
import shlex
import sys
from pathlib import Path

if importlib.util.find_spec("gpuperf") is None:  # a machine without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

#: (head_dim, causal, N): the shapes of the baseline profile (gpujobs/lead-prof0) that missed most.
SHAPES = ((128, False, 1024), (128, True, 1024), (64, False, 4096))

#: (head_dim, causal, N) of the ``l2`` set, with 4 heads each: one head's K and V take 8.4, 33.5 and 67.1 MB
#: against the H200's 60 MiB L2.
L2_SHAPES = ((128, False, 16384), (128, False, 65536), (128, False, 131072))
L2_HEADS = 4

#: The old default launch (the pointer kernel with the tiles of fa-1's sweep), kept to profile "before".
OLD_POINTER_CONFIG = {64: (128, 64, 8, 3), 128: (128, 128, 8, 3)}

#: The sections and metrics of the ncu command line (``profile.ncu_command``, base units).
NCU_SECTIONS = ("SpeedOfLight", "Occupancy", "LaunchStats")
NCU_METRICS = ("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "dram__bytes_read.sum",
               "dram__bytes_write.sum")

#: ncu metric -> row key (units: --print-units base).
METRICS = {
    "Duration": "duration_ns",
    "Registers Per Thread": "registers_per_thread",
    "Dynamic Shared Memory Per Block": "dynamic_shared_bytes",
    "Block Size": "threads_per_block",
    "Grid Size": "grid_size",
    "Waves Per SM": "waves_per_sm",
    "Theoretical Occupancy": "theoretical_occupancy_pct",
    "Achieved Occupancy": "achieved_occupancy_pct",
    "Block Limit Registers": "block_limit_registers",
    "Block Limit Shared Mem": "block_limit_shared",
    "Compute (SM) Throughput": "sm_throughput_pct",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": "tensor_pipe_pct",
    "dram__bytes_read.sum": "dram_read_bytes",
    "dram__bytes_write.sum": "dram_write_bytes",
}


def run(launch_path: str, shape_set: str = "default") -> None:
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    from gpuperf.benchmark.profile import profile_window, write_launches
    from gpuperf.kernels import flash_attention as fa

    if shape_set not in ("default", "l2"):
        raise ValueError(f"shape_set must be 'default' or 'l2', got {shape_set!r}")
    launches, calls = [], []
    for d, causal, n in (SHAPES if shape_set == "default" else L2_SHAPES):
        b, h = (32768 // n, 2048 // d) if shape_set == "default" else (1, L2_HEADS)
        q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.float16) for _ in range(3))
        variant, config = fa.default_launch(q, k, causal)

        def cudnn(q=q, k=k, v=v, causal=causal):
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return sdpa(q, k, v, is_causal=causal)

        shape = {"head_dim": d, "mask": "causal" if causal else "full", "n_seq": n, "batch": b, "heads": h,
                 "dtype": "fp16", "flop": fa.attention_flop(b, h, n, n, d, causal)}
        if shape_set == "l2":
            calls.append(lambda q=q, k=k, v=v, c=causal: fa.flash_attention_forward(q, k, v, c))
            launches.append({**shape, "kernel": "triton", "variant": variant, "config": config,
                             "name_contains": "_fwd_kernel"})
            continue
        calls += [lambda q=q, k=k, v=v, c=causal, cfg=OLD_POINTER_CONFIG[d]:
                  fa.flash_attention_forward(q, k, v, c, variant="pointer", config=cfg),
                  lambda q=q, k=k, v=v, c=causal: fa.flash_attention_forward(q, k, v, c),
                  cudnn]
        launches += [{**shape, "kernel": "triton-before", "variant": "pointer",
                      "config": list(OLD_POINTER_CONFIG[d]), "name_contains": "_fwd_kernel"},
                     {**shape, "kernel": "triton", "variant": variant, "config": config,
                      "name_contains": "_fwd_kernel"},
                     {**shape, "kernel": "sdpa-cudnn", "variant": None, "config": None, "name_contains": "sdpa"}]
    profile_window(calls)  # warm-up twice, then one call each in the window
    write_launches(launch_path, launches)


def parse_ncu_csv(text: str) -> list[dict]:
    """One dict per profiled kernel, in launch order: its name and the metrics of :data:`METRICS` (read by
    :func:`gpuperf.benchmark.profile.parse_ncu_csv`)."""
    from gpuperf.benchmark import profile

    rows = []
    for launch in profile.parse_ncu_csv(text):
        values = profile.metric_values(launch)
        rows.append({"kernel_name": launch["kernel_name"],
                     **{key: float(values[name]) for name, key in METRICS.items() if name in values}})
    return rows


def collect(csv_path, launch_path, out_dir=None, name: str = "attention_forward_profile_h200") -> Path:
    """Pair the profile with the launches and save the recorded run (``out_dir``: default book/data)."""
    from gpuperf.benchmark import profile
    from gpuperf import records as recorded

    profiled = parse_ncu_csv(Path(csv_path).read_text())
    launches = profile.read_launches(launch_path)
    pairs = profile.pair_launches(launches, profiled, lambda launch, kernel: launch["name_contains"] in kernel)
    rows = []
    for launch, prof in pairs:
        row = {k: v for k, v in launch.items() if k != "name_contains"}
        row.update(prof)
        row["flop_per_s"] = row["flop"] / (row["duration_ns"] * 1e-9)
        rows.append(row)
    prov = recorded.provenance("ncu ... python bench/attention_forward_profile.py run; collect")
    path = recorded.save_run(name, rows, prov, data_dir=out_dir)
    print(path)
    for r in rows:
        print(f"{r['kernel']:14s} d{r['head_dim']} {r['mask']:6s} N{r['n_seq']}: {r['duration_ns'] / 1e3:8.1f} us "
              f"{r['flop_per_s'] / 1e12:5.0f} TF/s regs {r['registers_per_thread']:.0f} "
              f"smem {r['dynamic_shared_bytes'] / 1024:.0f} KiB occ {r['theoretical_occupancy_pct']:.1f}/"
              f"{r['achieved_occupancy_pct']:.1f} % tensor {r['tensor_pipe_pct']:.1f} %")
    return path


def profile_and_collect(raw: Path, shape_set: str = "default", out_dir=None, name: str | None = None) -> Path:
    """``run`` under ncu (the harness's command line), its report and launch list into ``raw``, then
    ``collect`` into ``out_dir`` (default book/data)."""
    from gpuperf.benchmark import profile

    raw.mkdir(parents=True, exist_ok=True)
    launches = raw / "launches.json"
    program = [sys.executable, __file__, "run", str(launches)] + (["--l2"] if shape_set == "l2" else [])
    command = profile.ncu_command(program, sections=NCU_SECTIONS, metrics=NCU_METRICS, base_units=True)
    print(shlex.join(command), flush=True)
    report = profile.run_ncu(command, raw / "ncu.csv")
    default = "attention_forward_l2_profile_h200" if shape_set == "l2" else "attention_forward_profile_h200"
    return collect(report, launches, out_dir, name or default)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    one = modes.add_parser("profile", help="run under ncu, then collect (the whole record)")
    one.add_argument("raw", type=Path, help="folder for ncu's report and the launch list")
    run_mode = modes.add_parser("run", help="the profiler window alone (run it under ncu)")
    run_mode.add_argument("launches", type=Path, help="where to write the launch list")
    gather = modes.add_parser("collect", help="pair an ncu report with a launch list; save the record")
    gather.add_argument("csv", type=Path)
    gather.add_argument("launches", type=Path)
    for sub in (one, run_mode):
        sub.add_argument("--l2", action="store_true", help="the L2 shapes instead of the default ones")
    for sub in (one, gather):
        sub.add_argument("--out-dir", type=Path, default=None, help="folder for the JSON (default book/data)")
        sub.add_argument("--name", default=None, help="stem of the recorded run")
    args = parser.parse_args(argv)
    if args.mode == "run":
        run(str(args.launches), "l2" if args.l2 else "default")
    elif args.mode == "collect":
        collect(args.csv, args.launches, args.out_dir, args.name or "attention_forward_profile_h200")
    else:
        profile_and_collect(args.raw, "l2" if args.l2 else "default", args.out_dir, args.name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
