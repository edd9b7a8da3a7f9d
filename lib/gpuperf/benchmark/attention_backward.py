"""Benchmark family ``attention_backward``: our Triton FlashAttention backward (and forward + backward)
against PyTorch's ``scaled_dot_product_attention`` with its flash (FlashAttention-2) and cuDNN backends.

For each head dimension d, sequence length N and mask, B H N = 2^19 rows (H = 2048/d heads, as in a model of
width 2048; B = 2^19 / (H N)): at least 4096 programs per kernel, about 31 per SM of an H200, and a quarter
of the 2^21 rows first planned, to fit the sweep into the team's GPU time (bench/NOTES.md compares the two
at N = 4096). Every call goes through autograd
(``torch.autograd.grad``) so that all three implementations pay the same overhead. Six cases per shape:

* ``sdpa-flash bwd``, ``sdpa-cudnn bwd``, ``triton bwd``: the backward pass alone (the forward output is
  kept, ``retain_graph=True``); ours is compared with SDPA's flash backend;
* ``sdpa-flash fwd+bwd``, ``sdpa-cudnn fwd+bwd``, ``triton fwd+bwd``: a forward and a backward pass.

FLOP as the FlashAttention papers count them: the forward 4 B H N^2 d, the backward 2.5 times that (five
N x N x d matmuls instead of two), halved for a causal mask. Bytes: the minimum the backward must move,
reading q, k, v, o, dO and writing dq, dk, dv (8 B H N d b); the forward + backward adds reading q, k, v and
writing o (12 B H N d b). Each case is checked first on one (batch, head) slice against float64 autograd.
"""

from __future__ import annotations

DESCRIPTION = ("FlashAttention backward and fwd+bwd (Triton) vs SDPA flash and cuDNN backends, fp16, "
               "d = 64/128, N = 1K-16K, causal and full")

#: Sequence lengths of the full sweep, and of the quick one.
SEQ_LENS = (1024, 2048, 4096, 8192, 16384)
QUICK_SEQ_LENS = (4096,)
HEAD_DIMS = (64, 128)
#: Rows of attention in flight, B x H x N.
ROWS = 2**19
#: Model width that sets the number of heads, H = WIDTH / d.
WIDTH = 2048

IMPLEMENTATIONS = ("sdpa-flash", "sdpa-cudnn", "triton")

#: Relative (Frobenius) error of the gradients vs float64 allowed in the checks, per dtype.
TOLERANCE = {"fp16": 4e-3, "bf16": 3e-2}


def shape_for(n_seq: int, head_dim: int) -> tuple[int, int]:
    """(batch, heads) with heads = WIDTH / head_dim and batch x heads x n_seq = ROWS."""
    heads = WIDTH // head_dim
    batch = max(1, ROWS // (heads * n_seq))
    return batch, heads


def backward_flop(batch: int, heads: int, n_seq: int, head_dim: int, causal: bool) -> float:
    """2.5 x 4 B H N^2 d, halved for a causal mask (the FlashAttention papers' convention)."""
    flop = 2.5 * 4.0 * batch * heads * n_seq * n_seq * head_dim
    return flop / 2 if causal else flop


def forward_flop(batch: int, heads: int, n_seq: int, head_dim: int, causal: bool) -> float:
    """4 B H N^2 d, halved for a causal mask."""
    flop = 4.0 * batch * heads * n_seq * n_seq * head_dim
    return flop / 2 if causal else flop


def _attention_fn(name: str, causal: bool):
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    if name == "triton":
        from gpuperf.kernels.flash_attention_bwd import flash_attention

        return lambda q, k, v: flash_attention(q, k, v, causal=causal)
    backend = {"sdpa-flash": SDPBackend.FLASH_ATTENTION, "sdpa-cudnn": SDPBackend.CUDNN_ATTENTION}[name]

    def sdpa(q, k, v):
        with sdpa_kernel(backend):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)

    return sdpa


def cases(quick: bool = False, dtypes=("fp16",), head_dims=HEAD_DIMS, seq_lens=None, causals=(False, True)):
    """For each (dtype, d, causal, N): the SDPA references, then ours (tensors made one shape at a time)."""
    import torch

    from gpuperf.benchmark import Case, check_relative_error

    torch_dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    seq_lens = (QUICK_SEQ_LENS if quick else SEQ_LENS) if seq_lens is None else tuple(seq_lens)
    gen = torch.Generator(device="cuda").manual_seed(0)
    for dtype_name in dtypes:
        dtype = torch_dtypes[dtype_name]
        for head_dim in head_dims:
            for causal in causals:
                mask = "causal" if causal else "full"
                for n_seq in seq_lens:
                    batch, heads = shape_for(n_seq, head_dim)
                    shape = (batch, heads, n_seq, head_dim)
                    q, k, v, do = (torch.randn(shape, device="cuda", dtype=dtype, generator=gen)
                                   for _ in range(4))
                    q, k, v = (t.requires_grad_() for t in (q, k, v))
                    # float64 reference on the first (batch, head) slice
                    s64 = [t[:1, :1].detach().double().requires_grad_() for t in (q, k, v)]
                    o64 = torch.nn.functional.scaled_dot_product_attention(*s64, is_causal=causal)
                    ref = torch.autograd.grad(o64, s64, do[:1, :1].double())
                    del o64, s64
                    params = {"dtype": dtype_name, "head_dim": head_dim, "mask": mask, "n_seq": n_seq,
                              "batch": batch, "heads": heads}
                    fb = backward_flop(batch, heads, n_seq, head_dim, causal)
                    ff = forward_flop(batch, heads, n_seq, head_dim, causal)
                    elem = 2 * batch * heads * n_seq * head_dim  # bytes of one (B, H, N, d) tensor
                    tail = f"{dtype_name} d={head_dim} {mask} N={n_seq}"
                    for name in IMPLEMENTATIONS:
                        attention = _attention_fn(name, causal)
                        out = attention(q, k, v)

                        def bwd(out=out):
                            return torch.autograd.grad(out, (q, k, v), do, retain_graph=True)

                        def fwd_bwd(attention=attention):
                            return torch.autograd.grad(attention(q, k, v), (q, k, v), do)

                        def check(bwd=bwd, label=f"{name} bwd {tail}"):
                            grads = bwd()
                            for g, r in zip(grads, ref):
                                check_relative_error(label, g[:1, :1], r, TOLERANCE[dtype_name])

                        is_ref = name == "sdpa-flash"
                        yield Case(label=f"{name} bwd {tail}", fn=bwd, flop=fb, bytes_moved=8.0 * elem,
                                   metric="flop_per_s", reference=None if is_ref else f"sdpa-flash bwd {tail}",
                                   check=check, params={**params, "impl": name, "pass": "bwd"},
                                   retime=n_seq == 4096)
                        yield Case(label=f"{name} fwd+bwd {tail}", fn=fwd_bwd, flop=ff + fb,
                                   bytes_moved=12.0 * elem, metric="flop_per_s",
                                   reference=None if is_ref else f"sdpa-flash fwd+bwd {tail}",
                                   params={**params, "impl": name, "pass": "fwd+bwd"})
                        del out
                    del q, k, v, do, ref
                    torch.cuda.empty_cache()
