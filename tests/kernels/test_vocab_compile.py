"""The vocabulary kernels (softmax "rows", "stream" and its split form, cross-entropy and its split form)
compile for sm_90 on a machine without a GPU, and their row bodies move 16-byte vectors: rows of odd
length start at odd addresses, and only the aligned body (and lengths made visible as multiples of the
vector) keeps the loads and stores wide. Compiled in a subprocess with the interpreter off (the
``compiled_check`` fixture of tests/kernels/conftest.py)."""

import pytest

pytest.importorskip("triton")

SCRIPT = r'''
import re
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import gpuperf.kernels.cross_entropy as ce
import gpuperf.kernels.softmax as sm

assert not sm.INTERPRETED
target = GPUTarget("cuda", 90, 32)
aligned = lambda *idx: {(i,): [["tt.divisibility", 16]] for i in idx}  # as a launch specialises pointers
i32 = lambda *names: {n: "i32" for n in names}
const = lambda *names: {n: "constexpr" for n in names}
cases = [
    (sm._rows_kernel, {"X": "*fp16", "Y": "*fp16", **i32("n_rows", "n_cols_v", "stride_xv", "stride_yv"),
                       **const("BLOCK", "ROWS", "VEC")}, {"BLOCK": 1024, "ROWS": 4, "VEC": 8}, (0, 1), 4),
    (sm._stream_kernel, {"X": "*fp16", "Y": "*fp16", **i32("n_rows", "n_cols", "stride_x", "stride_y", "mis_x",
                                                          "mis_y"), **const("BLOCK", "VEC", "Y_ALIGNED", "NUM_STAGES")},
     {"BLOCK": 4096, "VEC": 8, "Y_ALIGNED": True, "NUM_STAGES": 3}, (0, 1), 8),
    (sm._stream_split_kernel, {"X": "*fp16", "Y": "*fp16", "PM": "*fp32", "PL": "*fp32", "SEM": "*i32",
                               **i32("n_rows", "n_cols", "stride_x", "stride_y", "mis_x", "mis_y", "chunk_cols",
                                     "n_chunks", "n_groups"),
                               **const("BLOCK", "VEC", "Y_ALIGNED", "NUM_STAGES", "PB", "PHASE")},
     {"BLOCK": 4096, "VEC": 8, "Y_ALIGNED": True, "NUM_STAGES": 3, "PB": 8, "PHASE": 0}, (0, 1, 2, 3, 4), 8),
]
ce_sig = {"X": "*bf16", "G": "*bf16", "T": "*i64", "LOSS": "*fp32", "LSE": "*fp32", "N_VALID": "*fp32",
          **i32("n_rows", "n_cols", "stride_x", "stride_g", "mis_x", "mis_g", "ignore_index"), "smoothing": "fp32"}
for smooth in (False, True):
    cases.append((ce._ce_kernel, {**ce_sig, **const("BLOCK", "VEC", "GRAD", "SMOOTH", "MEAN", "G_ALIGNED",
                                                   "NUM_STAGES", "EXACT")},
                  {"BLOCK": 4096, "VEC": 8, "GRAD": True, "SMOOTH": smooth, "MEAN": True, "G_ALIGNED": True,
                   "NUM_STAGES": 3, "EXACT": False}, (0, 1, 2, 3, 4, 5), 8))
    cases.append((ce._ce_split_kernel, {**ce_sig, "PM": "*fp32", "PL": "*fp32", "PS": "*fp32", "SEM": "*i32",
                                        **i32("chunk_cols", "n_chunks", "n_groups"),
                                        **const("BLOCK", "VEC", "SMOOTH", "MEAN", "G_ALIGNED", "NUM_STAGES", "PB",
                                                "PHASE")},
                  {"BLOCK": 4096, "VEC": 8, "SMOOTH": smooth, "MEAN": True, "G_ALIGNED": True, "NUM_STAGES": 3,
                   "PB": 8, "PHASE": 0}, tuple(range(10)), 8))
for kernel, sig, consts, ptrs, warps in cases:
    ptx = triton.compile(ASTSource(fn=kernel, signature=sig, constexprs=consts, attrs=aligned(*ptrs)),
                         target=target, options={"num_warps": warps}).asm["ptx"]
    wide_loads = "ld.global.v4.b32" in ptx or "cp.async.cg.shared.global" in ptx
    assert wide_loads and "st.global.v4.b32" in ptx, kernel.fn.__name__
print("ok")
'''


def test_vocabulary_kernels_compile_for_sm90_with_16_byte_vectors(compiled_check):
    compiled_check(SCRIPT)
