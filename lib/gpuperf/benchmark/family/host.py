"""Benchmark family ``host``: the host time of one call of each course kernel at a small shape, against the
host time of the PyTorch call a reader would use instead, in the same run.

At small shapes the GPU finishes a kernel in a few microseconds, and what decides the speed of a call is
the time the CPU spends in it: the wrapper's argument checks, its allocations and the launch. Every case
here is timed with :func:`gpuperf.benchmark.time_host_callable`: calls issued back to back from Python
with no synchronisation between them (the GPU keeps up, so the wall time per call is the host's), the
median over a few batches. The rate is calls per second (``calls_per_s``), so the ratio to the reference
is the reference's time per call over ours: >= 1 when our call costs less host time than PyTorch's.

Cases (reference first): ``torch.softmax`` vs ``gpuperf.kernels.softmax.softmax`` (32 x 1024 fp16);
``torch.compile`` of the eager residual-add + RMSNorm vs ``add_rms_norm`` (32 x 4096 bf16);
``torch.matmul`` vs ``matmul`` (256^3 bf16); SDPA vs ``flash_attention_forward`` (1 x 16 x 1024 x 64
fp16, causal); SDPA's backward through autograd vs ``flash_attention_backward``; and, to show what the
launch alone costs, the fused softmax kernel launched through Triton's own ``kernel[grid](...)``.
"""

from __future__ import annotations

DESCRIPTION = "host time per call at small shapes: the course's wrappers vs the PyTorch calls, same run"


def cases(quick: bool = False):
    import torch
    import torch.nn.functional as F

    from gpuperf.benchmark import Case, check_relative_error
    from gpuperf.kernels import flash_attention as fa
    from gpuperf.kernels import flash_attention_bwd as fab
    from gpuperf.kernels import matmul as mm
    from gpuperf.kernels import norm as nm
    from gpuperf.kernels import softmax as sm

    gen = torch.Generator(device="cuda").manual_seed(0)

    def rand(*shape, dtype):
        return torch.randn(*shape, device="cuda", generator=gen).to(dtype)

    def pair(kernel, ref_label, ref_fn, ours, params, tol, ref_out=None, ours_out=None):
        """The reference case, then ours, with a check that both compute the same thing."""
        params = {**params, "kernel": kernel}
        yield Case(ref_label, ref_fn, metric="calls_per_s", timing="host",
                   params={**params, "impl": "torch"})
        for label, fn, impl in ours:
            def check(label=label, fn=fn):
                got = (ours_out or (lambda r: r))(fn())
                want = (ref_out or (lambda r: r))(ref_fn())
                torch.cuda.synchronize()
                check_relative_error(label, got.float().cpu(), want.float().cpu(), tol)
            yield Case(label, fn, metric="calls_per_s", timing="host", reference=ref_label, check=check,
                       params={**params, "impl": impl})

    # softmax
    x = rand(32, 1024, dtype=torch.float16) * 3
    y = torch.empty_like(x)
    block = 1024

    def jit_launch(x=x, y=y):
        sm._fused_kernel[(32,)](x, y, 1024, 1024, 1024, BLOCK=block, EVEN=True, num_warps=4)
        return y

    yield from pair("softmax", "torch.softmax fp16 32x1024", lambda: torch.softmax(x, dim=-1),
                    [("gpuperf softmax fp16 32x1024", lambda: sm.softmax(x), "gpuperf"),
                     ("triton kernel[grid] fused softmax fp16 32x1024", jit_launch, "triton-jit")],
                    {"dtype": "fp16", "shape": "32x1024"}, 1e-2)
    # residual add + RMSNorm
    xn, rn, wn = rand(32, 4096, dtype=torch.bfloat16), rand(32, 4096, dtype=torch.bfloat16), \
        rand(4096, dtype=torch.bfloat16)
    compiled = torch.compile(nm.add_rms_norm_reference)
    yield from pair("add_rms_norm", "torch.compile add+rmsnorm bf16 32x4096", lambda: compiled(xn, rn, wn),
                    [("gpuperf add_rms_norm bf16 32x4096", lambda: nm.add_rms_norm(xn, rn, wn), "gpuperf")],
                    {"dtype": "bf16", "shape": "32x4096"}, 2e-2, ref_out=lambda r: r[0],
                    ours_out=lambda r: r[0])
    # matmul
    a, b = rand(256, 256, dtype=torch.bfloat16), rand(256, 256, dtype=torch.bfloat16)
    yield from pair("matmul", "torch.matmul bf16 256^3", lambda: torch.matmul(a, b),
                    [("gpuperf matmul bf16 256^3", lambda: mm.matmul(a, b), "gpuperf")],
                    {"dtype": "bf16", "shape": "256^3"}, 1e-2)
    # attention forward and backward
    q, k, v = (rand(1, 16, 1024, 64, dtype=torch.float16) for _ in range(3))
    yield from pair("attention_forward", "sdpa forward fp16 1x16x1024x64 causal",
                    lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                    [("gpuperf flash_attention_forward fp16 1x16x1024x64 causal",
                      lambda: fa.flash_attention_forward(q, k, v, causal=True), "gpuperf")],
                    {"dtype": "fp16", "shape": "1x16x1024x64 causal"}, 1e-2, ours_out=lambda r: r[0])
    qg, kg, vg = (t.clone().requires_grad_(True) for t in (q, k, v))
    o_ref = F.scaled_dot_product_attention(qg, kg, vg, is_causal=True)
    do = rand(1, 16, 1024, 64, dtype=torch.float16)
    o, lse = fa.flash_attention_forward(q, k, v, causal=True)
    yield from pair("attention_backward", "sdpa backward (autograd) fp16 1x16x1024x64 causal",
                    lambda: torch.autograd.grad(o_ref, (qg, kg, vg), do, retain_graph=True),
                    [("gpuperf flash_attention_backward fp16 1x16x1024x64 causal",
                      lambda: fab.flash_attention_backward(q, k, v, o, lse, do, causal=True), "gpuperf")],
                    {"dtype": "fp16", "shape": "1x16x1024x64 causal"}, 2e-2,
                    ref_out=lambda r: torch.cat([t.flatten() for t in r]),
                    ours_out=lambda r: torch.cat([t.flatten() for t in r]))
