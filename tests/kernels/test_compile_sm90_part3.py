"""The kernels chapters 06-08 list (fused chain, vector add, portable and TMA matmul) compile for an
H100/H200 (sm_90) on a machine without a GPU, as they are listed (see test_compile_sm90.py for why a
subprocess with the interpreter off)."""

import pytest

pytest.importorskip("triton")

SCRIPT = r'''
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import gpuperf.kernels.elementwise as ew
import gpuperf.kernels.matmul as mm

assert not ew.INTERPRETED and not mm.INTERPRETED
target = GPUTarget("cuda", 90, 32)
sig = {"x_ptr": "*bf16", "out_ptr": "*bf16", "n_elements": "i64", "scale": "fp32", "shift": "fp32",
       "K_OPS": "constexpr", "BLOCK_SIZE": "constexpr"}
triton.compile(ASTSource(fn=ew._chain_kernel, signature=sig, constexprs={"K_OPS": 8, "BLOCK_SIZE": 1024}),
               target=target, options={"num_warps": 4})
sig = {"x_ptr": "*fp16", "y_ptr": "*fp16", "out_ptr": "*fp16", "n_elements": "i64", "BLOCK_SIZE": "constexpr"}
triton.compile(ASTSource(fn=ew._add_kernel, signature=sig, constexprs={"BLOCK_SIZE": 1024}), target=target,
               options={"num_warps": 4})
ints = ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn")
const = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "INPUT_PRECISION": "tf32"}
sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", **{n: "i32" for n in ints},
       **{k: "constexpr" for k in const}}
triton.compile(ASTSource(fn=mm._matmul_kernel, signature=sig, constexprs=const), target=target,
               options={"num_warps": 8, "num_stages": 3})
for tile in (mm.TMA_LARGE_CONFIG, mm.TMA_SMALL_CONFIG):
    bm, bn, bk, group_m, stages, warps, split = tile
    const = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": group_m, "NUM_PROGRAMS": 132,
             "SPLIT_EPILOGUE": split, "WARP_SPECIALIZE": False}
    sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32",
           **{k: "constexpr" for k in const}}
    triton.compile(ASTSource(fn=mm._matmul_tma_kernel, signature=sig, constexprs=const), target=target,
                   options={"num_warps": warps, "num_stages": stages})
print("ok")
'''


def test_listed_part3_kernels_compile_for_sm90(compiled_check):
    compiled_check(SCRIPT)
