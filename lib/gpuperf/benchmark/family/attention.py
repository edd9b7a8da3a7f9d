"""Benchmark family ``attention``: the Triton FlashAttention forward (:mod:`gpuperf.kernels.flash_attention`,
the launch its wrapper picks by default) against PyTorch's ``scaled_dot_product_attention`` with its cuDNN
and flash (FlashAttention-2) backends, all in the same run, on issue 15's target shapes: head dims 64 and
128, N = 1K-16K, full and causal masks, fp16 and bf16.

FLOP counted as ``4 B H N^2 d`` (half of it causal), the FlashAttention papers' convention, for every case;
``flop_per_s`` is therefore a like-for-like speed. Shapes follow the Triton tutorial's convention used in
FACTS: ``B = 32768 / N`` sequences of ``H = 2048 / d`` heads (32768 tokens of a 2048-wide model), which
fills the GPU at every N.

Reference: ``sdpa-cudnn <dtype> d<d> <mask> N<N>`` (the fastest library kernel on an H200); the flash backend
and the Triton kernel both name it, so ``ratio_to_reference`` is the speed over cuDNN's. With ``naive=True``
(the default for ``quick=True``, which chapter 12's live cell plots) naive eager attention
(:func:`gpuperf.kernels.flash_attention.naive_attention`: S and P stored in HBM) joins for N <= 8192.

Rows' params: ``dtype, head_dim, mask, n_seq, batch, heads, kernel, config`` (``config``: the Triton launch,
from :func:`gpuperf.kernels.flash_attention.default_launch`, ``None`` for the library kernels) and
``variant`` (which Triton kernel ran). :mod:`gpuperf.results.attention` reads them (speed ratios, the
target of each head dimension).
"""

from __future__ import annotations

#: ``bench/run.py attention`` writes ``attention_targets_<device>.json`` (what chapter 14 and the scoreboard
#: read); ``attention_h200.json`` is the family's first run (2026-11-30, another row format), kept as recorded.
RECORD_STEM = "attention_targets"

DESCRIPTION = "Triton FlashAttention forward vs SDPA cuDNN (reference) and SDPA flash, same run, issue 15's shapes"

N_VALUES = (1024, 2048, 4096, 8192, 16384)
HEAD_DIMS = (64, 128)
DTYPES = ("fp16", "bf16")

#: Naive attention stores B H N^2 scores (twice, plus fp32 softmax): skip it beyond this N.
NAIVE_MAX_N = 8192

#: Relative error bound of each check (one head against float64; the rounding of P and O dominates).
TOLERANCE = {"fp16": 4e-3, "bf16": 3e-2}


def _reference_fp64_cuda(q, k, v, causal):
    import torch

    q, k, v = (t.double() for t in (q, k, v))
    s = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    return torch.softmax(s, -1) @ v


def _shape_cases(td, dtype, d, causal, n, gen, naive):
    """The cases of one shape (a function per group, so closures never see the next group's tensors)."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from gpuperf.benchmark import Case, check_all_written, check_relative_error
    from gpuperf.kernels import flash_attention as fa

    mask = "causal" if causal else "full"
    b, h = 32768 // n, 2048 // d
    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=td, generator=gen) for _ in range(3))
    flop = fa.attention_flop(b, h, n, n, d, causal)
    ref_o = _reference_fp64_cuda(q[:1, :1], k[:1, :1], v[:1, :1], causal)[0, 0].cpu()
    params = {"dtype": dtype, "head_dim": d, "mask": mask, "n_seq": n, "batch": b, "heads": h}
    tag = f"{dtype} d{d} {mask} N{n}"
    ref_label = f"sdpa-cudnn {tag}"
    variant, config = fa.default_launch(q, k, causal)

    def sdpa(backend):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    runs = [("sdpa-cudnn", lambda: sdpa(SDPBackend.CUDNN_ATTENTION), None, None),
            ("sdpa-flash", lambda: sdpa(SDPBackend.FLASH_ATTENTION), None, None),
            ("triton", lambda: fa.flash_attention_forward(q, k, v, causal)[0], config, variant)]
    if naive and n <= NAIVE_MAX_N:
        runs.append(("naive", lambda: fa.naive_attention(q, k, v, causal), None, None))
    for kernel, run, cfg, var in runs:
        label = f"{kernel} {tag}"

        def check(label=label, run=run):
            out = run()
            torch.cuda.synchronize()
            check_all_written(label, out)
            check_relative_error(label, out[0, 0].cpu(), ref_o, TOLERANCE[dtype])

        yield Case(label, run, flop=flop, metric="flop_per_s",
                   reference=None if kernel == "sdpa-cudnn" else ref_label, check=check,
                   params={**params, "kernel": kernel, "config": cfg, "variant": var},
                   retime=(kernel in ("sdpa-cudnn", "triton") and n in (1024, 4096)))


def cases(quick: bool = False, dtypes=DTYPES, n_values=N_VALUES, head_dims=HEAD_DIMS, naive: bool | None = None,
          dtype: str | None = None):
    """Every (dtype, d, mask, N) of the targets; ``quick``: fp16, N = 4096 only. ``dtype`` (one name)
    overrides ``dtypes``."""
    import torch

    if dtype is not None:
        dtypes = (dtype,)
    if quick:
        dtypes, n_values = dtypes[:1], (4096,)
    if naive is None:
        naive = quick
    for name in dtypes:
        if name not in TOLERANCE:
            raise ValueError(f"dtypes must name fp16 or bf16, got {name!r}")
    gen = torch.Generator(device="cuda").manual_seed(0)
    for name in dtypes:
        td = {"fp16": torch.float16, "bf16": torch.bfloat16}[name]
        for d in head_dims:
            for causal in (False, True):
                for n in n_values:
                    yield from _shape_cases(td, name, d, causal, n, gen, naive)
