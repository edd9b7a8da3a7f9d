"""Compile the small-matmul dispatch's launches for an H100/H200 (sm_90) on a machine without a GPU.

    TRITON_INTERPRET=0 PYTHONPATH=$PWD/lib python3 bench/matmul_small_compile.py [--dtype bf16] [--json OUT]

For every (m, n, k) of the benchmark family ``matmul_small`` it asks :func:`plan_matmul` which kernel, tile
and split the dispatch takes (132 SMs), compiles that launch with this machine's Triton for sm_90, as a
launch would specialise it (16-byte aligned pointers, integers that are multiples of 16 marked so, the
integer 1 as a constant), and reads what the compiled kernel needs: registers and spilled bytes (``ptxas
-v`` on Triton's PTX), shared memory and threads (Triton's metadata), and from those the blocks one SM holds
(:func:`gpuperf.memory.sm_occupancy`, H200). A stream-K launch needs all its programs resident at once, so
its blocks per SM must be at least one (its grid is one program per SM). The persistent TMA kernel's plans
are listed without a compile (chapter 08 and bench/NOTES.md have its numbers).

The numbers are Triton 3.9's; the H200 runs Triton 3.6, whose register counts may differ by a few.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

INTS = ("M", "N", "K", "K_PER_SPLIT", "ITERS_PER_PROGRAM", "stride_am", "stride_ak", "stride_bk",
        "stride_bn", "stride_cm", "stride_cn")


def _int_spec(value: int):
    """How a launch specialises an integer: 1 -> the constant, a multiple of 16 -> marked, else plain."""
    if value == 1:
        return "one"
    return "div16" if value % 16 == 0 else "plain"


def compile_plan(plan, m: int, n: int, k: int, dtype: str = "bf16", sm_count: int = 132) -> dict:
    """Compile the split-K or stream-K launch of ``plan`` for an (m, k) x (k, n) row-major product in
    ``dtype`` for sm_90; returns registers, spilled bytes, shared memory, threads and blocks per SM."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from gpuperf.kernels import matmul_splitk as mks
    from gpuperf.memory.occupancy import sm_occupancy

    if mks.INTERPRETED:
        raise RuntimeError("compile_plan needs TRITON_INTERPRET=0 (kernels defined for compilation)")
    kernel = mks._matmul_splitk_kernel if plan.kernel == "splitk" else mks._matmul_streamk_kernel
    bm, bn, bk = plan.block_m, plan.block_n, plan.block_k
    k_steps = -(-k // bk)
    if plan.kernel == "splitk":
        per = -(-k_steps // plan.split_k)
        split = -(-k_steps // per)
        extra = {"K_PER_SPLIT": per * bk}
    else:
        total = -(-m // bm) * -(-n // bn) * k_steps
        split = 1
        extra = {"ITERS_PER_PROGRAM": -(-total // sm_count)}
    ints = {"M": m, "N": n, "K": k, "stride_am": k, "stride_ak": 1, "stride_bk": n, "stride_bn": 1,
            "stride_cm": n, "stride_cn": 1, **extra}
    consts = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": plan.group_m,
              "INPUT_PRECISION": "tf32", "USE_TMA": plan.tma}
    if plan.kernel == "splitk":
        consts["SPLIT_K"] = split
    sig, attrs = {}, {}
    for i, name in enumerate(kernel.arg_names):
        if name in ("a_ptr", "b_ptr", "c_ptr"):
            sig[name] = f"*{dtype}"
            attrs[(i,)] = [["tt.divisibility", 16]]
        elif name == "a_desc":
            sig[name] = f"tensordesc<{dtype}[{bm}, {bk}]>" if plan.tma else f"*{dtype}"
        elif name == "b_desc":
            sig[name] = f"tensordesc<{dtype}[{bk}, {bn}]>" if plan.tma else f"*{dtype}"
        elif name == "ws_ptr":
            sig[name] = "*fp32"
            attrs[(i,)] = [["tt.divisibility", 16]]
        elif name in ("lock_ptr", "flag_ptr"):
            sig[name] = "*i32"
            attrs[(i,)] = [["tt.divisibility", 16]]
        elif name in ints:
            spec = _int_spec(ints[name])
            if spec == "one":
                sig[name] = "constexpr"
                consts[name] = 1
            else:
                sig[name] = "i32"
                if spec == "div16":
                    attrs[(i,)] = [["tt.divisibility", 16]]
        else:
            sig[name] = "constexpr"
    compiled = triton.compile(ASTSource(fn=kernel, signature=sig, constexprs=consts, attrs=attrs),
                              target=GPUTarget("cuda", 90, 32),
                              options={"num_warps": plan.num_warps, "num_stages": plan.num_stages})
    ptx = compiled.asm["ptx"]
    regs, spills = _ptxas_usage(ptx)
    threads = 32 * plan.num_warps
    smem = compiled.metadata.shared
    occ = sm_occupancy("H200 SXM", threads, regs, smem, opt_in=True)
    return {"kernel": plan.kernel, "tma": plan.tma, "tile": f"{bm}x{bn}x{bk}", "split_k": split,
            "warps": plan.num_warps, "stages": plan.num_stages, "registers": regs, "spill_bytes": spills,
            "shared_memory_bytes": smem, "threads": threads, "blocks_per_sm": occ.blocks_per_sm,
            "wgmma": "wgmma" in ptx, "tma_loads": "cp.async.bulk.tensor" in ptx,
            "cp_async": "cp.async.cg" in ptx or "cp.async.ca" in ptx}


def _ptxas_usage(ptx: str) -> tuple[int, int]:
    """(registers per thread, spilled bytes: stores + loads) from ``ptxas -v`` on ``ptx``."""
    from triton.backends.nvidia.compiler import get_ptxas

    try:
        ptxas = get_ptxas(90)  # Triton 3.9: the ptxas for an architecture
    except TypeError:
        ptxas = get_ptxas()
    path = ptxas.path if hasattr(ptxas, "path") else ptxas[0]
    arch = re.search(r"\.target\s+(sm_\w+)", ptx).group(1)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        out = subprocess.run([path, f"-arch={arch}", "-v", src, "-o", os.path.join(tmp, "k.cubin")],
                             capture_output=True, text=True, check=True)
    text = out.stderr + out.stdout
    regs = int(re.search(r"Used (\d+) registers", text).group(1))
    spills = sum(int(x) for x in re.findall(r"(\d+) bytes spill (?:stores|loads)", text))
    return regs, spills


def family_plans(sm_count: int = 132):
    """(m, n, k, plan) the dispatch takes for every shape of the family ``matmul_small``."""
    from gpuperf.benchmark.family import matmul_small
    from gpuperf.kernels import matmul_splitk as mks

    seen = []
    for _, _, m, n, k in matmul_small.shapes(dtypes=("bf16",)):
        seen.append((m, n, k, mks.plan_matmul(m, n, k, sm_count)))
    return seen


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--dtype", default="bf16")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    rows = []
    for m, n, k, plan in family_plans():
        row = {"m": m, "n": n, "k": k, "plan": repr(plan)}
        if plan.kernel in ("splitk", "streamk"):
            row.update(compile_plan(plan, m, n, k, args.dtype))
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
