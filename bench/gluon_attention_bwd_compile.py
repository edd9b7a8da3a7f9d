"""Registers, spills and shared memory of the backward kernels compiled for sm_90 on a machine without a GPU.

Usage (repository root, PYTHONPATH=lib; needs Triton with Gluon and ``GluonASTSource``, 3.9 here)::

    TRITON_INTERPRET=0 python bench/gluon_attention_bwd_compile.py [OUT_DIR]

Compiles, for d = 64 and 128, with and without the causal mask, in bf16: the Triton dK/dV kernel of
:mod:`gpuperf.kernels.flash_attention_bwd` with the library's default launch, and the Gluon kernel of
:mod:`gpuperf.kernels.gluon_attention_bwd` in each schedule (plain, warp-specialised). For each it reads
from the cubin (``cuobjdump -res-usage`` and ``-sass``) the registers per thread, the stack bytes (where
spilled registers go), the register limits the partitions set (``USETMAXREG``) and the shared memory.
With ``OUT_DIR`` it saves the record ``attention_backward_gluon_compile_sm90`` there. Nothing runs: this
is what the compiler made, not a measurement of time.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

os.environ.setdefault("TRITON_INTERPRET", "0")
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import torch  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from triton.runtime.jit import mangle_type  # noqa: E402

from gpuperf.benchmark.compiled import cuda_tool  # noqa: E402
from gpuperf.kernels import flash_attention_bwd as fab  # noqa: E402
from gpuperf.kernels import gluon_attention_bwd as gab  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
ALIGNED = [["tt.divisibility", 16]]

def _config(d: int, specialise: bool, dq_transposed: bool) -> tuple:
    block_n, block_m, stages, warps, _, _, lse_vec = gab.CONFIGS[d]
    if dq_transposed and d == 128:
        block_m = 32  # dQ^T's accumulator then takes as many registers as S^T's
    return (block_n, block_m, stages, warps, specialise, dq_transposed, lse_vec)


#: Gluon schedules compiled: name -> config per head dimension: the default launch, warp-specialised, and
#: both with dQ computed transposed (dQ^T = K^T dS^T; 32-query blocks at d = 128).
SCHEDULES = {name: {d: _config(d, ws, dqt) for d in gab.HEAD_DIMS}
             for name, ws, dqt in (("plain", False, False), ("warp-specialised", True, False),
                                   ("plain, dQ^T", False, True), ("warp-specialised, dQ^T", True, True))}


def cubin_facts(cubin: bytes) -> dict:
    """Registers per thread, stack bytes and the sorted ``USETMAXREG`` limits of a cubin's kernel."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        res = subprocess.run([cuda_tool("cuobjdump"), "-res-usage", f.name], capture_output=True, text=True,
                             check=True).stdout
        sass = subprocess.run([cuda_tool("cuobjdump"), "-sass", f.name], capture_output=True, text=True,
                              check=True).stdout
    limits = sorted({int(v, 16) for v in re.findall(
        r"USETMAXREG\.\w+(?:\.\w+)*\s+(?:UP\d,\s*)?0x([0-9a-f]+)", sass)})
    return {"registers": int(re.search(r"REG:(\d+)", res).group(1)),
            "stack_bytes": int(re.search(r"STACK:(\d+)", res).group(1)), "partition_limits": limits,
            "local_loads": len(re.findall(r"\bLDL\b", sass)), "local_stores": len(re.findall(r"\bSTL\b", sass))}


