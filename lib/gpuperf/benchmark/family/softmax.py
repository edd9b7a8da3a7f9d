"""Benchmark family ``softmax``: the Triton row softmax (:mod:`gpuperf.kernels.softmax`) in its methods against
``torch.softmax`` and a device-to-device copy, all in the same run.

Every case is counted with the bytes a softmax must move, ``2 rows n b`` (read the input once, write the
output once), so ``bytes_per_s`` is an effective rate and its ratio to the copy's (also ``2 rows n b``) says
how close the case comes to the speed of moving only what it must; its rate over the ``torch.softmax`` row
of the same shape and dtype is the speed-up over PyTorch. The online and three-pass kernels read the row two
and three times; when the re-reads hit L2 their effective rate can still approach the copy's.

Reference: ``copy <dtype> <rows>x<n>``. Shapes: 32768 x 4096 (targets: >= 0.95 of the copy and >= 3x
``torch.softmax``), and rows of 16384 to 262144 values at 2^27 elements (target from 65536 on: >= 0.80 of
the copy). ``sweep=True`` adds launches of the fused kernel at 4-32 warps (8-32 beyond 8192 columns)
and of the split kernel on rows longer than 4096 (first dtype only).

Vocabulary rows (``shapes=VOCAB_SHAPES, sweep=False``): odd widths (50257 columns put rows at 2-byte
offsets), rows of 1000-12288 and of 32000-262144 columns, and rows with a stride: a shape ``(rows, n,
row_stride)`` is the slice ``[:, :n]`` of a tensor ``row_stride`` wide (logits padded to a multiple of 64),
timed against a copy of the same slice (``torch.Tensor.copy_`` into contiguous rows).
"""

from __future__ import annotations

DESCRIPTION = ("Triton softmax (fused, split, online, three-pass; Gluon on Hopper) vs torch.softmax and the "
               "same-run copy")

#: Vocabulary rows (issue 33): (rows, columns) or (rows, columns, row stride of the wider tensor sliced).
VOCAB_SHAPES = ((32768, 1000), (32768, 3000), (32768, 5000), (8192, 12288), (4096, 32000), (4096, 50257),
                (4096, 50257, 50304), (2048, 128256), (2048, 151936), (1024, 262144))

SHAPES = ((32768, 4096), (8192, 16384), (4096, 32768), (2048, 65536), (1024, 131072), (512, 262144))

#: Launches of the split kernel tried on rows longer than 4096 (first dtype only):
#: (block_cols = columns per program, num_warps, prefetch, cooperative).
SPLIT_SWEEP = ((8192, 8, True, True), (8192, 8, False, True), (4096, 4, True, True), (4096, 4, False, True),
               (16384, 16, True, True), (8192, 8, True, False))


def gluon_runs(x) -> bool:
    """Can the Gluon kernel (``method="gluon"``) take ``x`` here (a Hopper GPU, Gluon, rows that fit)? The
    family times it wherever it can, also at lengths ``"auto"`` leaves to the Triton kernels."""
    from gpuperf.kernels import gluon_softmax

    return bool(gluon_softmax.usable_for(x))


def cases(quick: bool = False, dtypes=("fp16", "bf16"), shapes=SHAPES, sweep: bool = True, vocab: bool = False):
    """``vocab=True``: the shapes of :data:`VOCAB_SHAPES` (instead of ``shapes``)."""
    import torch

    from gpuperf.benchmark import Case, check_all_written, check_relative_error
    from gpuperf.kernels import softmax as sm

    torch_dtypes = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    gen = torch.Generator(device="cuda").manual_seed(0)
    if vocab:
        shapes = VOCAB_SHAPES
    for dtype in dtypes:
        for rows, n, *wider in (shapes[:1] if quick else shapes):
            td = torch_dtypes[dtype]
            stride = wider[0] if wider else n
            x = (torch.randn(rows, stride, device="cuda", generator=gen) * 3).to(td)[:, :n]
            y = torch.empty(rows, n, device="cuda", dtype=td)
            b = x.element_size()
            moved = float(sm.softmax_bytes_moved(rows, n, b, "fused"))
            ref, ref_tail = sm.softmax_reference(x[:64]), sm.softmax_reference(x[-64:])  # first, last rows
            tol = 4 * {"fp32": 2.0**-24, "fp16": 2.0**-11, "bf16": 2.0**-8}[dtype]
            shape = f"{rows}x{n}" + (f" stride {stride}" if wider else "")
            params = {"dtype": dtype, "rows": rows, "n": n, **({"row_stride": stride} if vocab else {})}
            copy_label = f"copy {dtype} {shape}"
            yield Case(copy_label, lambda y=y, x=x: y.copy_(x), bytes_moved=moved,
                       params={**params, "kernel": "copy", "method": "copy"}, retime=True)

            def check_of(label, run):
                def check():
                    y.fill_(float("nan"))
                    out = run()
                    torch.cuda.synchronize()
                    check_all_written(label, out)
                    check_relative_error(label, out[:64].cpu(), ref, tol)
                    check_relative_error(label, out[-64:].cpu(), ref_tail, tol)
                return check

            runs = {"torch.softmax": ("torch", {}, lambda x=x: torch.softmax(x, dim=-1))}
            methods = (["auto", "online", "three_pass"] + (["fused"] if n <= sm.FUSED_MAX_COLS else [])
                       + (["rows"] if n <= 16384 else [])
                       + (["split", "stream"] if n > 4096 else []) + (["gluon"] if gluon_runs(x) else []))
            for method in methods:
                runs[f"triton {method}"] = ("triton", {"method": method},
                                            lambda x=x, y=y, m=method: sm.softmax(x, out=y, method=m))
            if sweep and not quick:
                if n <= sm.FUSED_MAX_COLS:
                    for nw in ((4, 8, 16, 32) if n <= 8192 else (8, 16, 32)):
                        runs[f"triton fused w{nw}"] = ("triton", {"method": "fused", "num_warps": nw},
                                                       lambda x=x, y=y, w=nw: sm.softmax(
                                                           x, out=y, method="fused", num_warps=w))
                if n > 4096 and dtype == dtypes[0]:
                    for blk, nw, pre, coop in SPLIT_SWEEP:
                        name = f"triton split b{blk} w{nw}" + (" prefetch" if pre else "") + (
                            "" if coop else " two-launch")
                        runs[name] = ("triton", {"method": "split", "block_cols": blk, "num_warps": nw,
                                                 "prefetch": pre, "cooperative": coop},
                                      lambda x=x, y=y, c=(blk, nw, pre, coop): sm.softmax(
                                          x, out=y, method="split", block_cols=c[0], num_warps=c[1],
                                          prefetch=c[2], cooperative=c[3]))
            for name, (kernel, extra, run) in runs.items():
                label = f"{name} {dtype} {shape}"
                method = extra.get("method", "torch")
                yield Case(label, run, bytes_moved=moved, reference=copy_label, check=check_of(label, run),
                           params={**params, "kernel": kernel, "method": method,
                                   "num_warps": extra.get("num_warps"), "block_cols": extra.get("block_cols"),
                                   "num_stages": extra.get("num_stages"),
                                   "programs_per_sm": extra.get("programs_per_sm"),
                                   "prefetch": extra.get("prefetch"), "cooperative": extra.get("cooperative")},
                           retime=(name in ("torch.softmax", "triton auto")))
            del x, y
