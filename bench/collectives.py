"""All-reduce, all-gather and reduce-scatter over NCCL (one process per GPU) or gloo (CPU), for chapter 05.

Launch with torchrun, one process per GPU:

    torchrun --nproc_per_node 8 bench/collectives.py --out-dir book/data          # 8 H200s, 1 KiB - 8 GiB
    torchrun --nproc_per_node 2 bench/collectives.py --out-dir book/data          # 2 H200s
    torchrun --nproc_per_node 2 bench/collectives.py --quick --out-dir /tmp/x     # gloo on a CPU: a smoke run

Every call is checked before it is timed (``gpuperf.benchmark.collectives``); NVLink multicast (NCCL's NVLS)
is kept off. Rank 0 writes ``collectives_<p>x<device>.json`` (e.g. ``collectives_8xh200.json``) with the
run's provenance and the NCCL environment, and prints each row as it is measured.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

if importlib.util.find_spec("gpuperf") is None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

QUICK_SIZES = (4096, 65536, 1 << 20)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=None, help="folder for the JSON (default book/data)")
    parser.add_argument("--quick", action="store_true", help="three small sizes, few iterations")
    parser.add_argument("--max-bytes", type=float, default=8 * 2**30, help="largest buffer (bytes)")
    parser.add_argument("--iters", type=int, default=None)
    args = parser.parse_args(argv)

    from gpuperf.benchmark import collectives as coll

    rank, world, device = coll.init()
    import torch.distributed as dist

    sizes = QUICK_SIZES if args.quick else tuple(s for s in coll.FULL_SIZES if s <= args.max_bytes)
    iters = args.iters or (5 if args.quick else 20)

    def show(row):
        if rank == 0:
            print(f"{row['collective']:15s} {row['n_bytes']:>13,d} B  {row['time_s'] * 1e6:10.1f} us  "
                  f"bus {row['bus_bytes_per_s'] / 1e9:8.2f} GB/s  {'ok' if row['correct'] else 'WRONG'}",
                  flush=True)

    rows = coll.run_collectives(sizes, iters=iters, warmup=2 if args.quick else 5, progress=show)
    status = 0 if all(r["correct"] for r in rows) else 1
    if rank == 0:
        from gpuperf import records as recorded

        command = " ".join(["torchrun", f"--nproc_per_node {world}", "bench/collectives.py", *(argv or sys.argv[1:])])
        prov = recorded.provenance(command)
        prov.update({"backend": dist.get_backend(), "n_ranks": str(world),
                     **{k: os.environ.get(k, "") for k in coll.MULTICAST_OFF},
                     "nccl": _nccl_version() if device.type == "cuda" else ""})
        slug = "h200" if "H200" in prov["device"] else ("cpu" if device.type == "cpu" else "gpu")
        name = f"collectives_{world}x{slug}" + ("_quick" if args.quick else "")
        if status:
            print("a collective returned a wrong result: nothing recorded", file=sys.stderr)
        else:
            print(recorded.save_run(name, rows, prov, data_dir=args.out_dir))
    dist.destroy_process_group()
    return status


def _nccl_version() -> str:
    import torch

    version = torch.cuda.nccl.version()
    return ".".join(map(str, version)) if isinstance(version, tuple) else str(version)


if __name__ == "__main__":
    sys.exit(main())
