"""Benchmark family ``softmax``: the Triton row softmax (:mod:`gpuperf.kernels.softmax`) in its methods against
``torch.softmax`` and a device-to-device copy, all in the same run.

Every case is counted with the bytes a softmax must move, ``2 rows n b`` (read the input once, write the
output once), so ``bytes_per_s`` is an effective rate and its ratio to the copy's (also ``2 rows n b``) says
how close the case comes to the speed of moving only what it must; its rate over the ``torch.softmax`` row
of the same shape and dtype is the speed-up over PyTorch. The online and three-pass kernels read the row two
and three times; when the re-reads hit L2 their effective rate can still approach the copy's.

Reference: ``copy <dtype> <rows>x<n>``. Shapes: 32768 x 4096 (targets: >= 0.95 of the copy and >= 3x
``torch.softmax``), and rows of 16384 to 262144 values at 2^27 elements (target from 65536 on: >= 0.80 of
the copy). ``sweep=True`` adds launches of the fused kernel at 4096 columns and of the split kernel on
longer rows (first dtype only).
"""

from __future__ import annotations

DESCRIPTION = "Triton softmax (fused, split, online, three-pass) vs torch.softmax and the same-run copy"

SHAPES = ((32768, 4096), (8192, 16384), (4096, 32768), (2048, 65536), (1024, 131072), (512, 262144))

#: Launches of the split kernel tried on rows longer than 4096 (first dtype only):
#: (block_cols = columns per program, num_warps, prefetch, cooperative).
SPLIT_SWEEP = ((8192, 8, True, True), (8192, 8, False, True), (4096, 4, True, True), (4096, 4, False, True),
               (16384, 16, True, True), (8192, 8, True, False))


def cases(quick: bool = False, dtypes=("fp16", "bf16"), shapes=SHAPES, sweep: bool = True):
    import torch

    from gpuperf.benchmark import Case, check_all_written, check_relative_error
    from gpuperf.kernels import softmax as sm

    torch_dtypes = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    gen = torch.Generator(device="cuda").manual_seed(0)
    for dtype in dtypes:
        for rows, n in (shapes[:1] if quick else shapes):
            td = torch_dtypes[dtype]
            x = (torch.randn(rows, n, device="cuda", generator=gen) * 3).to(td)
            y = torch.empty_like(x)
            b = x.element_size()
            moved = float(sm.softmax_bytes_moved(rows, n, b, "fused"))
            ref, ref_tail = sm.softmax_reference(x[:64]), sm.softmax_reference(x[-64:])  # first, last rows
            tol = 4 * {"fp32": 2.0**-24, "fp16": 2.0**-11, "bf16": 2.0**-8}[dtype]
            shape = f"{rows}x{n}"
            params = {"dtype": dtype, "rows": rows, "n": n}
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
                       + (["split"] if n > 4096 else []))
            for method in methods:
                runs[f"triton {method}"] = ("triton", {"method": method},
                                            lambda x=x, y=y, m=method: sm.softmax(x, out=y, method=m))
            if sweep and not quick:
                if n <= 4096:
                    for nw in (4, 8, 16, 32):
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
