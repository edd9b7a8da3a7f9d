"""Benchmark family ``decode_split_kv``: one decoding step's attention, a single query row per head against
a long KV cache (chapter 16, split-KV decoding; the model is ``gpuperf.decoding.decode_time_model``).

Batch 1, 8 heads of d = 128, fp16, one query per head, N_k = 4K..128K cached keys. Per N_k:

* ``copy`` (the reference): a device-to-device copy of K and V concatenated, ``2 * kv_bytes`` moved;
* ``triton``: chapter 14's forward kernel (``flash_attention_forward``) with one query row per head, so one
  program per head: the unsplit kernel;
* ``sdpa-flash`` and ``sdpa-cudnn``: PyTorch's two fused backends on the same tensors.

Each attention case is counted with the bytes of K and V (read once), so its ``bytes_per_s`` reads as a
bandwidth next to the copy's. Checked against an fp32 SDPA (max absolute error below 1e-2). A backend
that refuses one query row on this machine (``RuntimeError`` on its first call) is left out with a
message rather than stopping the run. The recorded run the chapter reads:
``python bench/run.py decode_split_kv --warmup-ms 10 --rep-ms 50`` -> ``decode_split_kv_<device>.json``
(rows keep the keys ``impl``, ``n_k``, ``batch``, ``heads``, ``head_dim``, ``dtype``, ``kv_bytes``).
"""

from __future__ import annotations

import sys

DESCRIPTION = "one decoding step (1 query row per head, 4K-128K keys): Triton, SDPA flash, cuDNN vs the copy of K, V"

#: Cached keys per head of the recorded run.
N_KEYS = (4096, 16384, 65536, 131072)
BATCH, HEADS, HEAD_DIM = 1, 8, 128
#: Max absolute error against the fp32 SDPA (outputs are O(0.1): averages of N_k unit normals).
TOLERANCE = 1e-2


def _group(n_k: int):
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from gpuperf.benchmark import Case
    from gpuperf.kernels.flash_attention import flash_attention_forward

    q = torch.randn(BATCH, HEADS, 1, HEAD_DIM, device="cuda", dtype=torch.float16)
    k, v = (torch.randn(BATCH, HEADS, n_k, HEAD_DIM, device="cuda", dtype=torch.float16) for _ in range(2))
    kv_bytes = 2 * k.numel() * k.element_size()
    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float())
    kv = torch.cat([k, v])
    out = torch.empty_like(kv)
    params = {"n_k": n_k, "batch": BATCH, "heads": HEADS, "head_dim": HEAD_DIM, "dtype": "fp16",
              "kv_bytes": kv_bytes}
    copy_label = f"copy fp16 N_k={n_k}"
    yield Case(copy_label, lambda: out.copy_(kv), bytes_moved=2.0 * kv_bytes, params={"impl": "copy", **params})

    def sdpa(backend):
        def run():
            with sdpa_kernel(backend):
                return torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return run

    impls = {"triton": lambda: flash_attention_forward(q, k, v)[0],  # (o, lse)
             "sdpa-flash": sdpa(SDPBackend.FLASH_ATTENTION),
             "sdpa-cudnn": sdpa(SDPBackend.CUDNN_ATTENTION)}
    for impl, fn in impls.items():
        label = f"{impl} fp16 N_k={n_k}"
        try:
            fn()  # a backend may refuse one query row
            torch.cuda.synchronize()
        except RuntimeError as exc:
            print(f"{label}: skipped ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})",
                  file=sys.stderr, flush=True)
            continue

        def check(fn=fn, label=label):
            err = float((fn().float() - ref).abs().max())
            if not err < TOLERANCE:
                raise RuntimeError(f"{label}: max absolute error {err:.3g} vs fp32 SDPA exceeds {TOLERANCE}")

        yield Case(label, fn, bytes_moved=float(kv_bytes), reference=copy_label, check=check,
                   params={"impl": impl, **params})


def cases(quick: bool = False, n_keys=N_KEYS):
    """The copy and the three attention implementations at each N_k of ``n_keys`` (quick: the shortest
    and the longest)."""
    n_keys = tuple(n_keys)
    if not n_keys or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in n_keys):
        raise ValueError(f"n_keys must be a non-empty sequence of positive ints, got {n_keys!r}")
    for n_k in ((n_keys[0], n_keys[-1]) if quick and len(n_keys) > 1 else n_keys):
        yield from _group(n_k)