def compile_gluon(d: int, causal: bool, config: tuple, dtype=torch.bfloat16) -> dict:
    block_n, block_m, stages, warps, specialise, dq_t, lse_vec = config
    name = {torch.float16: "fp16", torch.bfloat16: "bf16"}[dtype]
    x = torch.empty(2, 2, 256, d, dtype=dtype)
    descs = gab.make_descriptors(x, x, x, x, block_m, block_n)
    const = dict(HEAD_DIM=d, BLOCK_M=block_m, BLOCK_N=block_n, STAGES=stages, CAUSAL=causal, WARPS=warps,
                 SPECIALISE=specialise, WS_LIST_API=gab._WS_LIST_API, PRODUCER_REGS=gab.PRODUCER_REGS,
                 DQ_T=dq_t, LSE_VEC=lse_vec, DS_SWIZZLE=gab.ds_swizzle(block_m))
    sig = {"q_desc": mangle_type(descs[0]), "k_desc": mangle_type(descs[1]), "v_desc": mangle_type(descs[2]),
           "do_desc": mangle_type(descs[3]), "lse_ptr": "*fp32", "delta_ptr": "*fp32", "dq_ptr": "*fp32",
           "dk_ptr": f"*{name}", "dv_ptr": f"*{name}", "n_q": "i32", "n_k": "i32", "qk_scale_log2": "fp32",
           "softmax_scale": "fp32", **{k: "constexpr" for k in const}}
    from triton.experimental.gluon import GluonASTSource

    attrs = {(i,): ALIGNED for i in (4, 5, 6, 7, 8)}
    k = triton.compile(GluonASTSource(fn=gab._bwd_kernel, signature=sig, constexprs=const, attrs=attrs),
                       target=TARGET, options=gab.launch_options(specialise, warps))
    return {**cubin_facts(k.asm["cubin"]), "shared_bytes": k.metadata.shared,
            "warps": warps + (4 if specialise else 0), "tile": f"{block_n} keys x {block_m} queries"}


def compile_triton_dkdv(d: int, causal: bool) -> dict:
    cfg = fab.GPU_CONFIGS[d, causal]
    const = dict(CAUSAL=causal, BLOCK_M=cfg.dkdv_block_m, BLOCK_N=cfg.dkdv_block_n, HEAD_DIM=d,
                 FUSED_DQ=cfg.fused, USE_TMA=cfg.tma, PRECISION="default")
    ptrs = ["q_ptr", "k_ptr", "v_ptr", "do_ptr", "lse_ptr", "delta_ptr", "dk_ptr", "dv_ptr", "dq_acc_ptr"]
    types = ["*bf16"] * 4 + ["*fp32"] * 2 + ["*bf16"] * 2 + ["*fp32"]
    sig = {**dict(zip(ptrs, types)), "n_q": "i32", "n_k": "i32", "qk_scale_log2": "fp32",
           "softmax_scale": "fp32", **{k: "constexpr" for k in const}}
    attrs = {(i,): ALIGNED for i in range(9)}
    attrs.update({(9,): ALIGNED, (10,): ALIGNED})  # N a multiple of 16, as at the benchmark's shapes
    k = triton.compile(ASTSource(fn=fab._dkdv_kernel, signature=sig, constexprs=const, attrs=attrs),
                       target=TARGET, options={"num_warps": cfg.num_warps, "num_stages": cfg.num_stages})
    return {**cubin_facts(k.asm["cubin"]), "shared_bytes": k.metadata.shared, "warps": cfg.num_warps,
            "tile": f"{cfg.dkdv_block_n} keys x {cfg.dkdv_block_m} queries"}


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", help="save the record attention_backward_gluon_compile_sm90 here")
    args = parser.parse_args(argv)
    rows = []
    for d in gab.HEAD_DIMS:
        for causal in (False, True):
            mask = "causal" if causal else "full"
            jobs = [("Triton dK/dV", "default", lambda: compile_triton_dkdv(d, causal))]
            jobs += [("Gluon", name, lambda cfg=cfgs[d]: compile_gluon(d, causal, cfg))
                     for name, cfgs in SCHEDULES.items()]
            for kernel, schedule, fn in jobs:
                row = {"kernel": kernel, "schedule": schedule, "head_dim": d, "mask": mask, "dtype": "bf16",
                       **fn()}
                rows.append(row)
                print(row, flush=True)
    if args.out_dir:
        from gpuperf.records import provenance, save_run

        prov = provenance("TRITON_INTERPRET=0 python bench/gluon_attention_bwd_compile.py OUT_DIR")
        prov["target"] = "sm_90, compiled on a machine without a GPU (cuobjdump of the cubin); nothing ran"
        print("record:", save_run("attention_backward_gluon_compile_sm90", rows, prov, data_dir=args.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
