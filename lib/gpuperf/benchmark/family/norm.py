"""Benchmark family ``norm``: fused residual-add + RMSNorm (:mod:`gpuperf.kernels.norm`) against eager PyTorch,
``torch.compile`` of the same eager code, and a device-to-device copy, all in the same run.

The Triton kernel must move 4 rows n b bytes (read x and the residual, write y and the new residual); every
case is counted with those bytes, so ``bytes_per_s`` is an *effective* rate and its ratio to the copy's says
how close the case runs to the speed of moving only what it must. The eager version moves more (each of its
kernels reads and writes the tensor) and so shows an effective rate below the copy's.

Reference: ``copy <dtype> <rows>x<n>`` (``dst.copy_(src)`` of one rows x n tensor: 2 rows n b bytes).
Shapes: 32768 x 4096 (the target: >= 0.90 of the copy in bf16, faster than torch.compile), and a few
widths at the same element count.
"""

from __future__ import annotations

DESCRIPTION = "fused residual-add + RMSNorm (Triton) vs eager, torch.compile and the same-run copy"

SHAPES = ((32768, 4096), (131072, 1024), (16384, 8192))


def cases(quick: bool = False, dtypes=("bf16", "fp16"), shapes=SHAPES):
    import torch

    from gpuperf.benchmark import Case, check_all_written, check_relative_error
    from gpuperf.kernels import norm as nm

    torch_dtypes = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    compiled = torch.compile(nm.add_rms_norm_reference)
    gen = torch.Generator(device="cuda").manual_seed(0)
    for dtype in dtypes:
        for rows, n in (shapes[:1] if quick else shapes):
            td = torch_dtypes[dtype]
            x = torch.randn(rows, n, device="cuda", generator=gen).to(td)
            r = torch.randn(rows, n, device="cuda", generator=gen).to(td)
            w = (1 + 0.1 * torch.randn(n, device="cuda", generator=gen)).to(td)
            y = torch.empty_like(x)
            h = torch.empty_like(x)
            b = x.element_size()
            moved = nm.add_rms_norm_bytes_moved(rows, n, b)
            y_ref, h_ref = nm.add_rms_norm_reference_fp64(x[:256], r[:256], w)
            tol = 4 * {"fp32": 2.0**-24, "fp16": 2.0**-11, "bf16": 2.0**-8}[dtype]
            params = {"dtype": dtype, "rows": rows, "n": n}
            shape = f"{rows}x{n}"
            copy_label = f"copy {dtype} {shape}"
            yield Case(copy_label, lambda y=y, x=x: y.copy_(x), bytes_moved=2.0 * rows * n * b,
                       params={**params, "kernel": "copy"}, retime=True)

            def check_of(label, run):
                def check():
                    y.fill_(float("nan"))
                    h.fill_(float("nan"))
                    yy, hh = run()
                    torch.cuda.synchronize()
                    check_all_written(label, yy)
                    check_relative_error(label, yy[:256].cpu(), y_ref, tol)
                    check_relative_error(label, hh[:256].cpu(), h_ref, tol)
                return check

            runs = {
                "eager": lambda x=x, r=r, w=w: nm.add_rms_norm_reference(x, r, w),
                "torch.compile": lambda x=x, r=r, w=w: compiled(x, r, w),
                "triton": lambda x=x, r=r, w=w, y=y, h=h: nm.add_rms_norm(x, r, w, out=y, residual_out=h),
            }
            for kernel, run in runs.items():
                label = f"{kernel} {dtype} {shape}"
                yield Case(label, run, bytes_moved=float(moved), reference=copy_label,
                           check=check_of(label, run), params={**params, "kernel": kernel},
                           retime=(kernel != "eager"))
            del x, r, w, y, h
