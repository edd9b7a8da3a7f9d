"""The Triton kernels of Part IV compile for an H100/H200 (sm_90) on a machine without a GPU.

The interpreter that runs the kernels on a CPU does not compile them, so it misses compile-time errors: a
CUDA build specialises an integer argument equal to 1 into a Python constant, and a kernel that calls
``.to()`` on it compiles for every shape but 1 x 1 (found on the H200 in job fa-3, bench/NOTES.md).
``triton.compile`` with a ``GPUTarget`` needs no GPU; the check runs in a subprocess with the interpreter
off, because a kernel module fixes its mode when it is imported.
"""

import pytest

pytest.importorskip("triton")

SCRIPT = r'''
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import gpuperf.kernels.flash_attention as fa
import gpuperf.kernels.softmax as sm

assert not sm.INTERPRETED and not fa.INTERPRETED
target = GPUTarget("cuda", 90, 32)
ints = ("n_rows", "n_cols", "stride_x", "stride_y")
for kernel, extra in ((sm._online_kernel, {"BLOCK": 256, "NUM_STAGES": 4}),
                      (sm._three_pass_kernel, {"BLOCK": 256}),
                      (sm._fused_kernel, {"BLOCK": 1, "EVEN": True})):
    names = [n for n in ints if n in kernel.arg_names]
    for unit in (False, True):  # every integer argument a run-time value, or the constant 1
        sig = {"X": "*fp16", "Y": "*fp16", **{n: "constexpr" if unit else "i32" for n in names},
               **{k: "constexpr" for k in extra}}
        const = {**extra, **({n: 1 for n in names} if unit else {})}
        triton.compile(ASTSource(fn=kernel, signature=sig, constexprs=const), target=target,
                       options={"num_warps": 4})
# Rows not a multiple of 16 long: the aligned body loads and stores 16 bytes at a time (the head and tail
# are scalar), in fp16 (8 per vector) and fp32 (4).
for dtype, vec in (("fp16", 8), ("fp32", 4)):
    sig = {"X": f"*{dtype}", "Y": f"*{dtype}", "n_cols": "i32", "stride": "i32", "BLOCK": "constexpr",
           "VEC": "constexpr"}
    aligned = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}  # as a launch specialises
    src = ASTSource(fn=sm._fused_body_kernel, signature=sig, constexprs={"BLOCK": 4096, "VEC": vec},
                    attrs=aligned)
    ptx = triton.compile(src, target=target, options={"num_warps": 8}).asm["ptx"]
    assert "ld.global.v4.b32" in ptx and "st.global.v4.b32" in ptx, dtype
for causal in (False, True):
    const = {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64, "CAUSAL": causal, "INPUT_PRECISION": "ieee"}
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp16", "LSE": "*fp32", "H": "i32",
           "N_Q": "i32", "N_K": "i32", "qk_scale": "fp32", **{k: "constexpr" for k in const}}
    triton.compile(ASTSource(fn=fa._fwd_kernel_tma, signature=sig, constexprs=const), target=target,
                   options={"num_warps": 8, "num_stages": 3})
# The Hopper default (host-built TMA descriptors): every launch of HOPPER_CONFIGS compiles, with and
# without the masked loop, and its shared memory fits one block on an H100/H200.
from gpuperf.hardware import get_sm_limits

smem_max = get_sm_limits("H200 SXM").max_shared_memory_per_block_bytes
for (d, causal), entries in fa.HOPPER_CONFIGS.items():
    for _, cfg in entries:
        bm, bn = cfg.block_m, cfg.block_n
        for even_k, ragged in [(e, r) for e in ((False,) if causal else (False, True)) for r in (False, True)]:
            const = {"HEAD_DIM": d, "BLOCK_M": bm, "BLOCK_N": bn, "CAUSAL": causal, "EVEN_K": even_k,
                     "RAGGED_Q": ragged}
            qo = f"tensordesc<fp16[1, {bm}, {d}]>" if ragged else f"tensordesc<fp16[{bm}, {d}]>"
            sig = {"desc_q": qo, "desc_k": f"tensordesc<fp16[{bn}, {d}]>",
                   "desc_v": f"tensordesc<fp16[{bn}, {d}]>", "desc_o": qo,
                   "LSE": "*fp32", "N_Q": "i32", "N_K": "i32", "qk_scale": "fp32",
                   **{k: "constexpr" for k in const}}
            opts = {"num_warps": cfg.num_warps, "num_stages": cfg.num_stages,
                    **({"maxnreg": cfg.maxnreg} if cfg.maxnreg else {})}
            compiled = triton.compile(ASTSource(fn=fa._fwd_kernel_desc, signature=sig, constexprs=const),
                                      target=target, options=opts)
            assert compiled.metadata.shared <= smem_max, (d, causal, cfg, compiled.metadata.shared)
print("ok")
'''


def test_kernels_compile_for_sm90(compiled_check):
    compiled_check(SCRIPT)


REDUCTION_SCRIPT = r'''
import re
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import gpuperf.kernels.softmax as sm
from gpuperf.attention import row_reduction

n, warps = 4096, sm._fused_num_warps(4096)
sig = {"X": "*fp16", "Y": "*fp16", "n_cols": "i32", "stride_x": "i32", "stride_y": "i32",
       "BLOCK": "constexpr", "EVEN": "constexpr"}
ptx = triton.compile(ASTSource(fn=sm._fused_kernel, signature=sig,
                               constexprs={"BLOCK": n, "EVEN": True}),
                     target=GPUTarget("cuda", 90, 32), options={"num_warps": warps}).asm["ptx"]
offsets = [int(m) for m in re.findall(r"shfl\.sync\.bfly\.b32\s+%r\d+, %r\d+, (\d+),", ptx)]
plan = row_reduction(n, warps)
in_warp = [2 ** i for i in reversed(range(plan.shuffle_steps))]
across = [2 ** i for i in reversed(range(plan.cross_warp_steps))]
assert offsets == 2 * (in_warp + across), offsets  # two reductions: the max, then the sum
assert len(re.findall(r"\bst\.shared", ptx)) == 2 and len(re.findall(r"\bld\.shared", ptx)) == 2
print("ok")
'''


def test_fused_softmax_reduction_is_shuffles_then_shared_memory(compiled_check):
    """Chapter 13 describes tl.max / tl.sum over a 4096-value row on 8 warps as five butterfly shuffles in
    each warp, one trip through shared memory and three more shuffles; the sm_90 PTX must say the same."""
    compiled_check(REDUCTION_SCRIPT)
