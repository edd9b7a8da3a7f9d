"""Launch sweep of the Flash-Decoding kernel (gpuperf.kernels.decode) on a few shapes: (BLOCK_N, num_warps,
num_stages) and split counts around the chosen one, each timed with do_bench (median, CUDA events) against a
copy of the same K and V bytes. Prints one line per launch; writes nothing else.

Usage: PYTHONPATH=lib python3 bench/decode_sweep.py [--quick]
"""

from __future__ import annotations

import argparse
import sys

SHAPES = ((1, 8, 8, 8192), (1, 8, 8, 131072), (8, 32, 8, 32768), (64, 32, 8, 8192), (8, 32, 32, 1024),
          (64, 32, 32, 8192), (8, 32, 8, 2048))
#: (BLOCK_N, num_warps, num_stages) tried at the chosen split count (the default first).
CONFIGS = [(64, 4, 3), (32, 4, 3), (64, 4, 2), (64, 4, 4), (64, 8, 3), (128, 4, 2), (128, 8, 3), (32, 2, 4)]


def main(quick: bool) -> None:
    import torch

    from gpuperf.benchmark import time_callable
    from gpuperf.kernels import decode as dk
    from gpuperf.kernels.decode import choose_splits, decode_attention, sm_count

    d = 128
    for b, hq, hkv, n_k in SHAPES:
        q = torch.randn(b, 1, hq, d, device="cuda").half()
        k, v = (torch.randn(b, hkv, n_k, d, device="cuda").half() for _ in range(2))
        kv = torch.cat([k.reshape(-1), v.reshape(-1)])
        out = torch.empty_like(kv)
        kv_bytes = 2 * k.numel() * 2
        copy_s = time_callable(lambda: out.copy_(kv), 5, 20)
        copy_bw = 2 * kv_bytes / copy_s
        chosen = choose_splits(b, hkv, 1, n_k, sm_count=sm_count("cuda"))
        print(f"== B={b} Hq={hq} Hkv={hkv} N_k={n_k}: copy {copy_bw / 1e12:.2f} TB/s, chosen S={chosen}",
              flush=True)
        splits = sorted(x for x in {1, max(1, chosen // 2), chosen, chosen + 1, chosen * 2, chosen * 3}
                        if x <= 128)

        def rate(label, **kw):
            try:
                t = time_callable(lambda: decode_attention(q, k, v, n_k, layout="bhnd", check_indices=False,
                                                           **kw), 5, 20)
            except Exception as exc:  # noqa: BLE001 (a launch that does not fit: say so, go on)
                print(f"  {label}: {type(exc).__name__}: {str(exc)[:80]}", flush=True)
                return
            print(f"  {label}: {kv_bytes / t / 1e12:.2f} TB/s = {kv_bytes / t / copy_bw:.2f} of copy "
                  f"({t * 1e6:.1f} us)", flush=True)

        for s in splits:
            rate(f"default S={s:>3}", n_splits=s)
        compiled = [p[4][4].compiled for p in dk._PLANS.values() if p[4][4] is not None]
        if compiled:  # what limits programs per SM: registers, shared memory
            c = compiled[-1]
            try:
                print(f"  split kernel: {c.n_regs} registers/thread, {c.metadata.shared} B shared, "
                      f"{c.metadata.num_warps} warps, {c.n_spills} spills", flush=True)
            except AttributeError as exc:
                print(f"  split kernel: {exc}", flush=True)
        if chosen > 1:
            rate(f"merge=kernel S={chosen:>3}", n_splits=chosen, merge="kernel")
        for cfg in (CONFIGS[:4] if quick else CONFIGS)[1:]:
            rate(f"cfg={cfg} S={chosen:>3}", n_splits=chosen, config=cfg)
        del q, k, v, kv, out
    # paged caches: pages of 16 and 256 tokens, tiles within a page or across pages
    b, hq, hkv, n_k = 8, 32, 8, 32768
    q = torch.randn(b, 1, hq, d, device="cuda").half()
    kv_bytes = 2 * b * hkv * n_k * d * 2
    kv = torch.empty(2 * kv_bytes // 2, device="cuda", dtype=torch.float16)
    out = torch.empty_like(kv)
    copy_bw = 2 * kv_bytes / time_callable(lambda: out.copy_(kv), 5, 20)
    del kv, out
    for page in (16, 256):
        n_pages = b * n_k // page
        kp, vp = (torch.randn(n_pages, page, hkv, d, device="cuda").half() for _ in range(2))
        table = torch.randperm(n_pages, device="cuda").reshape(b, -1).to(torch.int32)
        print(f"== paged, page {page}: B={b} Hq={hq} Hkv={hkv} N_k={n_k}", flush=True)
        for cfg in ((64, 4, 3), (32, 4, 4), (16, 4, 6), (128, 4, 2), (64, 4, 4)):
            try:
                t = time_callable(lambda: decode_attention(q, kp, vp, n_k, block_table=table, config=cfg,
                                                           check_indices=False), 5, 20)
            except Exception as exc:  # noqa: BLE001
                print(f"  cfg={cfg}: {type(exc).__name__}: {str(exc)[:80]}", flush=True)
                continue
            print(f"  cfg={cfg}: {kv_bytes / t / 1e12:.2f} TB/s = {kv_bytes / t / copy_bw:.2f} of copy",
                  flush=True)
        del kp, vp


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the first four launches only")
    main(parser.parse_args(sys.argv[1:]).quick)
