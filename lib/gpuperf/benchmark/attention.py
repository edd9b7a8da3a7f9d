"""Benchmark family ``attention``: the Triton FlashAttention forward (:mod:`gpuperf.kernels.flash_attention`)
against PyTorch's ``scaled_dot_product_attention`` with its flash (FlashAttention-2) and cuDNN backends and
naive eager attention (:func:`gpuperf.kernels.flash_attention.naive_attention`: matmul, scale, softmax in
fp32 between two casts, matmul; six kernels, S and P stored in HBM), all in the same run.

FLOP counted as ``4 B H N^2 d`` (half of it causal), the FlashAttention papers' convention, for every case;
``flop_per_s`` is therefore a like-for-like speed. Shapes follow the Triton tutorial's convention used in
FACTS: ``B = 32768 / N`` sequences of ``H = 2048 / d`` heads (32768 tokens of a 2048-wide model), fp16.

Reference: ``sdpa-flash <dtype> d<d> <mask> N<N>``. Before the grid, the family tunes the Triton launch
configuration (block sizes, warps, stages) for each kernel variant and head dim at N = 4096 by timing the
candidates :data:`CANDIDATES` (``SWEEP_LOG`` keeps the timings); the grid then uses the fastest.
"""

from __future__ import annotations

DESCRIPTION = "Triton FlashAttention forward vs SDPA flash, SDPA cuDNN and naive attention, same run"

N_VALUES = (1024, 2048, 4096, 8192, 16384)
HEAD_DIMS = (64, 128)

#: Launch configurations tried for each head dim: (BLOCK_M, BLOCK_N, num_warps, num_stages).
CANDIDATES = {
    64: ((128, 64, 4, 3), (128, 128, 8, 3), (128, 64, 8, 3), (64, 64, 4, 3), (128, 128, 4, 3)),
    128: ((128, 64, 8, 3), (128, 128, 8, 3), (128, 64, 4, 3), (64, 64, 4, 3), (128, 128, 8, 2)),
}

#: Filled while the cases are generated: one dict per timed candidate (variant, d, config, time_s).
SWEEP_LOG: list[dict] = []

#: Naive attention stores B H N^2 scores (twice, plus fp32 softmax): skip it beyond this N.
NAIVE_MAX_N = 8192


def _reference_fp64_cuda(q, k, v, causal):
    import torch

    q, k, v = (t.double() for t in (q, k, v))
    s = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    return torch.softmax(s, -1) @ v


def cases(quick: bool = False, dtype: str = "fp16", n_values=N_VALUES, head_dims=HEAD_DIMS, tune: bool = True):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from gpuperf.benchmark import Case, check_all_written, check_relative_error, time_callable
    from gpuperf.kernels import flash_attention as fa

    td = {"fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    gen = torch.Generator(device="cuda").manual_seed(0)
    variants = {"triton": False}
    # Probe the TMA variant once; if it fails here, the grid runs without it (and says so in SWEEP_LOG).
    try:
        q = torch.randn(1, 2, 300, 64, device="cuda", dtype=td, generator=gen)
        o, _ = fa.flash_attention_forward(q, q, q, True, use_tma=True)
        check_relative_error("tma probe", o[0, 0].cpu(), _reference_fp64_cuda(q, q, q, True)[0, 0].cpu(), 1e-2)
        variants["triton-tma"] = True
    except Exception as exc:  # noqa: BLE001 - recorded, not hidden
        SWEEP_LOG.append({"variant": "triton-tma", "error": f"{type(exc).__name__}: {exc}"[:500]})
    best = {}
    for d in head_dims:
        n = 4096
        b, h = 32768 // n, 2048 // d
        q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=td, generator=gen) for _ in range(3))
        for variant, use_tma in variants.items():
            timed = []
            for cfg in (CANDIDATES[d] if tune and not quick else CANDIDATES[d][:1]):
                try:
                    fn = lambda cfg=cfg: fa.flash_attention_forward(q, k, v, False, use_tma=use_tma, config=cfg)  # noqa: E731
                    fn()
                    t = time_callable(fn, 5.0, 30.0)
                except Exception as exc:  # noqa: BLE001 - e.g. out of shared memory for this config
                    SWEEP_LOG.append({"variant": variant, "head_dim": d, "config": list(cfg),
                                      "error": f"{type(exc).__name__}: {exc}"[:300]})
                    continue
                tflops = fa.attention_flop(b, h, n, n, d, False) / t / 1e12
                SWEEP_LOG.append({"variant": variant, "head_dim": d, "config": list(cfg), "n_seq": n,
                                  "time_s": t, "tflop_per_s": tflops})
                timed.append((t, cfg))
            best[(variant, d)] = min(timed)[1]
        del q, k, v
    for d in head_dims:
        for causal in (False, True):
            mask = "causal" if causal else "full"
            for n in (n_values[2:3] if quick else n_values):
                b, h = 32768 // n, 2048 // d
                q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=td, generator=gen) for _ in range(3))
                flop = fa.attention_flop(b, h, n, n, d, causal)
                ref_o = _reference_fp64_cuda(q[:1, :1], k[:1, :1], v[:1, :1], causal)[0, 0].cpu()
                tol = {"fp16": 4e-3, "bf16": 3e-2}[dtype]
                params = {"dtype": dtype, "head_dim": d, "mask": mask, "n_seq": n, "batch": b, "heads": h}
                tag = f"{dtype} d{d} {mask} N{n}"
                ref_label = f"sdpa-flash {tag}"

                def sdpa(backend, q=q, k=k, v=v, causal=causal):
                    with sdpa_kernel(backend):
                        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

                runs = {
                    "sdpa-flash": (lambda: sdpa(SDPBackend.FLASH_ATTENTION), None),
                    "sdpa-cudnn": (lambda: sdpa(SDPBackend.CUDNN_ATTENTION), None),
                }
                if n <= NAIVE_MAX_N:
                    runs["naive"] = (lambda q=q, k=k, v=v, c=causal: fa.naive_attention(q, k, v, c), None)
                for variant, use_tma in variants.items():
                    cfg = best[(variant, d)]
                    runs[variant] = (lambda q=q, k=k, v=v, c=causal, t=use_tma, cfg=cfg:
                                     fa.flash_attention_forward(q, k, v, c, use_tma=t, config=cfg)[0], cfg)
                for kernel, (run, cfg) in runs.items():
                    label = f"{kernel} {tag}"

                    def check(label=label, run=run):
                        out = run()
                        torch.cuda.synchronize()
                        check_all_written(label, out)
                        check_relative_error(label, out[0, 0].cpu(), ref_o, tol)

                    yield Case(label, run, flop=flop, metric="flop_per_s",
                               reference=None if kernel == "sdpa-flash" else ref_label, check=check,
                               params={**params, "kernel": kernel,
                                       "config": list(cfg) if cfg is not None else None},
                               retime=(kernel in ("sdpa-flash", "triton-tma", "triton") and n == 4096))
                del q, k, v
