"""Peak memory and time of one attention training step (forward + backward): eager PyTorch attention vs
our FlashAttention Function vs SDPA's flash backend (GPU only).

Two eager baselines. ``standard`` is attention as many models wrote it: six kernels (Q K^T, the scale, a
cast to fp32, an fp32 softmax, a cast back to fp16, P V); autograd saves the fp32 softmax output *and* its
fp16 copy (6 bytes per score) and the backward materialises dP and dS (about 16 bytes per score at the
peak, recorded). ``standard-fp16`` is Algorithm 0 of the FlashAttention paper in three kernels (Q scaled
first, Q K^T, an fp16 softmax, P V): one fp16 P saved, 8 bytes per score at the peak (recorded).

B = 1, H = 16, d = 64, fp16, no mask, N = 1K..16K. For each implementation and N: the peak memory allocated
by the step above what its inputs occupy (``torch.cuda.max_memory_allocated``), and the median time of the
step (``gpuperf.benchmark.time_callable``). Writes ``attention_memory_<device>.json`` with
``gpuperf.recorded.save_run`` into the folder given as the first argument (default book/data).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import torch

from gpuperf.results import recorded
from gpuperf.benchmark import device_slug, time_callable

SEQ_LENS = (1024, 2048, 4096, 8192, 16384)
BATCH, HEADS, HEAD_DIM = 1, 16, 64


def naive(q, k, v):
    """Standard attention as eager PyTorch: S = scale Q K^T, P = softmax(S) (fp32, stored as fp16), O = P V."""
    s = torch.matmul(q, k.transpose(-1, -2)) * (1 / math.sqrt(q.shape[-1]))
    p = torch.softmax(s.float(), dim=-1).to(q.dtype)
    return torch.matmul(p, v)


def naive_fp16(q, k, v):
    """Algorithm 0 in three kernels on 16-bit tensors: S = (scale Q) K^T, P = softmax(S) (fp16 out), O = P V.
    Autograd keeps one fp16 P (the softmax's output is also the second product's input)."""
    s = torch.matmul(q * (1 / math.sqrt(q.shape[-1])), k.transpose(-1, -2))
    return torch.matmul(torch.softmax(s, dim=-1), v)


def main(out_dir: Path) -> None:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from gpuperf.kernels.flash_attention_bwd import flash_attention

    def sdpa_flash(q, k, v):
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)

    impls = {"standard": naive, "standard-fp16": naive_fp16, "triton": flash_attention,
             "sdpa-flash": sdpa_flash}
    rows = []
    for n_seq in SEQ_LENS:
        q, k, v, do = (torch.randn(BATCH, HEADS, n_seq, HEAD_DIM, device="cuda", dtype=torch.float16)
                       for _ in range(4))
        q, k, v = (t.requires_grad_() for t in (q, k, v))
        for name, fn in impls.items():
            def step(fn=fn):
                return torch.autograd.grad(fn(q, k, v), (q, k, v), do)

            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            base = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            grads = step()
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated() - base
            del grads
            time_s = time_callable(step, warmup_ms=10, rep_ms=40)
            flop = 3.5 * 4.0 * BATCH * HEADS * n_seq * n_seq * HEAD_DIM
            row = {"impl": name, "n_seq": n_seq, "batch": BATCH, "heads": HEADS, "head_dim": HEAD_DIM,
                   "dtype": "fp16", "peak_bytes": int(peak), "time_s": time_s, "flop": flop,
                   "flop_per_s": flop / time_s}
            rows.append(row)
            print(row, flush=True)
        del q, k, v, do
    name = f"attention_memory_{device_slug(torch.cuda.get_device_name())}"
    prov = recorded.provenance("python bench/attention_memory.py")
    print(recorded.save_run(name, rows, prov, data_dir=out_dir))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else recorded.DATA_DIR)
