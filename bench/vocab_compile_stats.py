"""CPU-only evidence for the vocabulary kernels (helper vocab, issue 33): compile each launch the H200 probe
(`bench/vocab_probe.py`) times for sm_90 with this machine's Triton, read registers, spills and shared
memory from the cubin (`cuobjdump --dump-resource-usage`, Triton's copy), and derive what a launch can keep
in flight: programs per SM (registers, threads, shared memory of an H200 SM), loads in flight per SM in the
streaming loop, rows in flight and their bytes (what pass 2 needs the L2 to still hold).

Usage (from the repository root, no GPU needed)::

    TRITON_INTERPRET=0 python bench/vocab_compile_stats.py [OUT.json]   # bench/profiles/vocab_compile_sm90.json
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

H200_SMS = 132
REGS_PER_SM, THREADS_PER_SM, SMEM_PER_SM = 65536, 2048, 233472


def compile_stats(kernel, sig, consts, ptrs, warps, stages=None, div16=()):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    attrs = {(i,): [["tt.divisibility", 16]] for i in (*ptrs, *div16)}  # as a launch specialises them
    opts = {"num_warps": warps, **({"num_stages": stages} if stages else {})}
    k = triton.compile(ASTSource(fn=kernel, signature=sig, constexprs=consts, attrs=attrs),
                       target=GPUTarget("cuda", 90, 32), options=opts)
    cuobjdump = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(k.asm["cubin"])
        f.flush()
        out = subprocess.run([str(cuobjdump), "--dump-resource-usage", f.name], capture_output=True, text=True,
                             check=True).stdout
    regs = int(re.search(r"REG:(\d+)", out).group(1))
    stack = int(re.search(r"STACK:(\d+)", out).group(1))
    shared = k.metadata.shared
    threads = warps * 32
    regs_warp = -(-regs * 32 // 256) * 256
    per_sm = min(REGS_PER_SM // (regs_warp * warps), THREADS_PER_SM // threads,
                 SMEM_PER_SM // (shared + 1024), 32)
    ptx = k.asm["ptx"]
    return {"registers": regs, "stack_bytes": stack, "shared_bytes": shared, "programs_per_sm_max": per_sm,
            "ex2_in_ptx": ptx.count("ex2.approx"),
            "vector_loads": "ld.global.v4" in ptx or "cp.async.cg.shared.global" in ptx,
            "vector_stores": "st.global.v4" in ptx}


def main(argv):
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, help="JSON file for the records (default: print only)")
    args = parser.parse_args(argv)
    import gpuperf.kernels.cross_entropy as ce
    import gpuperf.kernels.softmax as sm

    assert not sm.INTERPRETED, "run with TRITON_INTERPRET=0"
    i32 = lambda *names: {n: "i32" for n in names}  # noqa: E731
    const = lambda *names: {n: "constexpr" for n in names}  # noqa: E731
    stream_sig = {"X": "*fp16", "Y": "*fp16", **i32("n_rows", "n_cols", "stride_x", "stride_y", "mis_x", "mis_y"),
                  **const("BLOCK", "VEC", "Y_ALIGNED", "NUM_STAGES")}
    ce_sig = {"X": "*bf16", "G": "*bf16", "T": "*i64", "LOSS": "*fp32", "LSE": "*fp32", "N_VALID": "*fp32",
              **i32("n_rows", "n_cols", "stride_x", "stride_g", "mis_x", "mis_g", "ignore_index"),
              "smoothing": "fp32", **const("BLOCK", "VEC", "GRAD", "SMOOTH", "MEAN", "G_ALIGNED", "NUM_STAGES", "EXACT")}
    rows_sig = {"X": "*fp16", "Y": "*fp16", **i32("n_rows", "n_cols_v", "stride_xv", "stride_yv"),
                **const("BLOCK", "ROWS", "VEC")}
    fused_sig = {"X": "*fp16", "Y": "*fp16", **i32("n_cols", "stride_x", "stride_y"), **const("BLOCK", "EVEN")}
    records = []
    for block, warps, per_sm, stages in ((4096, 8, 1, 3), (4096, 8, 2, 3), (4096, 8, 4, 3), (2048, 4, 4, 4),
                                         (8192, 16, 1, 2)):
        for name, kernel, sig, consts, ptrs, b in (
                ("softmax stream", sm._stream_kernel, stream_sig,
                 {"BLOCK": block, "VEC": 8, "Y_ALIGNED": True, "NUM_STAGES": stages}, (0, 1), 2),
                ("cross-entropy", ce._ce_kernel, ce_sig,
                 {"BLOCK": block, "VEC": 8, "GRAD": True, "SMOOTH": False, "MEAN": True, "G_ALIGNED": True,
                  "NUM_STAGES": stages, "EXACT": False}, (0, 1, 2, 3, 4, 5), 2)):
            st = compile_stats(kernel, sig, consts, ptrs, warps)
            resident = min(per_sm, st["programs_per_sm_max"])
            rec = {"kernel": name, "block": block, "num_warps": warps, "num_stages": stages,
                   "programs_per_sm_asked": per_sm, "programs_per_sm": resident, **st,
                   "pass1_bytes_in_flight_per_sm": resident * stages * block * b,
                   "rows_in_flight": resident * H200_SMS}
            for n in (32000, 50257, 128256, 151936, 262144):
                rec[f"rows_in_flight_mb_{n}"] = round(resident * H200_SMS * n * b / 1e6, 1)
            records.append(rec)
    for n, rows_per_prog, warps in ((1000, 2, 4), (1000, 4, 4), (5000, 1, 8), (5000, 2, 4), (12288, 1, 8)):
        block = 1 << (n - 1).bit_length()
        st = compile_stats(sm._rows_kernel, rows_sig, {"BLOCK": block, "ROWS": rows_per_prog, "VEC": 8}, (0, 1),
                           warps)
        records.append({"kernel": "softmax rows", "n": n, "block": block, "rows_per_program": rows_per_prog,
                        "num_warps": warps, **st,
                        "bytes_in_flight_per_sm": st["programs_per_sm_max"] * rows_per_prog * n * 2})
    # What "auto" runs today: the aligned-body kernel for rows not a multiple of 16 (1000, 5000), the fused
    # kernel at 12288 (n_cols and the strides multiples of 16, so a launch specialises them as such).
    body_sig = {"X": "*fp16", "Y": "*fp16", **i32("n_cols", "stride"), **const("BLOCK", "VEC")}
    for n in (1000, 5000, 12288):
        block = 1 << (n - 1).bit_length()
        if n % 16:
            warps = sm._body_num_warps(block)
            st = compile_stats(sm._fused_body_kernel, body_sig, {"BLOCK": block, "VEC": 8}, (0, 1), warps)
            name = "softmax fused, aligned body (auto today)"
        else:
            warps = sm._fused_num_warps(block)
            st = compile_stats(sm._fused_kernel, fused_sig, {"BLOCK": block, "EVEN": False}, (0, 1), warps,
                               div16=(2, 3, 4))
            name = "softmax fused (auto today)"
        records.append({"kernel": name, "n": n, "block": block, "num_warps": warps, **st,
                        "bytes_in_flight_per_sm": st["programs_per_sm_max"] * n * 2})
    import triton

    for r in records:
        print({k: v for k, v in r.items()
               if not k.startswith("rows_in_flight_mb") or k.endswith(("50257", "151936"))})
    if args.out is not None:
        args.out.write_text(json.dumps({"triton": triton.__version__, "target": "sm_90", "records": records},
                                            indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
