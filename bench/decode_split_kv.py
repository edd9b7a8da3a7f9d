"""One decoding step's attention on a GPU: a single query row per head against a long KV cache.

Chapter 16 models split-KV decoding (``gpuperf.decoding.decode_time_model``): one program per (sequence,
head) leaves most SMs idle, and splitting the keys into chunks fills them. This script measures it. For
batch 1 and 8 heads of d = 128 in fp16, with one query per head and N_k = 4K..128K cached keys, it times

* ``triton``: chapter 14's forward kernel (``flash_attention_forward``) with one query row per head, so one
  program per head: the unsplit kernel;
* ``sdpa-flash`` and ``sdpa-cudnn``: PyTorch's two fused backends on the same tensors;
* ``copy``: a device-to-device copy of K and V, the same-run reference for the bandwidth;

and records, per row, the bytes of K and V (read once) so that every time reads as a bandwidth. Writes
``decode_split_kv_<device>.json`` with ``gpuperf.recorded.save_run`` into the folder given as the first
argument (default book/data). GPU only.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from gpuperf.results import recorded
from gpuperf.benchmark import device_slug, time_callable

N_KEYS = (4096, 16384, 65536, 131072)
BATCH, HEADS, HEAD_DIM = 1, 8, 128


def main(out_dir: Path) -> None:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from gpuperf.kernels.flash_attention import flash_attention_forward

    def sdpa(backend):
        def run(q, k, v):
            with sdpa_kernel(backend):
                return torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return run

    def triton_fwd(q, k, v):
        return flash_attention_forward(q, k, v)[0]  # (o, lse)

    impls = {"triton": triton_fwd, "sdpa-flash": sdpa(SDPBackend.FLASH_ATTENTION),
             "sdpa-cudnn": sdpa(SDPBackend.CUDNN_ATTENTION)}
    rows = []
    for n_k in N_KEYS:
        q = torch.randn(BATCH, HEADS, 1, HEAD_DIM, device="cuda", dtype=torch.float16)
        k, v = (torch.randn(BATCH, HEADS, n_k, HEAD_DIM, device="cuda", dtype=torch.float16)
                for _ in range(2))
        kv_bytes = 2 * k.numel() * k.element_size()
        ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float())
        kv = torch.cat([k, v])
        out = torch.empty_like(kv)
        cases = {name: (lambda fn=fn: fn(q, k, v)) for name, fn in impls.items()}
        cases["copy"] = lambda: out.copy_(kv)
        for name, fn in cases.items():
            try:
                if name != "copy":
                    err = (fn().float() - ref).abs().max().item()
                    assert err < 1e-2, (name, n_k, err)
                time_s = time_callable(fn, warmup_ms=10, rep_ms=50)
            except (RuntimeError, AssertionError) as exc:  # a backend may refuse one query row
                print(f"{name} N_k={n_k}: skipped ({exc})", flush=True)
                continue
            row = {"impl": name, "n_k": n_k, "batch": BATCH, "heads": HEADS, "head_dim": HEAD_DIM,
                   "dtype": "fp16", "kv_bytes": kv_bytes, "time_s": time_s,
                   "bytes_per_s": (2 if name == "copy" else 1) * kv_bytes / time_s}
            rows.append(row)
            print(row, flush=True)
    name = f"decode_split_kv_{device_slug(torch.cuda.get_device_name())}"
    prov = recorded.provenance("python bench/decode_split_kv.py")
    print(recorded.save_run(name, rows, prov, data_dir=out_dir))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else recorded.DATA_DIR)
