"""Benchmark family ``attention_memory``: peak memory and time of one attention training step (forward +
backward): eager PyTorch attention vs the course's FlashAttention Function vs SDPA's flash backend
(chapters 15 and 16).

Two eager baselines. ``standard`` is attention as many models wrote it: six kernels (Q K^T, the scale, a
cast to fp32, an fp32 softmax, a cast back to fp16, P V); autograd saves the fp32 softmax output *and* its
fp16 copy (6 bytes per score) and the backward materialises dP and dS (about 16 bytes per score at the
peak). ``standard-fp16`` is Algorithm 0 of the FlashAttention paper in three kernels (Q scaled first,
Q K^T, an fp16 softmax, P V): one fp16 P saved, 8 bytes per score at the peak.

B = 1, H = 16, d = 64, fp16, no mask, N = 1K..16K. For each implementation and N the row holds the peak
memory allocated by one step above what was allocated before it (``peak_bytes``, measured once before the
timing: ``torch.cuda.max_memory_allocated``) and the median time of the step, counted at 3.5 x the forward's
4 B H N^2 d FLOP. Each step's dQ for the first 64 queries is checked against float64. Reference: the
``standard`` step of the same N. The recorded run the chapters read:
``python bench/run.py attention_memory --warmup-ms 10 --rep-ms 40`` -> ``attention_memory_<device>.json``.
"""

from __future__ import annotations

import math

DESCRIPTION = "peak memory and time of one attention fwd+bwd step: eager (fp32 and fp16 softmax), Triton, SDPA flash"

SEQ_LENS = (1024, 2048, 4096, 8192, 16384)
BATCH, HEADS, HEAD_DIM = 1, 16, 64
IMPLS = ("standard", "standard-fp16", "triton", "sdpa-flash")
#: Relative error (Frobenius) of dQ's first 64 query rows against float64; eager fp16 softmax included.
TOLERANCE = 2e-2
CHECK_ROWS = 64


def naive(q, k, v):
    """Standard attention as eager PyTorch: S = scale Q K^T, P = softmax(S) (fp32, stored as fp16), O = P V."""
    import torch

    s = torch.matmul(q, k.transpose(-1, -2)) * (1 / math.sqrt(q.shape[-1]))
    p = torch.softmax(s.float(), dim=-1).to(q.dtype)
    return torch.matmul(p, v)


def naive_fp16(q, k, v):
    """Algorithm 0 in three kernels on 16-bit tensors: S = (scale Q) K^T, P = softmax(S) (fp16 out), O = P V.
    Autograd keeps one fp16 P (the softmax's output is also the second product's input)."""
    import torch

    s = torch.matmul(q * (1 / math.sqrt(q.shape[-1])), k.transpose(-1, -2))
    return torch.matmul(torch.softmax(s, dim=-1), v)


def step_flop(n_seq: int, batch: int = BATCH, heads: int = HEADS, head_dim: int = HEAD_DIM) -> float:
    """FLOP counted for one forward + backward step: 3.5 x the forward's 4 B H N^2 d."""
    return 3.5 * 4.0 * batch * heads * n_seq * n_seq * head_dim


def _group(n_seq: int):
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from gpuperf.benchmark import Case, check_relative_error
    from gpuperf.kernels.flash_attention_bwd import flash_attention

    def sdpa_flash(q, k, v):
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)

    impls = {"standard": naive, "standard-fp16": naive_fp16, "triton": flash_attention, "sdpa-flash": sdpa_flash}
    q, k, v, do = (torch.randn(BATCH, HEADS, n_seq, HEAD_DIM, device="cuda", dtype=torch.float16)
                   for _ in range(4))
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    reference_dq = []  # dQ of the first CHECK_ROWS queries in float64, computed on first use

    def dq_reference():
        if not reference_dq:
            q64 = q.detach()[:, :, :CHECK_ROWS].double().requires_grad_()
            k64, v64 = k.detach().double(), v.detach().double()
            p = torch.softmax(q64 @ k64.transpose(-1, -2) / math.sqrt(HEAD_DIM), dim=-1)
            (dq,) = torch.autograd.grad(p @ v64, (q64,), do[:, :, :CHECK_ROWS].double())
            reference_dq.append(dq)
        return reference_dq[0]

    params = {"n_seq": n_seq, "batch": BATCH, "heads": HEADS, "head_dim": HEAD_DIM, "dtype": "fp16"}
    first = None
    for impl in IMPLS:
        fn = impls[impl]
        label = f"{impl} fp16 N={n_seq}"

        def step(fn=fn):
            return torch.autograd.grad(fn(q, k, v), (q, k, v), do)

        def check(step=step, label=label):
            dq = step()[0]
            check_relative_error(label, dq[:, :, :CHECK_ROWS], dq_reference(), TOLERANCE)

        def peak(step=step):
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            base = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            grads = step()
            torch.cuda.synchronize()
            used = torch.cuda.max_memory_allocated() - base
            del grads
            return {"peak_bytes": int(used)}

        yield Case(label, step, flop=step_flop(n_seq), metric="flop_per_s", reference=first, check=check,
                   measure=peak, params={"impl": impl, **params})
        first = first or label


def cases(quick: bool = False, seq_lens=SEQ_LENS):
    """The four implementations at each N of ``seq_lens`` (quick: the first two)."""
    seq_lens = tuple(seq_lens)
    if not seq_lens or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in seq_lens):
        raise ValueError(f"seq_lens must be a non-empty sequence of positive ints, got {seq_lens!r}")
    for n_seq in (seq_lens[:2] if quick else seq_lens):
        yield from _group(n_seq)
