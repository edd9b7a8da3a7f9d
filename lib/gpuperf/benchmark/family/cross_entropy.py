"""Benchmark family ``cross_entropy``: a training step's loss over [tokens, vocabulary] logits, forward and
backward, by the fused kernel (:mod:`gpuperf.kernels.cross_entropy`) against eager ``F.cross_entropy``,
``torch.compile`` of it and a device-to-device copy of the logits, all in the same run.

Every case is counted with the byte bound of the step, ``2 rows V b``: one read of the logits and one write
of their gradient, which is what the copy moves; ``bytes_per_s`` over the copy's is the fraction of that
bound. Each case returns the gradient through ``torch.autograd.grad`` (no accumulation into ``.grad``).
The fused kernel writes the gradient over the logits, so its timed calls run on the previous call's
gradient (the same work); its check runs on fresh logits. ``torch.compile`` (its default,
``dynamic=None``) compiles before the timing (its first call at each shape, outside the timed region); if
it fails, its row is left out with a message and eager stays. Each case also records
``peak_extra_bytes``: the memory one forward+backward allocates at its peak beyond what was allocated
before (the logits, targets and buffers), from ``torch.cuda.max_memory_allocated``.

Shapes: 4096-32768 tokens x 32000 (Llama 2), 50257 (GPT-2), 128256 (Llama 3), 151936 (Qwen 2), bf16, one
target in 50 ignored (-100).
"""

from __future__ import annotations

DESCRIPTION = "fused cross-entropy forward+backward vs eager F.cross_entropy, torch.compile and a copy of the logits"

SHAPES = ((32768, 32000), (8192, 32000), (4096, 50257), (4096, 128256), (4096, 151936))


def cases(quick: bool = False, dtypes=("bf16",), shapes=SHAPES, compile: bool = True, smoothing: float = 0.0):
    import torch
    import torch.nn.functional as F

    from gpuperf.benchmark import Case
    from gpuperf.kernels import cross_entropy as ce

    torch_dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
    gen = torch.Generator(device="cuda").manual_seed(0)
    compiled = None
    if compile:
        # torch.compile's default (dynamic=None): the second shape recompiles with dynamic sizes, which
        # the later shapes reuse (two compilations in all, as a training job with varying shapes sees).
        compiled = torch.compile(lambda x, t: F.cross_entropy(x, t, label_smoothing=smoothing))
    for dtype in dtypes:
        for rows, n in (shapes[:1] if quick else shapes):
            td = torch_dtypes[dtype]
            x0 = (torch.randn(rows, n, device="cuda", generator=gen) * 3).to(td)
            t = torch.randint(0, n, (rows,), device="cuda", generator=gen)
            t[::50] = -100
            x = x0.clone().requires_grad_(True)
            y = torch.empty_like(x0)
            moved = float(ce.cross_entropy_bytes_moved(rows, n, x0.element_size()))
            sample = torch.arange(0, rows, max(1, rows // 16), device="cuda")
            g_ref = ce.cross_entropy_reference(x0[sample], t[sample], label_smoothing=smoothing,
                                               reduction="sum")[1]
            n_valid = int((t != -100).sum())
            shape = f"{rows}x{n}"
            params = {"dtype": dtype, "rows": rows, "n": n, "label_smoothing": smoothing}
            copy_label = f"copy {dtype} {shape}"
            yield Case(copy_label, lambda y=y, x0=x0: y.copy_(x0), bytes_moved=moved,
                       params={**params, "kernel": "copy"}, retime=True)

            runs = {
                "gpuperf": lambda x=x, t=t: torch.autograd.grad(
                    ce.cross_entropy(x, t, label_smoothing=smoothing), x)[0],
                "eager": lambda x=x, t=t: torch.autograd.grad(
                    F.cross_entropy(x, t, label_smoothing=smoothing), x)[0],
            }
            if compiled is not None:
                try:
                    with torch.no_grad():
                        x.copy_(x0)
                    torch.autograd.grad(compiled(x, t), x)
                    torch.cuda.synchronize()
                    runs["torch.compile"] = lambda x=x, t=t: torch.autograd.grad(compiled(x, t), x)[0]
                except Exception as exc:  # the row is left out, eager stays
                    print(f"torch.compile of F.cross_entropy failed at {shape}: {type(exc).__name__}: "
                          f"{str(exc)[:300]}")

            def check_of(label, run, x=x, x0=x0, t=t, sample=sample, g_ref=g_ref, n_valid=n_valid):
                def check():
                    with torch.no_grad():
                        x.copy_(x0)
                    g = run()
                    torch.cuda.synchronize()
                    err = (g[sample].double().cpu() * n_valid - g_ref).abs().max().item()
                    if not err < 0.05:
                        raise RuntimeError(f"{label}: gradient error {err} against float64")
                return check

            def peak_of(run):
                def measure():
                    torch.cuda.synchronize()
                    base = torch.cuda.memory_allocated()
                    torch.cuda.reset_peak_memory_stats()
                    g = run()
                    torch.cuda.synchronize()
                    peak = torch.cuda.max_memory_allocated() - base
                    del g
                    return {"peak_extra_bytes": int(peak), "logits_bytes": rows * n * x0.element_size()}
                return measure

            for name, run in runs.items():
                label = f"{name} {dtype} {shape}"
                yield Case(label, run, bytes_moved=moved, reference=copy_label, check=check_of(label, run),
                           params={**params, "kernel": name}, retime=name == "gpuperf", measure=peak_of(run))
            del x, x0, y
