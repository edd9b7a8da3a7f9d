"""Benchmark family ``decode``: one decoding step's attention with the course's Flash-Decoding kernel
(``gpuperf.kernels.decode``) against same-run references, over the shapes inference runs.

Per shape (batch B, H_q query heads sharing H_kv KV heads, N_k cached keys per sequence, d = 128, one query
row per sequence and head, fp16; ``SHAPES``):

* ``copy`` (the reference of every row): a device-to-device copy of the K and V bytes, ``2 * kv_bytes``
  moved (read and write);
* ``triton``: :func:`decode_attention` with its default split count, on the SDPA-layout tensors (q viewed as
  (B, 1, H_q, d), the cache ``layout="bhnd"``), lengths given as an int (no host read of the lengths);
* ``triton-unsplit``: the same kernel with ``n_splits=1`` (one program per (sequence, KV head)): the split
  against no split, the same kernel family;
* ``triton-paged``: the same cache copied into shuffled pages of ``PAGE_SIZES`` tokens with a block table
  (shapes marked paged), ``check_indices=False``;
* ``sdpa-cudnn``, ``sdpa-flash``: PyTorch's fused backends on the same tensors. GQA (H_q > H_kv) goes
  through ``enable_gqa=True``; a backend that refuses it (or one query row) is run on heads expanded with
  ``repeat_interleave`` instead (``gqa="expanded"``: it then reads H_q / H_kv times the cache, and the
  row still counts the bytes of the unexpanded K and V), and a backend that refuses both is left out
  with a message.

Every attention row counts ``kv_bytes`` (K and V read once), so its ``bytes_per_s`` reads as a bandwidth
beside the copy's (whose ``bytes_per_s`` counts read and write: the same bytes per second of HBM traffic).
Checked against an fp32 SDPA on expanded heads (max absolute error below 1e-2).

Host time (``HOST_SHAPE``): ``host-sdpa`` (the reference: SDPA's default backend) and ``host-triton``
(``decode_attention`` on the same tensors, ``check_indices=False``), timed by
:func:`gpuperf.benchmark.time_host_callable` (calls issued back to back; the rate is calls per second).

The recorded run: ``python bench/run.py decode --warmup-ms 10 --rep-ms 50`` -> ``decode_<device>.json``.
"""

from __future__ import annotations

import sys

DESCRIPTION = ("one decoding step (1 query row per head, 1K-128K keys, GQA, paged): Flash-Decoding vs the copy "
               "of K, V, SDPA cuDNN and flash")

HEAD_DIM = 128
#: (batch, H_q, H_kv, N_k, paged): long caches at batch 1-64 (MHA and GQA), short ones (1K-4K).
SHAPES = (
    (1, 8, 8, 8192, False), (1, 8, 8, 32768, False), (1, 8, 8, 131072, True),
    (1, 32, 8, 131072, False), (8, 32, 32, 8192, False), (8, 32, 8, 32768, True),
    (16, 64, 8, 32768, False), (64, 32, 8, 8192, True), (64, 32, 32, 8192, False),
    (8, 32, 32, 1024, False), (8, 32, 8, 2048, False), (32, 32, 8, 4096, False), (64, 32, 8, 1024, False),
)
QUICK_SHAPES = ((1, 8, 8, 32768, False), (8, 32, 8, 32768, True), (64, 32, 8, 8192, False),
                (8, 32, 32, 1024, False))
PAGE_SIZES = (16, 256)
HOST_SHAPE = (1, 32, 8, 4096)
TOLERANCE = 1e-2


def _label(impl: str, b: int, hq: int, hkv: int, n_k: int, extra: str = "") -> str:
    return f"{impl}{extra} fp16 B={b} Hq={hq} Hkv={hkv} N_k={n_k}"


