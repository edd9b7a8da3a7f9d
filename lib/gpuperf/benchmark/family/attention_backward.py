"""Benchmark family ``attention_backward``: our Triton FlashAttention backward (and forward + backward)
against PyTorch's ``scaled_dot_product_attention`` with its cuDNN and flash (FlashAttention-2) backends.

For each dtype, head dimension d, mask and sequence length N: B H N = 2^19 rows (H = 2048/d heads, as in a
model of width 2048; B = 2^19 / (H N)): at least 4096 programs per backward kernel, about 31 per SM of an
H200, enough to fill it without wasting the job's time. Every call goes through autograd
(``torch.autograd.grad``) so that all implementations pay the same overhead. Per shape, for each
implementation (``sdpa-cudnn`` first: the reference of the others, issue 15's target; then ``sdpa-flash``
and ``triton``):

* ``<impl> bwd``: the backward pass alone (the forward output is kept, ``retain_graph=True``);
* ``<impl> fwd+bwd``: a forward and a backward pass.

Row params (stable keys, read by the scoreboard): dtype, head_dim, mask, n_seq, batch, heads, impl, pass.

FLOP as the FlashAttention papers count them: the forward 4 B H N^2 d, the backward 2.5 times that (five
N x N x d matmuls instead of two), halved for a causal mask. Bytes: the minimum the backward must move,
reading q, k, v, o, dO and writing dq, dk, dv (8 B H N d b); the forward + backward adds reading q, k, v and
writing o (12 B H N d b). Each case is checked first on one (batch, head) slice against float64 autograd.
"""

from __future__ import annotations

DESCRIPTION = ("FlashAttention backward and fwd+bwd (Triton) vs SDPA cuDNN (reference) and flash backends, "
               "fp16/bf16, d = 64/128, N = 1K-16K, causal and full")

#: A full run (``make bench``) rewrites the record the book reads (chapters 15, 16 and the scoreboard).
RECORD_STEM = "attention_backward_targets"

#: Sequence lengths of the full sweep, and of the quick one.
SEQ_LENS = (1024, 2048, 4096, 8192, 16384)
QUICK_SEQ_LENS = (4096,)
HEAD_DIMS = (64, 128)
#: Rows of attention in flight, B x H x N.
ROWS = 2**19
#: Model width that sets the number of heads, H = WIDTH / d.
WIDTH = 2048

#: Implementations in the order they are timed; the first is the reference of the others.
IMPLEMENTATIONS = ("sdpa-cudnn", "sdpa-flash", "triton")
REFERENCE = "sdpa-cudnn"

#: Relative (Frobenius) error of the gradients vs float64 allowed in the checks, per dtype.
TOLERANCE = {"fp16": 4e-3, "bf16": 3e-2}


def shape_for(n_seq: int, head_dim: int, rows: int = ROWS) -> tuple[int, int]:
    """(batch, heads) with heads = WIDTH / head_dim and batch x heads x n_seq = rows."""
    heads = WIDTH // head_dim
    batch = max(1, rows // (heads * n_seq))
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


def cases(quick: bool = False, dtypes=("fp16", "bf16"), head_dims=HEAD_DIMS, seq_lens=None,
          causals=(False, True), impls=IMPLEMENTATIONS, passes=("bwd", "fwd+bwd"), bf16_seq_lens=(4096,),
          rows=ROWS):
    """For each (dtype, d, causal, N): cuDNN (the reference), then the others (tensors made one shape at a
    time). ``bf16_seq_lens`` restricts bf16 to those N (default N = 4096, as recorded; None: ``seq_lens``);
    ``impls`` must start with the reference ``sdpa-cudnn``."""
    import torch

    from gpuperf.benchmark import Case, check_relative_error

    impls = tuple(impls)
    if not impls or impls[0] != REFERENCE or not set(impls) <= set(IMPLEMENTATIONS):
        raise ValueError(f"impls must start with {REFERENCE!r} and name only {IMPLEMENTATIONS}, "
                         f"got {impls!r}")
    if not set(passes) <= {"bwd", "fwd+bwd"} or not passes:
        raise ValueError(f"passes must be a non-empty subset of ('bwd', 'fwd+bwd'), got {passes!r}")
    torch_dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    seq_lens = (QUICK_SEQ_LENS if quick else SEQ_LENS) if seq_lens is None else tuple(seq_lens)
    gen = torch.Generator(device="cuda").manual_seed(0)
    for dtype_name in dtypes:
        dtype = torch_dtypes[dtype_name]
        lens = seq_lens if dtype_name != "bf16" or bf16_seq_lens is None else tuple(bf16_seq_lens)
        for head_dim in head_dims:
            for causal in causals:
                for n_seq in lens:
                    yield from _shape_cases(dtype_name, dtype, head_dim, causal, n_seq, impls, passes, rows,
                                            gen, Case, check_relative_error)
                    torch.cuda.empty_cache()


def _shape_cases(dtype_name, dtype, head_dim, causal, n_seq, impls, passes, rows, gen, Case,
                 check_relative_error):
    import torch

    mask = "causal" if causal else "full"
    batch, heads = shape_for(n_seq, head_dim, rows)
    shape = (batch, heads, n_seq, head_dim)
    q, k, v, do = (torch.randn(shape, device="cuda", dtype=dtype, generator=gen) for _ in range(4))
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    # float64 reference on the first (batch, head) slice
    s64 = [t[:1, :1].detach().double().requires_grad_() for t in (q, k, v)]
    o64 = torch.nn.functional.scaled_dot_product_attention(*s64, is_causal=causal)
    ref = torch.autograd.grad(o64, s64, do[:1, :1].double())
    del o64, s64
    params = {"dtype": dtype_name, "head_dim": head_dim, "mask": mask, "n_seq": n_seq, "batch": batch,
              "heads": heads}
    fb = backward_flop(batch, heads, n_seq, head_dim, causal)
    ff = forward_flop(batch, heads, n_seq, head_dim, causal)
    elem = torch.finfo(dtype).bits // 8 * batch * heads * n_seq * head_dim  # bytes of one (B, H, N, d)
    tail = f"{dtype_name} d={head_dim} {mask} N={n_seq}"
    for name in impls:
        attention = _attention_fn(name, causal)
        out = attention(q, k, v) if "bwd" in passes else None

        def bwd(out=out):
            return torch.autograd.grad(out, (q, k, v), do, retain_graph=True)

        def fwd_bwd(attention=attention):
            return torch.autograd.grad(attention(q, k, v), (q, k, v), do)

        def check(fn=bwd if out is not None else fwd_bwd, label=f"{name} {tail}"):
            grads = fn()
            for g, r in zip(grads, ref):
                check_relative_error(label, g[:1, :1], r, TOLERANCE[dtype_name])

        is_ref = name == REFERENCE
        if "bwd" in passes:
            yield Case(label=f"{name} bwd {tail}", fn=bwd, flop=fb, bytes_moved=8.0 * elem,
                       metric="flop_per_s", reference=None if is_ref else f"{REFERENCE} bwd {tail}",
                       check=check, params={**params, "impl": name, "pass": "bwd"},
                       retime=n_seq == 4096 and name in (REFERENCE, "triton"))
        if "fwd+bwd" in passes:
            yield Case(label=f"{name} fwd+bwd {tail}", fn=fwd_bwd, flop=ff + fb, bytes_moved=12.0 * elem,
                       metric="flop_per_s", reference=None if is_ref else f"{REFERENCE} fwd+bwd {tail}",
                       check=None if "bwd" in passes else check,
                       params={**params, "impl": name, "pass": "fwd+bwd"})
