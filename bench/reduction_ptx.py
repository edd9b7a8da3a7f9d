"""Chapter 03's compiled code: a row reduction and a masked load, as Triton compiles them for sm_90.

Runs on any machine (no GPU: ptxas ships with Triton) and writes ``book/data/reduction_ptx_sm90.json``::

    TRITON_INTERPRET=0 python bench/reduction_ptx.py [--out-dir book/data]

It compiles the course's fused softmax kernel (``gpuperf.kernels.softmax._fused_kernel``) for an
H100/H200 (sm_90) with a 1024-wide fp32 row and 4 warps, twice: with ``EVEN=True`` (no mask), whose row
maximum is the warp-level reduction chapter 03 reads, and with ``EVEN=False`` (masked), whose loads are
predicated rather than branched around. ``gpuperf.simt`` extracts the excerpts; the recorded file keeps
the excerpts and their counts, with the harness's compile-only provenance
(``gpuperf.benchmark.compiled.compile_provenance``: the Triton version that produced them).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

#: The compiled case: one 1024-float row per program, 4 warps (each thread holds 8 of the row's values).
BLOCK = 1024
NUM_WARPS = 4
SIGNATURE = {"X": "*fp32", "Y": "*fp32", "n_cols": "i32", "stride_x": "i32", "stride_y": "i32",
             "BLOCK": "constexpr", "EVEN": "constexpr"}


def compile_ptx(even: bool) -> str:
    """PTX of the fused softmax kernel for sm_90 (needs TRITON_INTERPRET unset or 0 before import)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from gpuperf.kernels import softmax

    if softmax.INTERPRETED:
        raise SystemExit("run with TRITON_INTERPRET=0: the interpreter does not compile")
    src = ASTSource(fn=softmax._fused_kernel, signature=SIGNATURE,
                    constexprs={"BLOCK": BLOCK, "EVEN": even})
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": NUM_WARPS}).asm["ptx"]


def cases() -> list[dict]:
    """The two recorded excerpts with their counts (pure given the compiler)."""
    from gpuperf import simt

    reduction = simt.ptx_reduction_excerpt(compile_ptx(True), combine="max.f32")
    masked_ptx = compile_ptx(False)
    masked = simt.ptx_predicated_load_excerpt(masked_ptx)
    common = {"kernel": "gpuperf.kernels.softmax._fused_kernel", "target": "sm_90", "dtype": "fp32",
              "block": BLOCK, "num_warps": NUM_WARPS}
    return [
        {**common, "case": "row maximum", "even": True, "excerpt": reduction,
         "counts": simt.ptx_counts(reduction), "shuffle_offsets": simt.shuffle_offsets(reduction)},
        {**common, "case": "masked load", "even": False, "excerpt": masked,
         "kernel_counts": simt.ptx_counts(simt.ptx_instructions(masked_ptx))},
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=ROOT / "book" / "data")
    args = parser.parse_args(argv)
    from gpuperf.benchmark.compiled import compile_provenance
    from gpuperf.records import save_run

    rows = cases()
    if rows[0]["counts"]["shfl_bfly"] == 0 or rows[0]["counts"]["st_shared"] == 0:
        raise SystemExit("the reduction has no shuffles or no shared-memory exchange: nothing recorded")
    prov = compile_provenance("TRITON_INTERPRET=0 python bench/reduction_ptx.py")
    path = save_run("reduction_ptx_sm90", rows, prov, data_dir=args.out_dir)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    sys.exit(main(sys.argv[1:]))
