"""The live reads of chapters 02 and 04 (gpuperf.kernels.streaming) compile for the H200 (sm_90) and for
Colab's T4 (sm_75) on a machine without a GPU, and the streaming read issues every 16-byte load of a tile
before it uses one (the bytes in flight the chapter counts). Compiled in a subprocess with the interpreter
off (the ``compiled_check`` fixture of tests/kernels/conftest.py)."""

import pytest

pytest.importorskip("triton")

SCRIPT = r'''
import re
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import gpuperf.kernels.streaming as s

assert not s.INTERPRETED
for cc in (90, 75):
    target = GPUTarget("cuda", cc, 32)
    for loads in (1, 2, 4):
        block = 128 * 4 * loads  # 4 warps, `loads` 16-byte vectors per thread
        sig = {"X": "*i32", "Out": "*i32", "n_iters": "i32", "BLOCK": "constexpr"}
        attrs = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}
        ptx = triton.compile(ASTSource(fn=s._stream_read_kernel, signature=sig, constexprs={"BLOCK": block},
                                       attrs=attrs),
                             target=target, options={"num_warps": 4, "num_stages": 1}).asm["ptx"]
        vec = re.findall(r"ld\.global(?:\.\w+)*\.v4\.b32", ptx)
        assert len(vec) == loads, (cc, loads, len(vec))
        lines = [l.strip() for l in ptx.splitlines()]
        first_xor = next(i for i, l in enumerate(lines) if l.startswith("xor.b32"))
        last_load = max(i for i, l in enumerate(lines) if "ld.global" in l)
        assert last_load < first_xor, (cc, loads)  # every load of a tile issued before the first use
    sig = {"X": "*i32", "Out": "*i32", "stride": "i32", "BLOCK": "constexpr"}
    triton.compile(ASTSource(fn=s._strided_read_kernel, signature=sig, constexprs={"BLOCK": 1024}),
                   target=target, options={"num_warps": 4})
print("ok")
'''


def test_streaming_kernels_compile_for_the_h200_and_the_t4(compiled_check):
    compiled_check(SCRIPT)
