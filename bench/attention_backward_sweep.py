"""Tile-size sweep of the two FlashAttention backward kernels (dK/dV and dQ), timed separately (GPU only).

Used once to choose ``gpuperf.kernels.flash_attention_bwd.GPU_CONFIGS`` (bench/NOTES.md, "bwd"): for d = 64
and 128, fp16, N = 4096, B H N = 2^21, each kernel is timed alone with several (block_m, block_n, warps,
stages), and the fastest of each is printed with the TFLOP/s of the whole backward it would give. Writes
``attention_backward_sweep_<device>.json`` (``gpuperf.recorded.save_run``) into the folder given as the first
argument (default: cwd).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import torch
import triton
import triton.testing

from gpuperf import recorded
from gpuperf.benchmark import device_slug
from gpuperf.benchmark.attention_backward import backward_flop, shape_for
from gpuperf.kernels import flash_attention_bwd as fab

DKDV = {64: [(32, 128, 4, 3), (64, 128, 8, 3), (32, 64, 4, 3), (64, 64, 4, 3), (32, 128, 4, 5),
             (16, 128, 4, 3)],
        128: [(32, 128, 8, 2), (64, 128, 8, 2), (32, 64, 4, 3), (64, 64, 4, 2), (32, 64, 8, 3),
              (16, 64, 4, 3)]}
DQ = {64: [(128, 32, 4, 3), (128, 64, 8, 3), (64, 64, 4, 3), (64, 32, 4, 3), (128, 32, 8, 3)],
      128: [(128, 32, 8, 2), (64, 32, 4, 3), (64, 64, 4, 2), (128, 64, 8, 2), (64, 64, 8, 3)]}


def main(out_dir: Path) -> None:
    results = []
    n_seq = 4096
    for head_dim in (64, 128):
        batch, heads = shape_for(n_seq, head_dim)
        gen = torch.Generator(device="cuda").manual_seed(0)
        q, k, v, do = (torch.randn(batch, heads, n_seq, head_dim, device="cuda", dtype=torch.float16,
                                   generator=gen) for _ in range(4))
        from gpuperf.kernels.flash_attention import flash_attention_forward

        o, lse = flash_attention_forward(q, k, v)
        delta = (o.float() * do.float()).sum(-1)
        dq, dk, dv = (torch.empty_like(t) for t in (q, k, v))
        scale = 1 / math.sqrt(head_dim)
        common = (*q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *do.stride()[:3], heads, n_seq, n_seq,
                  scale * fab._LOG2E, scale)
        for causal in (False,):
            flop = backward_flop(batch, heads, n_seq, head_dim, causal)
            for kernel, table in (("dkdv", DKDV), ("dq", DQ)):
                for bm, bn, warps, stages in table[head_dim]:
                    if kernel == "dkdv":
                        def launch():
                            fab._dkdv_kernel[(triton.cdiv(n_seq, bn), batch * heads)](
                                q, k, v, do, lse, delta, dk, dv, *common, CAUSAL=causal, BLOCK_M=bm,
                                BLOCK_N=bn, HEAD_DIM=head_dim, PRECISION="default", num_warps=warps,
                                num_stages=stages)
                    else:
                        def launch():
                            fab._dq_kernel[(triton.cdiv(n_seq, bm), batch * heads)](
                                q, k, v, do, lse, delta, dq, *common, CAUSAL=causal, BLOCK_M=bm,
                                BLOCK_N=bn, HEAD_DIM=head_dim, PRECISION="default", num_warps=warps,
                                num_stages=stages)
                    try:
                        launch()
                        time_s = triton.testing.do_bench(launch, warmup=5, rep=25) * 1e-3
                    except Exception as exc:  # out of shared memory or registers: record and go on
                        print(f"d={head_dim} {kernel} {(bm, bn, warps, stages)} failed: {exc!r}"[:300])
                        time_s = None
                    row = {"head_dim": head_dim, "causal": causal, "kernel": kernel, "block_m": bm,
                           "block_n": bn, "num_warps": warps, "num_stages": stages, "time_s": time_s,
                           "n_seq": n_seq, "batch": batch, "heads": heads, "backward_flop": flop}
                    results.append(row)
                    print(row, flush=True)
            for kernel in ("dkdv", "dq"):
                rows = [r for r in results if r["head_dim"] == head_dim and r["kernel"] == kernel
                        and r["time_s"]]
                best = min(rows, key=lambda r: r["time_s"])
                print(f"BEST d={head_dim} {kernel}: {best}")
        del q, k, v, do, o, lse, dq, dk, dv
        torch.cuda.empty_cache()
    name = f"attention_backward_sweep_{device_slug(torch.cuda.get_device_name())}"
    prov = recorded.provenance("python bench/attention_backward_sweep.py")
    print(recorded.save_run(name, results, prov, data_dir=out_dir))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd())