def _group(b: int, hq: int, hkv: int, n_k: int, paged: bool):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from gpuperf.benchmark import Case
    from gpuperf.kernels.decode import decode_attention

    d = HEAD_DIM
    gen = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(b, hq, 1, d, device="cuda", generator=gen).half()
    k = torch.randn(b, hkv, n_k, d, device="cuda", generator=gen).half()
    v = torch.randn(b, hkv, n_k, d, device="cuda", generator=gen).half()
    kv_bytes = 2 * k.numel() * k.element_size()
    group = hq // hkv
    ref = F.scaled_dot_product_attention(q.float(), k.float().repeat_interleave(group, 1),
                                         v.float().repeat_interleave(group, 1))
    kv = torch.cat([k.reshape(-1), v.reshape(-1)])
    out = torch.empty_like(kv)
    shape = {"batch": b, "h_q": hq, "h_kv": hkv, "n_k": n_k, "n_q": 1, "head_dim": d, "dtype": "fp16"}
    copy_label = _label("copy", b, hq, hkv, n_k)
    yield Case(copy_label, lambda: out.copy_(kv), bytes_moved=2.0 * kv_bytes,
               params={"impl": "copy", **shape, "kv_bytes": kv_bytes})
    q_view = q.transpose(1, 2)  # (B, 1, H_q, d): the kernel's layout, a view of SDPA's tensor

    def error(fn):
        got = fn().float()
        return float(((got if got.shape == ref.shape else got.transpose(1, 2)) - ref).abs().max())

    def checked(label, fn, params):
        """The case, or None (with a message) for a backend that refuses the shape or a wrong result: one
        bad case must not stop the family's run."""
        try:
            err = error(fn)
            torch.cuda.synchronize()
        except RuntimeError as exc:
            print(f"{label}: skipped ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})",
                  file=sys.stderr, flush=True)
            return None
        if not err < TOLERANCE:
            print(f"{label}: WRONG, max absolute error {err:.3g} vs fp32 SDPA; left out", flush=True)
            return None

        def check(fn=fn, label=label):
            err = error(fn)
            if not err < TOLERANCE:
                raise RuntimeError(f"{label}: max absolute error {err:.3g} vs fp32 SDPA exceeds {TOLERANCE}")

        return Case(label, fn, bytes_moved=float(kv_bytes), reference=copy_label, check=check,
                    params={**params, **shape, "kv_bytes": kv_bytes})

    from gpuperf.kernels.decode import choose_splits, sm_count

    splits = choose_splits(b, hkv, 1, n_k, sm_count=sm_count(q.device))
    ours = {"triton": (None, splits), "triton-unsplit": (1, 1)}
    for impl, (n_splits, recorded) in ours.items():
        fn = (lambda n_splits=n_splits: decode_attention(q_view, k, v, n_k, layout="bhnd", n_splits=n_splits,
                                                         check_indices=False))
        case = checked(_label(impl, b, hq, hkv, n_k), fn, {"impl": impl, "n_splits": recorded, "gqa": "native"})
        if case is not None:
            yield case
    if paged:
        for page in PAGE_SIZES:
            pages_per_seq = n_k // page
            perm = torch.randperm(b * pages_per_seq, device="cuda", generator=gen)
            table = perm.reshape(b, pages_per_seq).to(torch.int32)
            kp = torch.empty(b * pages_per_seq, page, hkv, d, device="cuda", dtype=k.dtype)
            vp = torch.empty_like(kp)
            # page table[b, i] holds keys i*page..(i+1)*page-1 of sequence b
            kp[table.reshape(-1).long()] = k.transpose(1, 2).reshape(b * pages_per_seq, page, hkv, d)
            vp[table.reshape(-1).long()] = v.transpose(1, 2).reshape(b * pages_per_seq, page, hkv, d)
            fn = (lambda kp=kp, vp=vp, table=table:
                  decode_attention(q_view, kp, vp, n_k, block_table=table, check_indices=False))
            case = checked(_label("triton-paged", b, hq, hkv, n_k, f" page={page}"), fn,
                           {"impl": "triton-paged", "page_size": page, "n_splits": splits, "gqa": "native"})
            if case is not None:
                yield case

    def sdpa(backend, gqa):
        if gqa == "native":
            def run():
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q, k, v, enable_gqa=hq != hkv)
        else:
            ke, ve = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)

            def run():
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q, ke, ve)
        return run

    for impl, backend in (("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION), ("sdpa-flash", SDPBackend.FLASH_ATTENTION)):
        for gqa in (("native", "expanded") if hq != hkv else ("native",)):
            case = checked(_label(impl, b, hq, hkv, n_k, "" if gqa == "native" else " expanded"),
                           sdpa(backend, gqa), {"impl": impl, "gqa": gqa})
            if case is not None:
                yield case
                break


def _host_cases():
    import torch
    import torch.nn.functional as F

    from gpuperf.benchmark import Case
    from gpuperf.kernels.decode import decode_attention

    b, hq, hkv, n_k = HOST_SHAPE
    q = torch.randn(b, hq, 1, HEAD_DIM, device="cuda").half()
    k, v = (torch.randn(b, hkv, n_k, HEAD_DIM, device="cuda").half() for _ in range(2))
    params = {"batch": b, "h_q": hq, "h_kv": hkv, "n_k": n_k, "n_q": 1, "head_dim": HEAD_DIM, "dtype": "fp16"}
    ref_label = _label("host-sdpa", b, hq, hkv, n_k)
    yield Case(ref_label, lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), metric="calls_per_s",
               timing="host", params={"impl": "host-sdpa", **params})
    q_view = q.transpose(1, 2)
    yield Case(_label("host-triton", b, hq, hkv, n_k),
               lambda: decode_attention(q_view, k, v, n_k, layout="bhnd", check_indices=False),
               metric="calls_per_s", timing="host", reference=ref_label, params={"impl": "host-triton", **params})


def cases(quick: bool = False, shapes=None, host: bool = True, min_keys: int = 0,
          max_keys: int | None = None):
    """The copy, our kernel (split, unsplit, paged) and SDPA's backends per shape of ``shapes`` (default
    :data:`SHAPES`, quick: :data:`QUICK_SHAPES`) with ``min_keys`` to ``max_keys`` keys, then (``host``)
    the host-time pair."""
    shapes = tuple(shapes) if shapes is not None else (QUICK_SHAPES if quick else SHAPES)
    for shape in shapes:
        if shape[3] < min_keys or (max_keys is not None and shape[3] > max_keys):
            continue
        if len(shape) != 5 or not all(isinstance(x, int) and x > 0 for x in shape[:4]):
            raise ValueError(f"shapes must hold (batch, H_q, H_kv, N_k, paged) tuples, got {shape!r}")
        yield from _group(*shape)
    if host:
        yield from _host_cases()
