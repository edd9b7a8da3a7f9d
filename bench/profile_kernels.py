"""Hardware-counter profiles of the course's kernels next to their same-run references (GPU only).

Each target runs the course's kernel once and its reference (a device copy, cuBLAS, SDPA's cuDNN backend)
once inside the harness's profiler window (``gpuperf.benchmark.profile.profile_window``: warm-up, compiles
and autotuning happen before it opens), so one Nsight Compute report holds both::

    python bench/profile_kernels.py softmax_long --ncu RAW/ncu_softmax_long.csv   # runs itself under ncu
    python bench/profile_kernels.py matmul_bf16_4096 --ncu RAW/stalls.csv --stalls  # stall reasons only
    python bench/profile_kernels.py --list                                        # the targets

``--ncu CSV`` runs this script under ``ncu`` with the harness's command line (``profile.ncu_command``: clocks
not locked, the sections of ``profile.SECTIONS`` and the metrics of ``profile.KERNEL_METRICS``; with
``--stalls``, only ``profile.STALL_METRICS``) and writes the report (ncu's log next to it, ``.err``).
Without ``--ncu`` it runs the window alone (for an ncu command line of your own). The reports are turned
into recorded runs by ``bench/matmul_profile.py``, ``bench/softmax_profile.py`` and
``bench/attention_backward_sweep.py collect`` (bench/README.md).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

if importlib.util.find_spec("gpuperf") is None:  # a machine without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

import torch  # noqa: E402

from gpuperf.benchmark import profile  # noqa: E402


def _softmax_long():
    from gpuperf.kernels.softmax import softmax

    x = torch.randn(512, 262144, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    return [lambda: softmax(x, out=y), lambda: y.copy_(x)]


def _matmul(dtype, n):
    from gpuperf.kernels.matmul import matmul

    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    return [lambda: matmul(a, b), lambda: torch.matmul(a, b)]


def _attention(head_dim, n_seq, causal, backward=False):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    from gpuperf.kernels.flash_attention import flash_attention_forward
    from gpuperf.kernels.flash_attention_bwd import flash_attention_backward

    batch, heads = max(1, 32768 // n_seq), 2048 // head_dim
    q, k, v = (torch.randn(batch, heads, n_seq, head_dim, device="cuda", dtype=torch.float16)
               for _ in range(3))
    if not backward:
        def cudnn():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return sdpa(q, k, v, is_causal=causal)
        return [lambda: flash_attention_forward(q, k, v, causal=causal), cudnn]
    o, lse = flash_attention_forward(q, k, v, causal=causal)
    do = torch.randn_like(o)
    qr, kr, vr = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        out = sdpa(qr, kr, vr, is_causal=causal)

    def cudnn_backward():
        torch.autograd.grad(out, (qr, kr, vr), do, retain_graph=True)
    return [lambda: flash_attention_backward(q, k, v, o, lse, do, causal=causal), cudnn_backward]


TARGETS = {
    "softmax_long": _softmax_long,
    "matmul_bf16_4096": lambda: _matmul(torch.bfloat16, 4096),
    "matmul_bf16_8192": lambda: _matmul(torch.bfloat16, 8192),
    "attn_fwd_d128_full_n1024": lambda: _attention(128, 1024, False),
    "attn_fwd_d128_causal_n1024": lambda: _attention(128, 1024, True),
    "attn_fwd_d64_full_n4096": lambda: _attention(64, 4096, False),
    "attn_fwd_d128_full_n4096": lambda: _attention(128, 4096, False),
    "attn_bwd_d128_causal_n4096": lambda: _attention(128, 4096, True, backward=True),
    "attn_bwd_d64_full_n4096": lambda: _attention(64, 4096, False, backward=True),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", choices=sorted(TARGETS))
    parser.add_argument("--list", action="store_true", help="print the targets and exit")
    parser.add_argument("--ncu", type=Path, default=None, metavar="CSV",
                        help="run this target under ncu and write its CSV report here")
    parser.add_argument("--stalls", action="store_true", help="with --ncu: the per-reason stall metrics only")
    args = parser.parse_args(argv)
    if args.list or args.target is None:
        print("\n".join(sorted(TARGETS)))
        return 0
    if args.ncu is not None:
        options = {"sections": (), "metrics": profile.STALL_METRICS} if args.stalls else {}
        command = profile.ncu_command([sys.executable, __file__, args.target], **options)
        print(f"wrote {profile.run_ncu(command, args.ncu)}")
        return 0
    if not torch.cuda.is_available():
        print("profile_kernels.py needs a CUDA GPU", file=sys.stderr)
        return 2
    profile.profile_window(TARGETS[args.target]())  # warm-up twice, then the window
    return 0


if __name__ == "__main__":
    sys.exit(main())
