"""The Flash-Decoding kernels compile for an H100/H200 (sm_90) on a machine without a GPU, with the
launches the wrapper makes: contiguous and paged caches, causal or not, the merge fused or in its own
kernel, and the integer arguments a CUDA build turns into constants when they equal 1 (one KV head, one
query row). With strides divisible by 16, as a launch specialises them, the K and V tiles load through
cp.async (the software pipeline) and the atomic counter of the fused merge is acquire-release."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")

SCRIPT = r'''
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import gpuperf.kernels.decode as dk

assert not dk.INTERPRETED
target = GPUTarget("cuda", 90, 32)
kernel = dk._split_kernel
pointers = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "BT": "*i32", "SEQLENS": "*i32", "O": "*fp16",
            "LSE": "*fp32", "MID_O": "*fp32", "MID_LSE": "*fp32", "COUNTER": "*i32"}
strides = [n for n in kernel.arg_names if n.startswith("stride_") and n != "stride_btb"]
for paged, in_page, causal, fused, group, unit in ((False, False, False, True, 1, False),
                                                   (True, True, True, False, 4, True),
                                                   (True, False, False, True, 8, True)):
    const = {"GROUP": group, "HEAD_DIM": 128, "BLOCK_M": 16, "BLOCK_N": 64, "PAGED": paged,
             "PAGE_SIZE": 256 if in_page else 16, "TILE_IN_PAGE": in_page, "CAUSAL": causal,
             "SPLIT": fused, "FUSED_MERGE": fused}
    if unit:
        const.update(H_KV=1, N_Q=1)
    sig = dict(pointers)
    for n in kernel.arg_names:
        if n not in sig:
            sig[n] = "constexpr" if n in const else ("fp32" if n == "qk_scale" else "i32")
    attrs = {(i,): [["tt.divisibility", 16]] for i, n in enumerate(kernel.arg_names)
             if n in pointers or n in strides}
    out = triton.compile(ASTSource(fn=kernel, signature=sig, constexprs=const, attrs=attrs), target=target,
                         options={"num_warps": 4, "num_stages": 3})
    ptx = out.asm["ptx"]
    assert "cp.async" in ptx, const
    assert ("atom.global.gpu.acq_rel.add" in ptx) == fused, const
merge = dk._merge_kernel
const = {"GROUP": 4, "HEAD_DIM": 128, "SPLIT_BLOCK": 32}
sig = {"MID_O": "*fp32", "MID_LSE": "*fp32", "O": "*fp16", "LSE": "*fp32"}
sig.update({n: ("constexpr" if n in const else "i32") for n in merge.arg_names if n not in sig})
triton.compile(ASTSource(fn=merge, signature=sig, constexprs=const), target=target, options={"num_warps": 4})
print("ok")
'''


@pytest.mark.redundant_on_gpu
def test_decode_kernels_compile_for_sm90():
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "TRITON_INTERPRET": "0", "PYTHONPATH": str(root / "lib")}
    try:
        out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env,
                             timeout=600)
    except subprocess.TimeoutExpired:
        pytest.fail("compiling the decode kernels for sm_90 took more than 600 s")
    if out.returncode != 0 and "ptxas" in out.stderr and "not found" in out.stderr:
        pytest.skip("this Triton build has no ptxas")
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]
